"""Test runs in Chromium: live statuses and the path data took on the canvas, the run history panel,
re-runs that reuse cached outputs after an edit, pinned outputs and run to here.

    Manual --> Shape --> Pause (wait) --> Check --true--> Yes
                                               \\--false-> No
"""

from __future__ import annotations

import json
import re
import uuid

import pytest
from playwright.sync_api import expect

from nodeflow_app.store.graphs import GraphStore

from .server import Server
from .test_editor import node, open_editor, select, seq, wait_seq

TAKEN = ".react-flow__edge.nf-edge-taken"
WAIT_S = 1.5


def flow(edge_id: str, source: str, target: str, handle: str = "output") -> dict:
    return {"id": edge_id, "source": source, "sourceHandle": handle, "target": target, "targetHandle": "input",
            "data": {"channel": "flow"}}


def graph() -> dict:
    def n(node_id, node_type, name, x, data):
        return {"id": node_id, "type": node_type, "name": name, "position": {"x": x, "y": 0 if name != "No" else 220},
                "data": data}
    return {
        "nodes": [
            n("manual", "manual-trigger", "Manual", 0, {"payload": {"user": "Ada"}}),
            n("shape", "edit-fields", "Shape", 300, {"fields": [{"name": "status", "value": "ok"}]}),
            n("pause", "wait", "Pause", 600, {"amount": WAIT_S, "unit": "seconds"}),
            n("check", "conditional", "Check", 900, {"field": "status", "operator": "equals", "value": "ok"}),
            n("yes", "edit-fields", "Yes", 1200, {"fields": [{"name": "answer", "value": "yes"}]}),
            n("no", "edit-fields", "No", 1200, {"fields": [{"name": "answer", "value": "no"}]}),
        ],
        "edges": [flow("e1", "manual", "shape"), flow("e2", "shape", "pause"), flow("e3", "pause", "check"),
                  flow("e4", "check", "yes", "true"), flow("e5", "check", "no", "false")],
    }


@pytest.fixture
def store(nodeflow_server: Server):
    graphs = GraphStore(f"sqlite:///{nodeflow_server.data_dir / 'nodeflow.db'}")
    yield graphs
    graphs.engine.dispose()


def status(page, name: str):
    return page.get_by_test_id(f"status-{name}")


def edge(page, edge_id: str):
    return page.locator(f'.react-flow__edge[data-testid="rf__edge-{edge_id}"]')


def run_node(page, name: str):
    return page.get_by_test_id(f"run-node-{name}")


def expand(page, name: str):
    details = run_node(page, name)
    if details.get_attribute("open") is None:  # a details element of an earlier chosen run may be open already
        details.locator("summary").click()
    expect(details.get_by_test_id("run-node-output")).to_be_visible()
    return details


def json_of(details, testid: str):
    return json.loads(details.get_by_test_id(testid).inner_text())


def test_rerun_shows_statuses_history_reuses_cache_pins_and_runs_to_here(page, nodeflow_server: Server,
                                                                         store: GraphStore, artifacts_dir) -> None:
    graph_id = store.create(f"Runs {uuid.uuid4().hex[:6]}", graph()).id
    open_editor(page, nodeflow_server, graph_id)
    node(page, "Yes").wait_for()

    # 1. Re-run: statuses arrive as they happen (Pause is seen running), then the path the data took.
    page.get_by_test_id("rerun").click()
    expect(status(page, "Pause")).to_have_text("running")
    expect(status(page, "Shape")).to_have_text("completed")
    expect(status(page, "Check")).to_have_text("completed", timeout=10_000)
    expect(status(page, "Yes")).to_have_text("completed")
    expect(status(page, "No")).to_have_text("skipped")
    expect(page.locator(TAKEN)).to_have_count(4)
    expect(edge(page, "e4")).to_have_class(re.compile(r"\bnf-edge-taken\b"))
    expect(edge(page, "e5")).not_to_have_class(re.compile(r"\bnf-edge-taken\b"))
    expect(page.get_by_test_id("run-view-chip")).to_contain_text("Test run")

    # 2. The run history: the run with its trigger and version; a node's input and output as JSON.
    page.get_by_test_id("toggle-runs").click()
    rows = page.get_by_test_id("run-row")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("Manual")
    expect(rows.first).to_contain_text("completed")
    expect(rows.first).to_contain_text("v1")
    rows.first.click()
    shape = expand(page, "Shape")
    assert json_of(shape, "run-node-input") == {"input": {"user": "Ada"}}
    assert json_of(shape, "run-node-output") == {"output": {"user": "Ada", "status": "ok"}}
    assert json_of(expand(page, "Check"), "run-node-output") == {"true": {"user": "Ada", "status": "ok"}}

    # 3. An edit, then Re-run: only Check and what follows run; upstream nodes report cached.
    edits = seq(page)
    value = page.get_by_test_id("inline-Check-value")
    value.fill("nope")
    value.press("Enter")
    wait_seq(page, edits + 1)
    page.get_by_test_id("rerun").click()
    expect(status(page, "No")).to_have_text("completed", timeout=10_000)
    expect(status(page, "Yes")).to_have_text("skipped")
    expect(edge(page, "e5")).to_have_class(re.compile(r"\bnf-edge-taken\b"))
    expect(rows).to_have_count(2)
    expect(rows.first).to_contain_text("v2")  # the edit was saved before the run
    rows.first.click()
    for name in ("Manual", "Shape", "Pause"):
        expect(run_node(page, name).get_by_test_id("run-node-cached")).to_be_visible()
    expect(run_node(page, "Check").get_by_test_id("run-node-cached")).to_have_count(0)
    assert json_of(expand(page, "No"), "run-node-output") == {"output": {"user": "Ada", "status": "ok", "answer": "no"}}
    page.screenshot(path=str(artifacts_dir / "runs-panel.png"))  # for a look by a person (git-ignored)

    # 4. Pin Shape's output as test data; invalid JSON is refused, saying where.
    expand(page, "Shape").get_by_test_id("pin-output").click()
    editor = page.get_by_test_id("pin-editor")
    assert json.loads(editor.input_value()) == {"output": {"user": "Ada", "status": "ok"}}
    editor.fill('{"output": {"status": "nope",}}')
    page.get_by_test_id("save-pin").click()
    expect(page.get_by_test_id("pin-error")).to_contain_text("invalid JSON at line 1, column 30")
    editor.fill('{"output": {"user": "Pinned", "status": "nope"}}')
    page.get_by_test_id("save-pin").click()
    expect(page.get_by_test_id("pin-editor")).to_have_count(0)
    expect(page.get_by_test_id("pinned-Shape")).to_be_visible()

    # 5. Run to here (the play button on the node): the pin feeds Pause and Check; No is not part of it.
    page.get_by_test_id("fit-view").click()  # the open panel made the canvas shorter
    node(page, "Yes").locator(".nf-header").hover()
    page.get_by_test_id("run-to-Yes").click()
    expect(page.get_by_test_id("run-view-chip")).to_contain_text("Run to Yes")
    expect(status(page, "No")).to_have_count(0)
    expect(status(page, "Yes")).to_have_text("completed", timeout=10_000)
    expect(rows).to_have_count(3)
    rows.first.click()
    assert json_of(expand(page, "Yes"), "run-node-output") == {
        "output": {"user": "Pinned", "status": "nope", "answer": "yes"}}
    expect(run_node(page, "No")).to_have_count(0)

    # 6. A past run opened on the canvas; the chip's X goes back to the plain graph.
    rows.last.click()
    page.get_by_test_id("open-on-canvas").click()
    expect(page.get_by_test_id("run-view-chip")).to_contain_text("completed")
    expect(status(page, "Yes")).to_have_text("completed")
    expect(status(page, "No")).to_have_text("skipped")
    page.get_by_test_id("run-view-clear").click()
    expect(page.get_by_test_id("run-view-chip")).to_have_count(0)
    expect(page.locator(TAKEN)).to_have_count(0)
    expect(status(page, "Yes")).to_have_count(0)


def test_run_to_here_from_the_inspector_and_unpin(page, nodeflow_server: Server, store: GraphStore) -> None:
    graph_id = store.create(f"Runs {uuid.uuid4().hex[:6]}", graph()).id
    open_editor(page, nodeflow_server, graph_id)
    node(page, "Shape").locator(".nf-header").click()
    page.get_by_test_id("inspector-form-edit-fields").wait_for()
    page.get_by_test_id("run-to-here").click()
    expect(status(page, "Shape")).to_have_text("completed")
    expect(status(page, "Pause")).to_have_count(0)  # not part of a run to Shape

    page.get_by_test_id("toggle-runs").click()
    page.get_by_test_id("run-row").first.click()
    # The trigger gave its test payload, not the button's click (the click's data took its place once).
    assert json_of(expand(page, "Manual"), "run-node-output") == {"output": {"user": "Ada"}}
    expand(page, "Shape").get_by_test_id("pin-output").click()
    page.get_by_test_id("save-pin").click()
    expect(page.get_by_test_id("pinned-Shape")).to_be_visible()
    run_node(page, "Shape").get_by_test_id("unpin-output").click()
    expect(page.get_by_test_id("pinned-Shape")).to_have_count(0)


#  Manual --> Ship? (approval) --approve--> Shipped
#         \--> Slow (wait 30 s)
def approval_graph() -> dict:
    def n(node_id, node_type, name, x, y, data):
        return {"id": node_id, "type": node_type, "name": name, "position": {"x": x, "y": y}, "data": data}
    return {
        "nodes": [
            n("manual", "manual-trigger", "Manual", 0, 0, {"payload": {"order": 7, "text": "Ship 3 boxes to Oslo"}}),
            n("ship", "approval", "Ship?", 300, 0, {"prompt": "Ship order 7?"}),
            n("shipped", "edit-fields", "Shipped", 600, 0, {"fields": [{"name": "shipped", "value": "yes"}]}),
            n("slow", "wait", "Slow", 300, 220, {"amount": 30, "unit": "seconds"}),
        ],
        "edges": [flow("e1", "manual", "ship"), flow("e2", "ship", "shipped", "approve"), flow("e3", "manual", "slow")],
    }


def test_a_paused_test_run_is_approved_and_stopped_from_the_runs_panel(
        page, nodeflow_server: Server, store: GraphStore) -> None:
    graph_id = store.create(f"Approve {uuid.uuid4().hex[:6]}", approval_graph()).id
    open_editor(page, nodeflow_server, graph_id)
    node(page, "Shipped").wait_for()

    # 1. The test run pauses at the approval while Slow runs; the Runs panel shows the card, started by "test".
    page.get_by_test_id("rerun").click()
    expect(status(page, "Ship?")).to_have_text("paused", timeout=10_000)
    expect(status(page, "Slow")).to_have_text("running")
    page.get_by_test_id("toggle-runs").click()
    rows = page.get_by_test_id("run-row")
    expect(rows.first).to_contain_text("running")
    expect(rows.first.get_by_test_id("run-started-by")).to_have_text("test · Admin")  # a test run, by the owner
    rows.first.click()
    card = page.get_by_test_id("approval-card")
    expect(card.get_by_test_id("approval-prompt")).to_have_text("Ship order 7?")
    expect(card.get_by_test_id("approval-text")).to_have_text("Ship 3 boxes to Oslo")  # as the chat's card shows it
    expect(card.locator("details pre")).to_be_hidden()  # the whole input on demand
    card.get_by_text("Whole input").click()
    expect(card.locator("details pre")).to_contain_text('"order": 7')

    # 2. Approve with a note: the live run takes the answer and Shipped runs while Slow still waits.
    card.get_by_test_id("approval-note").fill("looks right")
    card.get_by_test_id("approval-approve").click()
    expect(status(page, "Shipped")).to_have_text("completed", timeout=10_000)
    expect(status(page, "Slow")).to_have_text("running")

    # 3. Stop: the run ends cancelled long before Slow's 30 s; the card is gone, the answer recorded.
    page.get_by_test_id("stop-run").click()
    expect(rows.first).to_contain_text("cancelled", timeout=10_000)
    expect(status(page, "Slow")).to_have_text("cancelled")
    expect(page.get_by_test_id("approval-card")).to_have_count(0)
    approval = json_of(expand(page, "Ship?"), "run-node-output")["approve"]["approval"]
    assert (approval["decision"], approval["note"], approval["by"]) == ("approve", "looks right", "Admin")


def test_a_failed_node_says_why_on_the_canvas(page, nodeflow_server: Server, store: GraphStore) -> None:
    """n8n shows a node's error on the node: here a line under its header, the whole error as its tooltip."""
    failing = {"nodes": [{"id": "manual", "type": "manual-trigger", "name": "Manual", "position": {"x": 0, "y": 0},
                          "data": {}},
                         {"id": "fetch", "type": "http-request", "name": "Fetch", "position": {"x": 300, "y": 0},
                          "data": {"url": "http://127.0.0.1:9/nothing-listens-here", "timeout": 5}}],
               "edges": [flow("e1", "manual", "fetch")]}
    open_editor(page, nodeflow_server, store.create(f"Failing {uuid.uuid4().hex[:6]}", failing).id)
    page.get_by_test_id("rerun").click()
    expect(status(page, "Fetch")).to_have_text("failed", timeout=15_000)
    reason = page.get_by_test_id("error-Fetch")
    why = "refused http://127.0.0.1:9/nothing-listens-here: 127.0.0.1 is a loopback address"
    expect(reason).to_contain_text(why)
    expect(reason).to_have_attribute("title", re.compile("^" + re.escape(why)))
    expect(status(page, "Fetch")).to_have_attribute("title", reason.get_attribute("title"))
    expect(page.get_by_test_id("error-Manual")).to_have_count(0)
    expect(page.locator("[data-sonner-toast]").filter(has_text="'Fetch' failed")).to_have_count(1)

    # A stored run opened from the Runs panel shows it the same way; clearing the run view takes it away.
    page.get_by_test_id("run-view-clear").click()
    expect(reason).to_have_count(0)
    page.get_by_test_id("toggle-runs").click()
    page.get_by_test_id("run-row").first.click()
    expect(run_node(page, "Fetch").get_by_test_id("run-node-error")).to_contain_text(why)
    page.get_by_test_id("open-on-canvas").click()
    expect(reason).to_contain_text(why)


def test_the_inspector_shows_the_nodes_last_output_and_a_failed_nodes_whole_error(
        page, nodeflow_server: Server, store: GraphStore) -> None:
    """n8n shows a node's input and output side by side; the inspector showed only the input, and a failed node's
    error was whole only in the Runs panel (the card cuts it)."""
    long_url = "http://127.0.0.1:9/" + "a-long-path/" * 30
    notes = "n" * 3000

    def n(node_id, node_type, name, y, data):
        return {"id": node_id, "type": node_type, "name": name, "position": {"x": 300 if y else 0, "y": y},
                "data": data}
    graph = {"nodes": [n("manual", "manual-trigger", "Manual", 0, {"payload": {"user": "Ada", "notes": notes}}),
                       n("shape", "edit-fields", "Shape", 1, {"fields": [{"name": "status", "value": "ok"}]}),
                       n("fetch", "http-request", "Fetch", 220, {"url": long_url, "timeout": 5})],
             "edges": [flow("e1", "manual", "shape"), flow("e2", "manual", "fetch")]}
    open_editor(page, nodeflow_server, store.create(f"Output {uuid.uuid4().hex[:6]}", graph).id)
    select(page, "Shape", "edit-fields")
    expect(page.get_by_test_id("node-output-none")).to_be_visible()

    # Its output as JSON, cut after a while, whole on demand.
    page.get_by_test_id("run-to-here").click()
    expect(status(page, "Shape")).to_have_text("completed")
    expect(page.get_by_test_id("node-output-status")).to_have_text("completed")
    output = page.get_by_test_id("node-output-json")
    expect(output).to_contain_text('"user": "Ada"')
    expect(output).to_contain_text("more characters)")
    expect(output).not_to_contain_text('"status": "ok"')  # after the notes
    page.get_by_test_id("node-output-more").click()
    expect(output).to_contain_text('"status": "ok"')
    assert json.loads(output.inner_text()) == {"user": "Ada", "notes": notes, "status": "ok"}
    expect(page.get_by_test_id("node-output-more")).to_have_count(0)

    # A failed node: its whole error (the card's line and tooltip stop at 300 characters).
    select(page, "Fetch", "http-request")
    page.get_by_test_id("run-to-here").click()
    expect(status(page, "Fetch")).to_have_text("failed", timeout=15_000)
    expect(page.get_by_test_id("node-output-status")).to_have_text("failed")
    error = page.get_by_test_id("node-output-error")
    expect(error).to_contain_text(f"refused {long_url}: 127.0.0.1 is a loopback address")
    expect(error).to_contain_text("lists the host")
    assert page.get_by_test_id("error-Fetch").get_attribute("title").endswith("…")


def test_the_inspectors_input_and_output_follow_each_run(page, nodeflow_server: Server, store: GraphStore,
                                                         fake_llm) -> None:
    """The input list was read when the node was selected only: after a run it still showed the run before."""
    graph = {"nodes": [{"id": "chat", "type": "chat-start", "name": "Chat Start", "position": {"x": 0, "y": 0},
                        "data": {}},
                       {"id": "shape", "type": "edit-fields", "name": "Shape", "position": {"x": 300, "y": 0},
                        "data": {"fields": [{"name": "status", "value": "ok"}]}}],
             "edges": [flow("e1", "chat", "shape")]}
    open_editor(page, nodeflow_server, store.create(f"Follow {uuid.uuid4().hex[:6]}", graph).id)
    select(page, "Shape", "edit-fields")
    for message in ("first question", "second question"):
        page.get_by_test_id("test-message").click()
        page.get_by_test_id("test-message-input").fill(message)
        page.get_by_test_id("test-message-run").click()
        expect(page.get_by_test_id("upstream-fields")).to_contain_text(message, timeout=15_000)
        expect(page.get_by_test_id("node-output-json")).to_contain_text(message)
