"""Execute Graph in Chromium: the parent's step (Runs panel node and chat step card) opens the child run,
and the child run links back to the run that started it.

    Greeter: Start --> Greet            Caller: Start --> Call (Greeter)     Chatter: Chat --> Call (Greeter)
"""

from __future__ import annotations

import re
import uuid

import pytest
from playwright.sync_api import expect

from nodeflow_app.store.graphs import GraphStore
from tests.llm.graphs import graph

from .server import Server
from .test_editor import open_editor, wait_loaded



@pytest.fixture
def store(nodeflow_server: Server):
    graphs = GraphStore(f"sqlite:///{nodeflow_server.data_dir / 'nodeflow.db'}")
    yield graphs
    graphs.engine.dispose()


def greeter(store: GraphStore, field: str = "name") -> str:
    greet = {"fields": [{"name": "greeting", "value": "hi {{ $json.%s }}" % field}], "include_input": False}
    raw = graph([("start", "manual-trigger", {}), ("greet", "edit-fields", greet)], ["start.output -> greet.input"])
    return store.create(f"Greeter {uuid.uuid4().hex[:6]}", raw).id


def test_the_parent_step_opens_the_child_run_which_links_back(page, nodeflow_server: Server, store: GraphStore):
    child_graph = greeter(store)
    caller_name = f"Caller {uuid.uuid4().hex[:6]}"
    caller = store.create(caller_name, graph(
        [("start", "manual-trigger", {"payload": {"name": "Ada"}}), ("call", "execute-graph", {"graph": child_graph})],
        ["start.output -> call.input"])).id
    open_editor(page, nodeflow_server, caller)
    page.get_by_test_id("rerun").click()
    expect(page.get_by_test_id("status-CALL")).to_have_text("completed", timeout=15_000)

    page.get_by_test_id("toggle-runs").click()
    page.get_by_test_id("run-row").first.click()
    call = page.get_by_test_id("run-node-CALL")
    call.locator("summary").click()
    link = call.get_by_test_id("open-child-run")
    expect(link).to_have_text("Open child run")
    link.click()

    # The child graph's editor, its run chosen in the Runs panel, with a link back to the parent run.
    expect(page).to_have_url(re.compile(rf"/graph/{child_graph}\?run=\w+"))
    wait_loaded(page)
    parent = page.get_by_test_id("parent-run")
    expect(parent).to_contain_text(f"started by {caller_name} run ")
    expect(page.get_by_test_id("run-row")).to_have_count(1)
    expect(page.get_by_test_id("run-row").first).to_contain_text("graph")  # started by: a calling graph
    expect(page.get_by_test_id("run-view-chip")).to_contain_text("completed")  # shown on the canvas too
    expect(page.get_by_test_id("status-GREET")).to_have_text("completed")
    greet = page.get_by_test_id("run-node-GREET")
    greet.locator("summary").click()
    expect(greet.get_by_test_id("run-node-output")).to_contain_text('"greeting": "hi Ada"')

    parent.click()
    expect(page).to_have_url(re.compile(rf"/graph/{caller}\?run=\w+"))
    wait_loaded(page)
    expect(page.get_by_test_id("run-node-CALL")).to_be_visible()
    expect(page.get_by_test_id("parent-run")).to_have_count(0)


def test_the_chat_step_card_opens_the_child_run(page, nodeflow_server: Server, store: GraphStore):
    child_graph = greeter(store, "message")
    chatter = store.create(f"Chatter {uuid.uuid4().hex[:6]}", graph(
        [("chat", "chat-start", {}), ("call", "execute-graph", {"graph": child_graph})],
        ["chat.output -> call.input"])).id
    page.goto(f"{nodeflow_server.url}/graph/{chatter}/chat")
    page.get_by_test_id("chat-input").fill("hello")
    page.get_by_test_id("chat-input").press("Enter")
    answer = page.locator('[data-testid="chat-message"][data-role="assistant"]').last
    expect(answer).to_have_attribute("data-status", "complete", timeout=20_000)
    step = answer.get_by_test_id("step-CALL")
    step.get_by_test_id("open-child-run").click()
    expect(page).to_have_url(re.compile(rf"/graph/{child_graph}\?run=\w+"))
    wait_loaded(page)
    expect(page.get_by_test_id("parent-run")).to_contain_text("started by Chatter")
    greet = page.get_by_test_id("run-node-GREET")
    greet.locator("summary").click()
    expect(greet.get_by_test_id("run-node-output")).to_contain_text('"greeting": "hi hello"')


def test_a_failed_child_run_is_linked_from_the_chat_step_card_too(page, nodeflow_server: Server, store: GraphStore):
    child_graph = greeter(store, "name")  # a chat message has no `name`: the called graph fails
    chatter = store.create(f"Chatter {uuid.uuid4().hex[:6]}", graph(
        [("chat", "chat-start", {}), ("call", "execute-graph", {"graph": child_graph})],
        ["chat.output -> call.input"])).id
    page.goto(f"{nodeflow_server.url}/graph/{chatter}/chat")
    page.get_by_test_id("chat-input").fill("hello")
    page.get_by_test_id("chat-input").press("Enter")
    answer = page.locator('[data-testid="chat-message"][data-role="assistant"]').last
    expect(answer).to_have_attribute("data-status", "failed", timeout=20_000)
    step = answer.get_by_test_id("step-CALL")
    expect(step).to_have_attribute("data-status", "failed")
    step.get_by_test_id("open-child-run").click()
    expect(page).to_have_url(re.compile(rf"/graph/{child_graph}\?run=\w+"))
    wait_loaded(page)
    expect(page.get_by_test_id("run-detail")).to_contain_text("failed")
    expect(page.get_by_test_id("run-node-GREET").get_by_text("failed").first).to_be_visible()


def test_a_link_to_a_run_that_is_not_kept_any_more_says_so(page, nodeflow_server: Server, store: GraphStore):
    """Finished runs are pruned (NODEFLOW_RUNS_MAX_AGE_DAYS): a chat step's or a parent's link can outlive one."""
    child_graph = greeter(store)
    page.goto(f"{nodeflow_server.url}/graph/{child_graph}?run=0123456789abcdef")
    wait_loaded(page)
    expect(page.get_by_text("Run 0123456789ab is not kept any more")).to_be_visible()
    expect(page.get_by_test_id("parent-run")).to_have_count(0)
