"""Execute Graph through the app's graph runner: a stored graph runs as one step; self-calls are refused."""

from __future__ import annotations

import pytest

from nodeflow_app.contract import FlowContext, NodeError
from nodeflow_app.runs.launcher import RunLauncher
from nodes._registry import default_registry
from nodes.flow.execute_graph.executor import executor

REGISTRY = default_registry()


@pytest.fixture
def launcher(tmp_path):
    launcher = RunLauncher(f"sqlite:///{tmp_path / 'graphs.db'}", registry=REGISTRY)
    yield launcher
    launcher.close()


@pytest.fixture
def graphs(launcher):
    return launcher.graphs


def flow(*nodes: dict) -> dict:
    """A chain: each node feeds the next through `output` -> `input`."""
    edges = [{"id": f"e{i}", "source": a["id"], "sourceHandle": "output", "target": b["id"], "targetHandle": "input",
              "data": {"channel": "flow"}} for i, (a, b) in enumerate(zip(nodes, nodes[1:]))]
    return {"nodes": list(nodes), "edges": edges}


def start() -> dict:
    return {"id": "start", "type": "manual-trigger", "name": "Start", "data": {}}


def call(graph_id: str, node_id: str = "call", name: str = "Call") -> dict:
    return {"id": node_id, "type": "execute-graph", "name": name, "data": {"graph": graph_id}}


def greet() -> dict:
    return {"id": "greet", "type": "edit-fields", "name": "Greet",
            "data": {"fields": [{"name": "greeting", "value": "hi {{ $json.name }}"}], "include_input": False}}


async def run_stored(launcher: RunLauncher, graph_id: str, payload):
    """A run through the launcher, which gives every run a graph runner (on the launcher's graph store)."""
    run = launcher.start(launcher.graphs.get(graph_id).graph, started_by="test", payload=payload, graph_id=graph_id)
    events = [event async for event in run.events()]
    return run, events


#   Parent: Start --> Call (Greeter) --> Shout        Greeter: Start --> Greet
async def test_the_called_graph_gets_the_input_and_its_last_value_comes_back(graphs, launcher):
    greeter = graphs.create("Greeter", flow(start(), greet())).id
    shout = {"id": "shout", "type": "edit-fields", "name": "Shout", "data": {"fields": [{"name": "loud", "value": "yes"}]}}
    parent = graphs.create("Parent", flow(start(), call(greeter), shout)).id
    run, events = await run_stored(launcher, parent, {"name": "Ada"})
    assert run.status == "completed", run.error
    assert run.records["call"].outputs == {"output": {"greeting": "hi Ada"}}
    assert run.records["shout"].outputs == {"output": {"greeting": "hi Ada", "loud": "yes"}}
    progress = [e.data for e in events if e.node_id == "call" and e.event_type == "progress"]
    assert [p["message"].split()[0] for p in progress] == ["running", "ran"]  # when it starts, when it is done
    assert {p["graph_id"] for p in progress} == {greeter} and len({p["child_run_id"] for p in progress}) == 1


async def test_child_runs_are_recorded_in_the_history_started_by_the_calling_graph(graphs, launcher):
    greeter = graphs.create("Greeter", flow(start(), greet())).id
    parent = graphs.create("Parent", flow(start(), call(greeter))).id
    run, events = await run_stored(launcher, parent, {"name": "Bo"})
    assert run.status == "completed", run.error
    child_id = next(e.data["child_run_id"] for e in events if e.event_type == "progress")
    child = launcher.store.get_run(child_id)
    assert child is not None and (child["status"], child["started_by"], child["graph_id"]) == (
        "completed", "graph", greeter)


async def test_a_child_run_names_its_parent_run_and_node_and_the_service_links_both_ways(graphs, launcher):
    from nodeflow_app.runs.service import RunService

    greeter = graphs.create("Greeter", flow(start(), greet())).id
    parent = graphs.create("Parent", flow(start(), call(greeter))).id
    run, events = await run_stored(launcher, parent, {"name": "Cy"})
    child_id = next(e.data["child_run_id"] for e in events if e.event_type == "progress")
    child = launcher.store.get_run(child_id)
    assert (child["parent_run_id"], child["parent_node_id"]) == (run.run_id, "call")
    assert launcher.store.get_run(run.run_id)["parent_run_id"] is None
    assert launcher.store.child_runs(run.run_id) == [
        {"id": child_id, "graph_id": greeter, "parent_node_id": "call", "status": "completed"}]
    service = RunService(launcher=launcher)
    assert service.child_links(run.run_id) == {"call": {"url": f"/graph/{greeter}?run={child_id}", "count": "1"}}
    assert service.parent_link(child) == {"label": f"started by Parent run {run.run_id[:6]}",
                                          "url": f"/graph/{parent}?run={run.run_id}"}
    assert service.parent_link(launcher.store.get_run(run.run_id)) == {}


async def test_a_graph_of_another_workspace_is_not_found(graphs, launcher):
    elsewhere = graphs.create("Elsewhere", flow(start(), greet()), workspace_id="w2").id
    parent = graphs.create("Parent", flow(start(), call(elsewhere)), workspace_id="w1").id
    run, _ = await run_stored(launcher, parent, {"name": "Di"})
    assert run.status == "failed" and f"there is no graph '{elsewhere}' in this workspace" in run.records["call"].error


#   A: Start --> Call B        B: Start --> Call A     (A -> B -> A)
async def test_a_graph_calling_itself_through_another_is_refused_with_the_path(graphs, launcher):
    a = graphs.create("Alpha", flow(start())).id
    b = graphs.create("Beta", flow(start(), call(a))).id
    graphs.save(a, flow(start(), call(b)))
    run, _ = await run_stored(launcher, a, {})
    assert run.status == "failed"
    assert run.error == ("node 'Call' failed: graph 'Beta' (run {}) failed: node 'Call' failed: "
                         "graph 'Alpha' would call itself: Alpha -> Beta -> Alpha").format(
        run.error.split("(run ")[1].split(")")[0])


async def test_a_graph_calling_itself_directly_is_refused(graphs, launcher):
    a = graphs.create("Alpha", flow(start())).id
    graphs.save(a, flow(start(), call(a)))
    run, _ = await run_stored(launcher, a, {})
    assert run.error == "node 'Call' failed: graph 'Alpha' would call itself: Alpha -> Alpha"


async def test_a_missing_graph_or_a_failing_one_is_named(graphs, launcher):
    parent = graphs.create("Parent", flow(start(), call("nope"))).id
    run, _ = await run_stored(launcher, parent, {})
    assert run.error == "node 'Call' failed: there is no graph 'nope' in this workspace"
    broken = graphs.create("Broken", flow(start(), {"id": "c", "type": "code", "name": "Crash",
                                                    "data": {"code": "return 1 / 0"}})).id
    graphs.save(parent, flow(start(), call(broken)))
    run, events = await run_stored(launcher, parent, {})
    assert run.error.startswith("node 'Call' failed: graph 'Broken' (run ")
    [started] = [e.data for e in events if e.event_type == "progress"]  # the failed child run is linked
    assert started["graph_id"] == broken and started["child_run_id"] in run.error
    assert run.error.endswith("failed: node 'Crash' failed: line 1: ZeroDivisionError: division by zero\n    return 1 / 0")


async def test_without_a_runner_the_node_says_so():
    ctx = FlowContext(node_id="call", node_type="execute-graph", run_id="r", runtime=None)
    with pytest.raises(NodeError, match="started without a graph runner"):
        await executor.execute({"graph": "abc"}, {"input": 1}, ctx)
    with pytest.raises(NodeError, match="parameter 'graph' is empty"):
        await executor.execute({"graph": " "}, {"input": 1}, ctx)


#   Parent: Start --> OK? (approval) --approve--> Call (Greeter)
async def test_execute_graph_after_an_approval_runs_once_the_run_is_answered(graphs, launcher):
    """Every resume rebuilds the run from its record (chat approvals, the API, the run panel, `nodeflow resume`):
    the rebuilt run needs the same graph runner as a run that starts, or its Execute Graph nodes fail with
    "started without a graph runner"."""
    from nodeflow_app.runs.service import approval_payload

    greeter = graphs.create("Greeter", flow(start(), greet())).id
    approval = {"id": "ok", "type": "approval", "name": "OK?", "data": {"prompt": "Go?"}}
    parent = flow(start(), approval, call(greeter))
    parent["edges"][1]["sourceHandle"] = "approve"
    parent_id = graphs.create("Parent", parent).id
    run, _ = await run_stored(launcher, parent_id, {"name": "Ed"})
    assert run.status == "paused"

    answer = approval_payload("approve", "", "me")
    restored = launcher.answer(run.run_id, "ok", answer)  # executing nowhere: restored here
    async for _ in restored.resume("ok", answer):
        pass
    assert restored.status == "completed", restored.error
    assert restored.records["call"].outputs == {"output": {"greeting": "hi Ed"}}
    [child] = launcher.store.child_runs(run.run_id)
    assert (child["graph_id"], child["status"]) == (greeter, "completed")
