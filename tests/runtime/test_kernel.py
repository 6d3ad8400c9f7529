"""The kernel with toy node types it has never heard of: scheduling, branching, links, controls."""

from __future__ import annotations

import ast
import asyncio
import contextlib
from pathlib import Path

import pytest

from nodeflow_app.runtime.engine import start_run
from nodeflow_app.runtime.graph import GraphInvalid, normalize_or_raise
from nodeflow_app.runtime.plan import compile_plan
from nodeflow_app.runtime import run as run_module
from nodeflow_app.runtime.run import Run, RunError
from nodeflow_app.contract import ExecutionResult, NodeDefinition, NodeError, Option, Parameter, Socket

from tests.runtime import toys

RUNTIME = Path(__file__).resolve().parents[2] / "nodeflow_app" / "runtime"


async def run_graph(graph, registry=None, payload=None, **options):
    run = start_run(graph, registry or toys.registry(), payload=payload, **options)
    events = [e async for e in run.events()]
    return run, events


def kinds(events, node_id):
    return [e.event_type for e in events if e.node_id == node_id]


def link_registry(make, consume, *, out: str = "thing", into: str = "things"):
    """Toy `provider` (materialize only: link output `out`, link input `deps`) and `consumer` (link input `into`)."""
    provider = NodeDefinition(id="toy-provider", name="P", description="d", category="t",
                              inputs=(Socket(id="deps", type="any", channel="link", multiple=True),),
                              outputs=(Socket(id=out, type="any", channel="link"),))
    consumer = NodeDefinition(id="toy-consumer", name="C", description="d", category="t",
                              inputs=(toys.DATA_IN, Socket(id=into, type="any", channel="link", multiple=True)),
                              outputs=(toys.DATA_OUT,))
    return toys.registry((provider, toys.LinkOnly("toy-provider", make)), (consumer, toys.Toy("toy-consumer", consume)))


def test_kernel_imports_no_node_folder_sdk_or_reflex():
    allowed_nodes = {"nodeflow_app.contract"}
    for path in RUNTIME.glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for name in names:
                root = name.split(".")[0]
                assert root not in {"reflex", "agno", "openai", "anthropic", "httpx", "sqlmodel"}, (path, name)
                if root == "nodes":
                    assert name in allowed_nodes, f"{path.name} imports {name}"


#  S --> A --> B --> C
async def test_chain_passes_values_in_order():
    graph = toys.graph([("s", "start"), ("a", "pass"), ("b", "pass"), ("c", "pass")],
                       ["s.out -> a.in", "a.out -> b.in", "b.out -> c.in"])
    run, events = await run_graph(graph, payload={"v": 1})
    assert run.status == "completed"
    assert [e.node_id for e in events if e.event_type == "completed"] == ["s", "a", "b", "c"]
    assert run.outputs_by_name()["C"] == {"out": {"v": 1}}
    completed = next(e for e in events if e.node_id == "c" and e.event_type == "completed")
    assert completed.data["duration_ms"] >= 0 and completed.run_id == run.run_id


#        +--> slow1 --+
#  S ----+            +--> collect(many)
#        +--> slow2 --+
async def test_independent_branches_run_concurrently():
    graph = toys.graph([("s", "start"), ("x", "slow", {"delay": 0.2}), ("y", "slow", {"delay": 0.2}), ("c", "collect")],
                       ["s.out -> x.in", "s.out -> y.in", "x.out -> c.many", "y.out -> c.many"])
    loop = asyncio.get_running_loop()
    started = loop.time()
    run, _ = await run_graph(graph, payload=1)
    assert loop.time() - started < 0.35  # sequential would take 0.4 s
    assert run.outputs_by_name()["C"] == {"out": [1, 1]}


#  S --> gate --yes--> Y --> Y2
#             \-no---> N
async def test_port_without_value_kills_its_branch():
    graph = toys.graph([("s", "start"), ("g", "gate", {"open": False}), ("y", "pass"), ("y2", "pass"), ("n", "pass")],
                       ["s.out -> g.in", "g.yes -> y.in", "y.out -> y2.in", "g.no -> n.in"])
    run, events = await run_graph(graph, payload="p")
    assert kinds(events, "y") == ["skipped"] and kinds(events, "y2") == ["skipped"]
    assert kinds(events, "n") == ["started", "completed"]
    assert run.records["y2"].status == "skipped" and run.status == "completed"
    reasons = {e.node_id: e.data["reason"] for e in events if e.event_type == "skipped"}
    # The skip names the upstream node that decided and the port it took (the kernel knows no "gate").
    assert reasons == {"y": "'G' took no, not yes", "y2": "'Y' was skipped"}


#  S --> gate --yes--> Y --+
#             \-no---> N --+--> collect(many)
async def test_merge_fires_with_what_can_still_arrive():
    graph = toys.graph([("s", "start"), ("g", "gate", {"open": True}), ("y", "pass"), ("n", "pass"), ("c", "collect")],
                       ["s.out -> g.in", "g.yes -> y.in", "g.no -> n.in", "y.out -> c.many", "n.out -> c.many"])
    run, events = await run_graph(graph, payload="only-yes")
    assert run.outputs_by_name()["C"] == {"out": ["only-yes"]}


#  S --> A --+
#   \        +--> B.in   (single-valued input, two live wires)
#    \-> A2 -+
async def test_two_values_at_a_single_input_is_an_error_pointing_to_merge():
    graph = toys.graph([("s", "start"), ("a", "pass"), ("a2", "pass"), ("b", "pass")],
                       ["s.out -> a.in", "s.out -> a2.in", "a.out -> b.in", "a2.out -> b.in"])
    run, events = await run_graph(graph, payload=1)
    assert run.status == "failed"
    assert "2 values arrived at input 'in' of node 'B'" in run.error and "Merge" in run.error


#  S --> A (label = "{{ $('S').item.json.name }} / {{ $json.n }}", count wired from J.value)
async def test_expressions_and_wire_over_inline_value():
    seen = {}

    async def record(data, inputs, ctx):
        seen.update(data)
        return {"out": 1}

    number = NodeDefinition(id="toy-number", name="N", description="d", category="t", inputs=(toys.DATA_IN,),
                            outputs=(Socket(id="value", type="int"),))
    numbers = toys.Toy("toy-number", lambda d, i, c: _const({"value": 7}))
    spy = NodeDefinition(id="toy-spy", name="Spy", description="d", category="t", inputs=(toys.DATA_IN,),
                         outputs=(toys.DATA_OUT,),
                         parameters=(Parameter(id="label", label="L"),
                                     Parameter(id="count", label="C", type="float", mode="hybrid", default=1),
                                     Parameter(id="raw", label="R", type="json")))
    registry = toys.registry((number, numbers), (spy, toys.Toy("toy-spy", record)))
    graph = toys.graph([("s", "start"), ("j", "number"),
                        ("a", "spy", {"label": "{{ $('S').item.json.name }} / {{ $json.n }}", "count": 2,
                                      "raw": "{{ $trigger.json }}"})],
                       ["s.out -> j.in", "s.out -> a.in", "j.value -> a.count"])
    run, _ = await run_graph(graph, registry, payload={"name": "Ada", "n": 3})
    assert run.status == "completed", run.error
    assert seen["label"] == "Ada / 3"
    assert seen["count"] == 7.0 and isinstance(seen["count"], float)  # int wire coerced to the float socket
    assert seen["raw"] == {"name": "Ada", "n": 3}  # a lone expression keeps the raw value


async def _const(value):
    return value


#  S --> A (size = an expression or a wire; an int parameter from 1 to 100)
@pytest.mark.parametrize("given, outcome", [
    ("{{ $json.size }}", 40), ("{{ $json.text }}", 40), ("{{ $json.whole }}", 40), ("{{ $json.point }}", 40),
    ("{{ $json.blank }}", None),  # an empty form field: no value, as the node's "empty" means
    ("{{ $json.nan }}", "parameter 'size': nan is not a number it can use"),
    ("{{ $json.word }}", "parameter 'size': 'forty' is not a whole number"),
    ("{{ $json.big }}", "parameter 'size': 4000 is above the maximum 100"),
    ("{{ $json.half }}", "parameter 'size': expected int, got float 2.5"),
    ("{{ $json.list }}", "parameter 'size': expected int, got list [1]"),
])
async def test_a_number_parameter_an_expression_sets_is_checked_like_one_written_in_the_graph(given, outcome):
    """The graph's own values are checked when it loads; an expression's were not (text reached int())."""
    seen = {}

    async def record(data, inputs, ctx):
        seen.update(data)
        return {"out": 1}

    sized = NodeDefinition(id="toy-sized", name="Sized", description="d", category="t", inputs=(toys.DATA_IN,),
                           outputs=(toys.DATA_OUT,),
                           parameters=(Parameter(id="size", label="Size", type="int", default=10, min=1, max=100),))
    registry = toys.registry((sized, toys.Toy("toy-sized", record)))
    graph = toys.graph([("s", "start"), ("a", "sized", {"size": given})], ["s.out -> a.in"])
    payload = {"size": 40, "text": " 40 ", "whole": 40.0, "point": "40.0", "blank": " ", "nan": "nan", "word": "forty",
               "big": 4000, "half": 2.5, "list": [1]}
    run, _ = await run_graph(graph, registry, payload=payload)
    if outcome is None or isinstance(outcome, int):
        assert run.status == "completed" and seen["size"] == outcome, run.error
        assert type(seen["size"]) is type(outcome)
    else:
        assert run.status == "failed" and run.error == f"node 'A' failed: {outcome}" and seen == {}


#  S --> A (strict = an expression; a boolean parameter)
@pytest.mark.parametrize("given, outcome", [
    ("{{ $json.yes }}", True), ("{{ $json.no }}", False), ("{{ $json.no_text }}", False),
    ("{{ $json.yes_text }}", True), ("{{ $json.none }}", None),
    ("{{ $json.word }}", "parameter 'strict': expected true or false, got str 'nope'"),
    ("{{ $json.zero }}", "parameter 'strict': expected true or false, got int 0"),
    ("{{ $json.list }}", "parameter 'strict': expected true or false, got list []"),
])
async def test_a_boolean_parameter_an_expression_sets_is_true_or_false(given, outcome):
    """A query string's "false" reached the node as text, and every node's `bool(...)` made it true (Database Query's
    Allow writes among them)."""
    seen = {}

    async def record(data, inputs, ctx):
        seen.update(data)
        return {"out": 1}

    strict = NodeDefinition(id="toy-strict", name="Strict", description="d", category="t", inputs=(toys.DATA_IN,),
                            outputs=(toys.DATA_OUT,),
                            parameters=(Parameter(id="strict", label="Strict", type="boolean", default=False),))
    registry = toys.registry((strict, toys.Toy("toy-strict", record)))
    graph = toys.graph([("s", "start"), ("a", "strict", {"strict": given})], ["s.out -> a.in"])
    run, _ = await run_graph(graph, registry, payload={"yes": True, "no": False, "no_text": " False ", "yes_text": "true",
                                                       "none": None, "word": "nope", "zero": 0, "list": []})
    if outcome in (True, False, None):
        assert run.status == "completed" and seen["strict"] is outcome, run.error
    else:
        assert run.status == "failed" and run.error == f"node 'A' failed: {outcome}" and seen == {}


#  S --> A (mode = an expression or a wire; a select of 'fast' or 'slow')
@pytest.mark.parametrize("given, outcome", [
    ("{{ $json.mode }}", "slow"), ("{{ $json.none }}", None),
    ("{{ $json.other }}", "parameter 'mode': 'medium' is not one of 'fast', 'slow'"),
    ("{{ $json.list }}", "parameter 'mode': ['slow'] is not one of 'fast', 'slow'"),
    ("{{ $json.object }}", "parameter 'mode': {'slow': 1} is not one of 'fast', 'slow'"),
])
async def test_a_select_parameter_an_expression_sets_is_one_of_its_options(given, outcome):
    """A node looks a select's value up among its options: a list from an expression ended it with a bare
    "TypeError: unhashable type: 'list'"."""
    seen = {}

    async def record(data, inputs, ctx):
        seen.update(data)
        return {"out": 1}

    chooser = NodeDefinition(id="toy-chooser", name="Chooser", description="d", category="t", inputs=(toys.DATA_IN,),
                             outputs=(toys.DATA_OUT,),
                             parameters=(Parameter(id="mode", label="Mode", type="select", default="fast",
                                                   options=(Option(value="fast"), Option(value="slow"))),))
    registry = toys.registry((chooser, toys.Toy("toy-chooser", record)))
    graph = toys.graph([("s", "start"), ("a", "chooser", {"mode": given})], ["s.out -> a.in"])
    run, _ = await run_graph(graph, registry, payload={"mode": "slow", "none": None, "other": "medium",
                                                       "list": ["slow"], "object": {"slow": 1}})
    if outcome in ("slow", None):
        assert run.status == "completed" and seen["mode"] == outcome, run.error
    else:
        assert run.status == "failed" and run.error == f"node 'A' failed: {outcome}" and seen == {}


#  S --> A --> B (label refers to C, which is not upstream)
#   \--> C
async def test_expression_to_a_node_not_upstream_fails_naming_node_and_parameter():
    graph = toys.graph([("s", "start"), ("a", "pass"), ("c", "slow", {"delay": 0}),
                        ("b", "pass", {"label": "{{ $('C').item.json }}"})],
                       ["s.out -> a.in", "a.out -> b.in", "s.out -> c.in"])
    run, events = await run_graph(graph, payload=1)
    assert run.status == "failed"
    assert "parameter 'label'" in run.error and "'C'" in run.error and "node 'B'" in run.error


#  S --> A (slow) --> B (label refers to C, which ran first but is not upstream of B)
#   \--> C
async def test_expression_to_a_node_that_ran_but_is_not_upstream_says_exactly_that():
    graph = toys.graph([("s", "start"), ("a", "slow", {"delay": 0.05}), ("c", "pass"),
                        ("b", "pass", {"label": "{{ $('C').item.json }}"})],
                       ["s.out -> a.in", "a.out -> b.in", "s.out -> c.in"])
    run, events = await run_graph(graph, payload=1)
    assert run.status == "failed"
    assert "completed" in kinds(events, "c")
    assert run.error == (
        "node 'B' failed: parameter 'label': $('C') — 'C' ran, but it is not upstream of 'B', so its output is "
        "not visible here; wire it (directly or through other nodes) into 'B' at column 4 in {{ $('C').item.json }}")


#  S --> B (label refers to a node that does not exist)
async def test_expression_to_a_missing_node_says_there_is_none():
    graph = toys.graph([("s", "start"), ("b", "pass", {"label": "{{ $('Nope').item.json.x }}"})], ["s.out -> b.in"])
    run, _ = await run_graph(graph, payload=1)
    assert run.status == "failed"
    assert "$('Nope') — there is no node named 'Nope' in this graph" in run.error


#  provider ==thing==> consumer.things (link)  ;  S --> consumer (flow)
#  inner ==thing==> provider.deps (nested materialization)
async def test_links_materialize_once_per_run_nested_and_mixed_with_flow():
    made = []

    async def make(data, handle, ctx):
        made.append((ctx.node_id, handle))
        deps = await ctx.runtime.resolve_links(ctx.node_id, "deps")
        return {"id": ctx.node_id, "deps": deps}

    async def consume(data, inputs, ctx):
        first = await ctx.runtime.resolve_links(ctx.node_id, "things")
        again = await ctx.runtime.resolve_links(ctx.node_id, "things")
        assert first[0] is again[0]  # per-run cache
        return {"out": first}

    registry = link_registry(make, consume)
    graph = toys.graph([("s", "start"), ("k", "consumer"), ("p", "provider"), ("inner", "provider")],
                       ["s.out -> k.in", "p.thing => k.things", "inner.thing => p.deps"])
    run, _ = await run_graph(graph, registry, payload=0)
    assert run.status == "completed", run.error
    assert run.outputs_by_name()["K"] == {"out": [{"id": "p", "deps": [{"id": "inner", "deps": []}]}]}
    assert sorted(made) == [("inner", "thing"), ("p", "thing")]


#  a ==x==> b ==x==> a   (the normalizer refuses it; the kernel still stops it with the path)
async def test_link_cycle_at_runtime_prints_the_path():
    async def make(data, handle, ctx):
        return await ctx.runtime.resolve_links(ctx.node_id, "deps")

    async def consume(data, inputs, ctx):
        return {"out": await ctx.runtime.resolve_links(ctx.node_id, "deps")}

    registry = link_registry(make, consume, out="x", into="deps")
    raw = toys.graph([("s", "start"), ("k", "consumer"), ("a", "provider"), ("b", "provider")],
                     ["s.out -> k.in", "a.x => k.deps", "a.x => b.deps", "b.x => a.deps"])
    with pytest.raises(GraphInvalid, match="link_cycle"):
        normalize_or_raise(raw, registry)
    graph = normalize_or_raise({**raw, "edges": raw["edges"][:2]}, registry)
    graph.edges.extend(normalize_or_raise(raw | {"edges": [raw["edges"][0], raw["edges"][2]]}, registry).edges[1:])
    graph.edges.append(graph.edges[1].model_copy(update={"id": "back", "source": "b", "target": "a"}))
    run = Run(compile_plan(graph, registry), "s", None)
    await run.run()
    assert run.status == "failed"
    assert "link cycle: A.x -> B.x -> A.x" in run.error


#  S --> boom --> A      error modes: stop | continue | error_output (boom.error --> E)
@pytest.mark.parametrize("mode", ["stop", "continue", "error_output"])
async def test_error_modes(mode):
    graph = toys.graph([("s", "start"), ("b", "boom", {"label": "bad"}), ("a", "pass"), ("e", "pass")],
                       ["s.out -> b.in", "b.out -> a.in"] + (["b.error -> e.in"] if mode == "error_output" else []),
                       b={"settings": {"error_mode": mode}})
    run, events = await run_graph(graph, payload=1)
    assert any(e.event_type == "error" and "boom: bad" in e.data["error"] for e in events)
    if mode == "stop":
        assert run.status == "failed" and run.error == "node 'B' failed: boom: bad"
    elif mode == "continue":
        assert run.status == "completed"
        assert run.outputs_by_name()["A"] == {"out": {"error": "boom: bad"}}
    else:
        assert run.outputs_by_name()["E"] == {"out": {"error": "boom: bad", "node": "B"}}
        assert kinds(events, "a") == ["skipped"]


async def test_retry_policy_retries_before_error_routing():
    attempts = []

    async def flaky(data, inputs, ctx):
        attempts.append(1)
        if len(attempts) < 3:
            raise RuntimeError("transient")
        return {"out": "ok"}

    flaky_def = NodeDefinition(id="toy-flaky", name="F", description="d", category="t", inputs=(toys.DATA_IN,),
                               outputs=(toys.DATA_OUT,))
    registry = toys.registry((flaky_def, toys.Toy("toy-flaky", flaky)))
    retry = {"max_attempts": 3, "initial_interval": 0.01, "backoff_factor": 2, "max_interval": 0.02}
    graph = toys.graph([("s", "start"), ("f", "flaky")], ["s.out -> f.in"], f={"settings": {"retry": retry}})
    run, events = await run_graph(graph, registry, payload=1)
    assert run.status == "completed" and len(attempts) == 3
    assert [e.data["attempt"] for e in events if e.event_type == "progress"] == [1, 2]


async def test_timeout_is_a_node_error():
    graph = toys.graph([("s", "start"), ("w", "slow", {"delay": 5})], ["s.out -> w.in"],
                       w={"settings": {"timeout": 0.05}})
    run, _ = await run_graph(graph, payload=1)
    assert run.status == "failed" and "timed out after 0.05 s" in run.error


async def test_cancel_stops_in_flight_nodes():  # W goes on in S's task (see Run._execute): cancelled all the same
    graph = toys.graph([("s", "start"), ("w", "slow", {"delay": 5}), ("a", "pass")], ["s.out -> w.in", "w.out -> a.in"])
    run = start_run(graph, toys.registry(), payload=1)
    seen = []
    async for event in run.events():
        seen.append((event.node_id, event.event_type))
        if (event.node_id, event.event_type) == ("w", "started"):
            run.cancel()
    assert run.status == "cancelled"
    assert ("w", "cancelled") in seen and not any(n == "a" for n, _ in seen)


#  S --> ask --yes--> Y
#   \        \-no---> N
#    \--> slow --> P        (goes on while ask waits)
async def test_pause_lets_other_branches_finish_and_resume_continues():
    graph = toys.graph([("s", "start"), ("q", "ask"), ("y", "pass"), ("n", "pass"), ("w", "slow", {"delay": 0.01}),
                        ("p", "pass")],
                       ["s.out -> q.in", "q.yes -> y.in", "q.no -> n.in", "s.out -> w.in", "w.out -> p.in"])
    run, events = await run_graph(graph, payload="x")
    assert run.status == "paused" and run.paused_nodes() == ["q"]
    paused = next(e for e in events if e.event_type == "paused")
    assert paused.data["prompt"] == "yes or no?" and paused.data["options"] == ["yes", "no"]
    assert run.records["p"].status == "completed" and run.records["y"].status == "pending"
    with pytest.raises(RunError, match="not waiting"):
        [e async for e in run.resume("y", "yes")]
    rest = [e async for e in run.resume("q", "no")]
    assert run.status == "completed"
    assert kinds(rest, "q") == ["resumed", "started", "completed"]
    assert kinds(rest, "y") == ["skipped"] and run.outputs_by_name()["N"] == {"out": "x"}


#  S --> ask --yes--> Y        (this ask says which answers it takes)
#            \-no---> N
async def test_an_answer_the_node_refuses_keeps_the_run_paused():
    """A mistyped answer failed the run on every path but the API's; the node's check refuses it first."""

    class Checking(toys.Toy):
        def answer_problem(self, payload):
            return None if payload in ("yes", "no") else f"answer 'yes' or 'no', not {payload!r}"

    ask = toys.definitions()["ask"][0].model_copy(update={"id": "toy-picky", "name": "Picky"})
    graph = toys.graph([("s", "start"), ("q", "picky"), ("y", "pass"), ("n", "pass")],
                       ["s.out -> q.in", "q.yes -> y.in", "q.no -> n.in"])
    run, _ = await run_graph(graph, toys.registry((ask, Checking("toy-picky", toys._ask))), payload="x")
    assert run.status == "paused"
    with pytest.raises(RunError, match="node 'Q' does not take this answer: answer 'yes' or 'no', not 'Yes'"):
        run.answer("q", "Yes")
    assert run.status == "paused" and run.paused_nodes() == ["q"]
    rest = [e async for e in run.resume("q", "yes")]
    assert run.status == "completed" and kinds(rest, "q") == ["resumed", "started", "completed"]


async def test_restore_from_records_resumes_like_the_original():
    graph = toys.graph([("s", "start"), ("q", "ask"), ("y", "pass"), ("n", "pass")],
                       ["s.out -> q.in", "q.yes -> y.in", "q.no -> n.in"])
    first, _ = await run_graph(graph, payload="x")
    restored = Run.restore(first.plan, "s", "x", first.records, run_id=first.run_id, status="paused")
    [e async for e in restored.resume("q", "yes")]
    assert restored.status == "completed" and restored.outputs_by_name()["Y"] == {"out": "x"}


#  S --> loop(in: [1,2,3])      children of loop: c1 --> c2
async def test_run_subgraph_runs_children_per_item():
    graph = toys.graph([("s", "start"), ("l", "loop"), ("c1", "pass"), ("c2", "pass"), ("after", "pass")],
                       ["s.out -> l.in", "c1.out -> c2.in", "l.out -> after.in"],
                       c1={"parentId": "l"}, c2={"parentId": "l"})
    run, events = await run_graph(graph, payload=[1, 2, 3])
    assert run.status == "completed", run.error
    assert run.outputs_by_name()["AFTER"]["out"] == [[{"out": 1}, {"out": 1}], [{"out": 2}, {"out": 2}],
                                                     [{"out": 3}, {"out": 3}]]
    assert kinds(events, "c2").count("completed") == 3  # children's events reach the run's stream


async def test_streaming_executor_events_arrive_in_order():
    class Streamer:
        node_type = "toy-stream"

        async def execute(self, data, inputs, ctx):
            for token in ("a", "b", "c"):
                yield ctx.event("token", text=token)
            yield ExecutionResult(outputs={"out": "abc"})

    definition = NodeDefinition(id="toy-stream", name="S", description="d", category="t", inputs=(toys.DATA_IN,),
                                outputs=(toys.DATA_OUT,))
    graph = toys.graph([("s", "start"), ("t", "stream")], ["s.out -> t.in"])
    run, events = await run_graph(graph, toys.registry((definition, Streamer())), payload=1)
    assert kinds(events, "t") == ["started", "token", "token", "token", "completed"]
    assert [e.data["text"] for e in events if e.event_type == "token"] == ["a", "b", "c"]


async def test_a_node_raising_a_plain_exception_fails_with_its_type():
    async def broken(data, inputs, ctx):
        return {}["missing"]

    definition = NodeDefinition(id="toy-broken", name="B", description="d", category="t", inputs=(toys.DATA_IN,),
                                outputs=(toys.DATA_OUT,))
    graph = toys.graph([("s", "start"), ("b", "broken")], ["s.out -> b.in"])
    run, _ = await run_graph(graph, toys.registry((definition, toys.Toy("toy-broken", broken))), payload=1)
    assert run.error == "node 'B' failed: KeyError: 'missing'"


async def test_required_flow_input_without_value_skips_the_node():
    definition = NodeDefinition(id="toy-needy", name="N", description="d", category="t",
                                inputs=(toys.DATA_IN, Socket(id="extra", type="any", required=True)),
                                outputs=(toys.DATA_OUT,))
    graph = toys.graph([("s", "start"), ("g", "gate", {"open": False}), ("n", "needy")],
                       ["s.out -> n.in", "s.out -> g.in", "g.yes -> n.extra"])
    run, events = await run_graph(graph, toys.registry((definition, toys.Toy("toy-needy", toys._pass))), payload=1)
    assert kinds(events, "n") == ["skipped"]
    assert "required input" in next(e for e in events if e.node_id == "n").data["reason"]


async def test_consumer_that_stops_listening_cancels_the_run():
    graph = toys.graph([("s", "start"), ("w", "slow", {"delay": 5})], ["s.out -> w.in"])
    run = start_run(graph, toys.registry(), payload=1)
    async with contextlib.aclosing(run.events()) as stream:
        async for event in stream:
            if event.event_type == "started" and event.node_id == "w":
                break
    assert run.status == "cancelled" and run.records["w"].status == "cancelled"


def test_node_error_is_an_exception():
    assert issubclass(NodeError, Exception)


#  provider ==x==> consumer ; the provider opens something per run and closes it when the run stops
@pytest.mark.parametrize("outcome", ["completed", "failed", "cancelled"])
async def test_on_finish_cleanups_run_when_the_run_stops(outcome):
    closed = []

    async def make(data, handle, ctx):
        async def close():
            closed.append(ctx.run_id)
        ctx.runtime.on_finish(close)
        return "connection"

    async def consume(data, inputs, ctx):
        await ctx.runtime.resolve_links(ctx.node_id, "things")
        if outcome == "failed":
            raise NodeError("no")
        if outcome == "cancelled":
            await asyncio.sleep(5)
        return {"out": 1}

    registry = link_registry(make, consume)
    graph = toys.graph([("s", "start"), ("k", "consumer"), ("p", "provider")], ["s.out -> k.in", "p.thing => k.things"])
    run = start_run(graph, registry, payload=1)
    async for event in run.events():
        if outcome == "cancelled" and (event.node_id, event.event_type) == ("k", "started"):
            await asyncio.sleep(0.05)
            run.cancel()
    assert run.status == outcome and closed == [run.run_id]


#  S --> N0 --> N1 --> ... --> N99, and a ticker on the same event loop
async def test_a_chain_runs_in_one_task_and_still_lets_other_work_run():
    tasks, ticks, at_ticks = set(), [], []

    async def mark(data, inputs, ctx):
        tasks.add(asyncio.current_task())
        at_ticks.append(len(ticks))
        return {"out": inputs.get("in")}

    mark_node = (NodeDefinition(id="toy-mark", name="Mark", description="d", category="t", inputs=(toys.DATA_IN,),
                                outputs=(toys.DATA_OUT,)), toys.Toy("toy-mark", mark))
    graph = toys.graph([("s", "start")] + [(f"n{i}", "mark") for i in range(100)],
                       ["s.out -> n0.in"] + [f"n{i}.out -> n{i + 1}.in" for i in range(99)])

    async def ticker():
        while True:
            ticks.append(1)
            await asyncio.sleep(0)

    ticking = asyncio.create_task(ticker())
    try:
        run, _ = await run_graph(graph, toys.registry(mark_node), payload=1)
    finally:
        ticking.cancel()
    assert run.status == "completed" and run.records["n99"].outputs == {"out": 1}
    assert len(tasks) == 1  # each node readied by the one before went on in its task: no task per node
    # ... yet the loop ran other work every CHAIN_STEPS nodes (and no 100-node stretch held it)
    assert len(set(at_ticks)) >= 100 // run_module.CHAIN_STEPS


#  S --> A (fails) --> B
async def test_a_node_that_fails_ends_its_chain():
    graph = toys.graph([("s", "start"), ("a", "boom"), ("b", "pass")], ["s.out -> a.in", "a.out -> b.in"])
    run, events = await run_graph(graph, payload=1)
    assert run.status == "failed" and kinds(events, "b") == []
