"""nodes/flow/loop: run the container's children pass after pass (N times, or until a condition); on the real kernel."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from nodeflow_app.cli import main
from nodeflow_app.runtime.engine import start_run
from nodes._registry import BUILTIN_ROOT, Registry, load_folder
from nodeflow_app.contract import FlowContext, NodeDefinition, NodeError
from nodes.flow.loop.definition import definition
from nodes.flow.loop.executor import executor
from tests.runtime import toys

EXAMPLES = Path(__file__).parents[1] / "fixtures" / "graphs" / "examples"
INSIDE = {"parentId": "lp"}
STEP = NodeDefinition(id="toy-step", name="Step", description="d", category="t",
                      inputs=(toys.DATA_IN,), outputs=(toys.DATA_OUT,))


async def _step(data, inputs, ctx):
    """Adds 1 to `n` (a missing `n` counts as 0); fails on `n == 13`."""
    value = dict(inputs["in"] or {})
    if value.get("n") == 13:
        raise NodeError("unlucky 13")
    value["n"] = value.get("n", 0) + 1
    return {"out": value}


def registry() -> Registry:
    reg = toys.registry((STEP, toys.Toy("toy-step", _step)))
    reg.add(load_folder(BUILTIN_ROOT / "flow" / "loop"))
    return reg


def loop_graph(body: list[tuple], edges: list[str], **loop_data) -> dict:
    """START -> LP (a real Loop holding `body`) -> AFTER."""
    graph = toys.graph([("start", "start"), ("lp", "pass", loop_data), ("after", "pass"), *body],
                       ["start.out -> lp.input", "lp.output -> after.in", *edges],
                       **{spec[0]: INSIDE for spec in body})
    graph["nodes"][1]["type"] = "loop"
    return graph


async def run_loop(graph: dict, payload):
    run = start_run(graph, registry(), payload=payload)
    events = [event async for event in run.events()]
    return run, events


def of(events: list, node_id: str, event_type: str) -> list:
    return [e.data["outputs"] if event_type == "completed" else e.data
            for e in events if e.node_id == node_id and e.event_type == event_type]


#   START ──> LP ──> AFTER
#            ┌─────────────┐
#            │ S1 ──> S2   │   (each step adds 1 to n)
#            └─────────────┘
CHAIN = ([("s1", "step"), ("s2", "step")], ["s1.out -> s2.in"])


async def test_n_times_feeds_each_result_to_the_next_pass_and_collects_them():
    run, events = await run_loop(loop_graph(*CHAIN, times=3), {"n": 0})
    assert run.status == "completed", run.error
    output = {"results": [{"n": 2}, {"n": 4}, {"n": 6}], "count": 3, "last": {"n": 6}, "stopped": "times"}
    assert run.records["lp"].outputs == {"output": output}
    assert run.records["after"].outputs == {"out": output}
    assert of(events, "s2", "completed") == [{"out": {"n": n}} for n in (2, 4, 6)]
    assert [(p["iteration"], p["done"], p["total"], p["message"]) for p in of(events, "lp", "progress")] == [
        (0, 1, 3, "pass 1 of 3"), (1, 2, 3, "pass 2 of 3"), (2, 3, 3, "pass 3 of 3")]


async def test_without_feed_back_every_pass_gets_the_loops_input():
    run, _ = await run_loop(loop_graph(*CHAIN, times=2, feed_back=False), {"n": 10})
    assert run.records["lp"].outputs["output"]["results"] == [{"n": 12}, {"n": 12}]


async def test_until_stops_at_the_first_pass_whose_result_meets_the_condition():
    run, events = await run_loop(loop_graph(*CHAIN, mode="until", field="n", operator="gte", value="7"), {"n": 0})
    assert run.status == "completed", run.error
    assert run.records["lp"].outputs["output"] == {
        "results": [{"n": 2}, {"n": 4}, {"n": 6}, {"n": 8}], "count": 4, "last": {"n": 8}, "stopped": "condition"}
    assert [p["iteration"] for p in of(events, "lp", "progress")] == [0, 1, 2, 3]
    assert of(events, "lp", "progress")[0]["total"] is None


async def test_until_a_regular_expression_matches_the_result():
    run, _ = await run_loop(loop_graph(*CHAIN, mode="until", field="n", operator="regex", value="^6$"), {"n": 0})
    assert run.status == "completed", run.error
    assert run.records["lp"].outputs["output"]["last"] == {"n": 6}


async def test_until_fails_at_the_maximum_unless_told_to_stop_there():
    graph = loop_graph(*CHAIN, mode="until", field="n", operator="lt", value="0", max_iterations=3)
    run, _ = await run_loop(graph, {"n": 0})
    assert run.status == "failed"
    assert run.error == ("node 'LP' failed: the condition did not hold after 3 passes (Maximum passes); "
                         "the last result was '{\"n\":6}'")
    graph = loop_graph(*CHAIN, mode="until", field="n", operator="lt", value="0", max_iterations=2, fail_at_max=False)
    run, _ = await run_loop(graph, {"n": 0})
    assert run.records["lp"].outputs["output"] == {
        "results": [{"n": 2}, {"n": 4}], "count": 2, "last": {"n": 4}, "stopped": "max"}


async def test_a_failing_pass_fails_the_loop_naming_the_pass():
    run, _ = await run_loop(loop_graph([("s", "step")], [], times=20), {"n": 10})
    assert run.status == "failed"
    assert run.error == "node 'LP' failed: pass 3: node 'S' failed: unlucky 13"
    assert run.records["after"].status == "pending"


async def test_a_bad_condition_names_the_pass_and_the_field():
    graph = loop_graph(*CHAIN, mode="until", field="n", operator="gt", value="many")
    run, _ = await run_loop(graph, {"n": 0})
    assert run.error == ("node 'LP' failed: pass 0: the condition on field 'n' of the result: operator 'gt' "
                         "compares numbers, but 'many' is not a number")


@pytest.mark.parametrize("data, message", [
    ({"times": 0}, "parameter 'times' must be a whole number from 1 to 10000, got 0"),
    ({"times": 2.5}, "parameter 'times' must be a whole number from 1 to 10000, got 2.5"),
    ({"mode": "until", "max_iterations": None}, "parameter 'max_iterations' must be a whole number"),
    ({"mode": "forever"}, "parameter 'mode' must be 'times' or 'until', got 'forever'"),
])
async def test_bad_parameters_are_named(data, message):
    """The editor's normalizer refuses most of these on save; an expression can still produce them at run time."""
    ctx = FlowContext(node_id="lp", node_type="loop", run_id="r", runtime=None)
    with pytest.raises(NodeError, match=re.escape(message)):
        await executor.execute({**definition.defaults(), **data}, {"input": {}}, ctx)


async def test_a_loop_with_nothing_inside_says_so():
    run, _ = await run_loop(loop_graph([], [], times=2), {})
    assert run.error == "node 'LP' failed: this Loop has no steps inside it; place the nodes to repeat inside the container"


#   START ──> LP ──> AFTER
#            ┌────┐
#            │ W  │   (0.2 s per pass; the run is cancelled during the first pass)
#            └────┘
async def test_cancelling_the_run_stops_the_loop():
    graph = loop_graph([("w", "slow", {"delay": 0.2})], [], times=5)
    run = start_run(graph, registry(), payload={})
    started = 0
    async for event in run.events():
        if (event.node_id, event.event_type) == ("w", "started"):
            started += 1
            run.cancel()
    assert run.status == "cancelled"
    await asyncio.sleep(0.3)
    assert started == 1


#   Start --> Count to three (Loop: Add one) --> Report
def test_the_example_graph_runs_through_the_cli(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("REFLEX_DB_URL", f"sqlite:///{tmp_path / 'runs.db'}")
    assert main(["run", str(EXAMPLES / "loop.json"), "--json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    progress = [e["data"]["iteration"] for e in lines if e.get("node_id") == "loop" and e.get("event_type") == "progress"]
    assert progress == [0, 1, 2]
    outputs = lines[-1]["outputs"]
    assert outputs["Double until big"]["output"]["last"] == {"value": 16, "steps": 3}
    assert outputs["Double until big"]["output"]["stopped"] == "condition"
    assert outputs["Report"]["output"]["passes"] == 3
