"""nodes/flow/for_each: run the container's children per item, in order, bounded concurrency; on the real kernel."""

from __future__ import annotations

import asyncio

import pytest

from nodeflow_app.runtime.engine import start_run
from nodes._registry import BUILTIN_ROOT, Registry, load_folder
from nodeflow_app.contract import NodeDefinition, NodeError, Parameter
from tests.runtime import toys

FOLDER = BUILTIN_ROOT / "flow" / "for_each"
INSIDE = {"parentId": "fe"}


class Probe:
    """A toy body step that counts how many copies of itself run at once and which items finished."""

    definition = NodeDefinition(id="toy-probe", name="Probe", description="d", category="t",
                                inputs=(toys.DATA_IN,), outputs=(toys.DATA_OUT,),
                                parameters=(Parameter(id="delay", label="Delay", type="float", default=0.01),))

    def __init__(self):
        self.running = self.peak = 0
        self.finished: list = []

    async def behave(self, data, inputs, ctx):
        item = inputs["in"]
        if item.get("fail"):
            raise NodeError(f"cannot take {item['fail']}")
        self.running += 1
        self.peak = max(self.peak, self.running)
        try:
            await asyncio.sleep(item.get("delay", data["delay"]))
        finally:
            self.running -= 1
        self.finished.append(item)
        return {"out": item}


def registry(probe: Probe | None = None) -> Registry:
    probe = probe or Probe()
    reg = toys.registry((Probe.definition, toys.Toy("toy-probe", probe.behave)))
    reg.add(load_folder(FOLDER))
    return reg


def loop_graph(body: list[tuple], edges: list[str], **fe_data) -> dict:
    """START -> FE (a real for-each holding `body`) -> AFTER."""
    graph = toys.graph([("start", "start"), ("fe", "pass", fe_data), ("after", "pass"), *body],
                       ["start.out -> fe.input", "fe.output -> after.in", *edges],
                       **{spec[0]: INSIDE for spec in body})
    graph["nodes"][1]["type"] = "for-each"
    return graph


async def run_loop(graph: dict, payload, reg: Registry | None = None):
    run = start_run(graph, reg or registry(), payload=payload)
    events = [event async for event in run.events()]
    return run, events


def of(events: list, node_id: str, event_type: str) -> list:
    """The data of one node's events of one type (a `completed` event: its outputs)."""
    return [e.data["outputs"] if event_type == "completed" else e.data
            for e in events if e.node_id == node_id and e.event_type == event_type]


#   START ──> FE ──> AFTER
#            ┌─────────────┐
#            │ C1 ──> C2   │
#            └─────────────┘
CHAIN = ([("c1", "pass"), ("c2", "pass")], ["c1.out -> c2.in"])


async def test_items_run_through_the_children_in_order():
    payload = {"order": {"lines": [{"sku": "a"}, {"sku": "b"}, 3, [4]]}}
    run, events = await run_loop(loop_graph(*CHAIN, field="order.lines"), payload)
    assert run.status == "completed", run.error
    results = [{"sku": "a"}, {"sku": "b"}, {"value": 3, "index": 2}, {"value": [4], "index": 3}]
    assert run.records["fe"].outputs == {"output": {"results": results, "count": 4}}
    assert run.records["after"].outputs == {"out": {"results": results, "count": 4}}
    assert of(events, "c2", "completed") == [{"out": r} for r in results]
    assert of(events, "fe", "progress") == [{"done": k, "total": 4} for k in (1, 2, 3, 4)]


async def test_an_empty_list_gives_no_results():
    run, events = await run_loop(loop_graph(*CHAIN), [])
    assert run.records["fe"].outputs == {"output": {"results": [], "count": 0}}
    assert of(events, "c1", "started") == []


#   START ──> FE ──> AFTER
#            ┌─────────────────────┐
#            │ C1 ──> C2           │
#            │   └──> C3 ─yes─> C4 │   (C3 is a gate: closed, so C4 is skipped)
#            └─────────────────────┘
async def test_several_ends_give_an_object_by_name_of_those_that_ran():
    body = [("c1", "pass"), ("c2", "pass"), ("c3", "gate", {"open": False}), ("c4", "pass")]
    graph = loop_graph(body, ["c1.out -> c2.in", "c1.out -> c3.in", "c3.yes -> c4.in"])
    run, _ = await run_loop(graph, [{"n": 1}, {"n": 2}])
    assert run.records["fe"].outputs == {"output": {"results": [{"C2": {"n": 1}}, {"C2": {"n": 2}}], "count": 2}}


#   START ──> FE ──> AFTER
#            ┌────┐
#            │ P  │   (a probe: counts copies running at once)
#            └────┘
@pytest.mark.parametrize("concurrency, peak", [(1, 1), (4, 4), (32, 8)])
async def test_concurrency_bounds_parallel_items_and_keeps_item_order(concurrency, peak):
    probe = Probe()
    items = [{"n": n, "delay": 0.002 * (8 - n)} for n in range(8)]  # later items finish first
    run, _ = await run_loop(loop_graph([("p", "probe")], [], concurrency=concurrency), items, registry(probe))
    assert run.status == "completed", run.error
    assert probe.peak == peak
    assert run.records["fe"].outputs["output"]["results"] == items
    if concurrency > 1:
        assert probe.finished != items


#   START ──> FE ──> AFTER      (2,000 items; the probe counts the asyncio tasks alive while it runs)
#            ┌────┐
#            │ P  │
#            └────┘
@pytest.mark.parametrize("concurrency", [1, 4])
async def test_only_a_window_of_items_has_a_task_at_once(concurrency):
    """A task per item made 60,000 items hold 60,000 waiting tasks (258 MB): only `concurrency` items start."""
    tasks: list[int] = []

    class Counting(Probe):
        async def behave(self, data, inputs, ctx):
            tasks.append(len(asyncio.all_tasks()))
            return await super().behave(data, inputs, ctx)

    probe = Counting()
    items = [{"n": n, "delay": 0} for n in range(2_000)]
    run, _ = await run_loop(loop_graph([("p", "probe")], [], concurrency=concurrency), items, registry(probe))
    assert run.status == "completed", run.error
    assert run.records["fe"].outputs["output"]["results"] == items
    assert max(tasks) < 20 + concurrency * 4, max(tasks)  # the run's own tasks and a few per running item


@pytest.mark.parametrize("concurrency", [1, 3])
async def test_a_failing_item_fails_the_node_naming_the_item(concurrency):
    items = [{"n": 0}, {"fail": "this one"}, {"n": 2}]
    run, events = await run_loop(loop_graph([("p", "probe")], [], concurrency=concurrency), items)
    assert run.status == "failed"
    assert run.error == "node 'FE' failed: item 1: node 'P' failed: cannot take this one"
    assert run.records["after"].status == "pending"


async def test_continue_on_item_error_records_the_error_and_goes_on():
    items = [{"n": 0}, {"fail": "this one"}, {"n": 2}]
    run, _ = await run_loop(loop_graph([("p", "probe")], [], continue_on_item_error=True, concurrency=2), items)
    assert run.status == "completed", run.error
    assert run.records["fe"].outputs["output"] == {"count": 3, "results": [
        {"n": 0}, {"error": "node 'P' failed: cannot take this one"}, {"n": 2}]}


@pytest.mark.parametrize("field, payload, message", [
    ("items", {"items": {"a": 1}}, "field 'items' holds dict '{\"a\":1}', not a list"),
    ("items", {"other": []}, "nothing at field 'items'; the input has: other"),
    ("", {"items": []}, "the input (List field is empty) holds dict '{\"items\":[]}', not a list"),
    ("", "abc", "the input (List field is empty) holds str 'abc', not a list"),
])
async def test_a_non_list_fails_saying_what_was_found(field, payload, message):
    run, _ = await run_loop(loop_graph(*CHAIN, field=field), payload)
    assert run.status == "failed"
    assert run.error == f"node 'FE' failed: {message}"


async def test_a_for_each_with_nothing_inside_says_so():
    run, _ = await run_loop(loop_graph([], []), [1])
    assert run.error == ("node 'FE' failed: this For Each has no steps inside it; "
                         "place the nodes to repeat inside the container")


async def test_concurrency_from_an_expression_is_checked():
    run, _ = await run_loop(loop_graph(*CHAIN, field="items", concurrency="{{ $json.n }}"), {"items": [1], "n": 0})
    assert run.error == "node 'FE' failed: parameter 'concurrency': 0 is below the minimum 1"


# -- cancellation, failure and pauses inside the container ---------------------------------------

#   START ──> FE ──> AFTER
#            ┌────┐
#            │ P  │   (0.2 s; the run is cancelled while it runs)
#            └────┘
async def test_cancelling_the_run_stops_the_steps_inside():
    probe = Probe()
    run = start_run(loop_graph([("p", "probe")], [], field=""), registry(probe), payload=[{"delay": 0.2}])
    async for event in run.events():
        if (event.node_id, event.event_type) == ("p", "started"):
            run.cancel()
    assert run.status == "cancelled"
    await asyncio.sleep(0.3)
    assert probe.finished == []


#   START ──> FE ──> AFTER      (concurrency 3; item 1 fails at once, items 0 and 2 take 0.2 s)
#            ┌────┐
#            │ P  │
#            └────┘
async def test_a_failing_item_stops_the_other_items_steps():
    probe = Probe()
    items = [{"delay": 0.2}, {"fail": "this one"}, {"delay": 0.2}]
    run, _ = await run_loop(loop_graph([("p", "probe")], [], concurrency=3), items, registry(probe))
    assert run.status == "failed"
    await asyncio.sleep(0.3)
    assert probe.finished == []


#   START ──> FE ──> AFTER
#            ┌─────────────────┐
#            │ AP ─approve─> C │   (an Approval inside the loop: not supported, said clearly)
#            └─────────────────┘
async def test_a_pause_inside_the_loop_is_not_lost():
    reg = registry()
    reg.add(load_folder(BUILTIN_ROOT / "flow" / "approval"))
    graph = loop_graph([("ap", "pass"), ("c", "pass")], ["ap.approve -> c.in"])
    next(n for n in graph["nodes"] if n["id"] == "ap")["type"] = "approval"
    run, _ = await run_loop(graph, [{"n": 1}], reg)
    assert run.status == "failed", run.records["fe"].outputs
    assert run.error == ("node 'FE' failed: item 0: AP inside the container asked for input; "
                         "pausing inside a container is not supported")


#   START ──> FE ──> AFTER      (items 0 and 1 finish, the process "dies" during item 2, the run goes on)
#            ┌────┐
#            │ P  │
#            └────┘
async def test_finished_items_are_checkpointed_and_not_run_again_after_a_crash(tmp_path):
    import copy

    from nodeflow_app.runtime.run import Run
    from nodeflow_app.store.db import create_all
    from nodeflow_app.store.runs import RunStore

    probe = Probe()
    store = RunStore(f"sqlite:///{tmp_path / 'runs.db'}")
    create_all(store.engine)
    items = [{"n": 0, "delay": 0}, {"n": 1, "delay": 0}, {"n": 2, "delay": 30}]
    run = start_run(loop_graph([("p", "probe")], [], field=""), registry(probe), payload=items, hooks=store.hooks())
    task = asyncio.create_task(run.run())
    while len(probe.finished) < 2 or len(((run.records["fe"].checkpoint or {}).get("finished")) or {}) < 2:
        await asyncio.sleep(0.01)
    store.flush()
    stored = {n["node_id"]: n for n in store.get_run(run.run_id)["nodes"]}
    assert stored["fe"]["status"] == "running" and sorted(stored["fe"]["checkpoint"]["finished"]) == ["0", "1"]
    records = copy.deepcopy(run.records)  # what the database holds when the process dies now
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)

    records["fe"].status = "interrupted"
    records["fe"].inputs["input"][2]["delay"] = 0  # the re-run need not take 30 s
    before = len(probe.finished)
    restored = Run.restore(run.plan, "start", items, records, run_id=run.run_id, status="interrupted")
    restored.answer("fe", None)
    await restored.run()
    assert restored.status == "completed"
    assert probe.finished[before:] == [{"n": 2, "delay": 0}]  # only the unfinished item ran again
    results = restored.records["fe"].outputs["output"]["results"]
    assert [r["n"] for r in results] == [0, 1, 2]
    store.close()


async def test_checkpoints_are_saved_a_few_times_a_second_not_per_item(monkeypatch):
    """Each save copies every finished result: one per item made 20,000 items take over a minute."""
    from nodeflow_app.runtime.run import Run

    saves: list[int] = []
    save = Run.save_checkpoint

    def counted(self, node_id, value):
        saves.append(len(value["finished"]))
        save(self, node_id, value)

    monkeypatch.setattr(Run, "save_checkpoint", counted)
    items = [{"n": n, "delay": 0} for n in range(3_000)]
    run, _ = await run_loop(loop_graph([("p", "probe")], [], field="", concurrency=32), items)
    assert run.status == "completed", run.error
    assert len(saves) < 300, len(saves)  # a save per 50 ms (and the first item), not 3,000
    assert saves[-1] == 3_000 and saves == sorted(saves)  # the last save holds every item
