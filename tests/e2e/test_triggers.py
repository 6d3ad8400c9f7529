"""Webhooks and schedules in Chromium: a person activates a graph with a webhook, an HTTP call (as curl would
make it) runs the live version and the run arrives in the Runs panel; "Listen for test event" shows a test
call's payload; a Schedule trigger shows its next three times, and once active its runs arrive until it is
switched off; a webhook run goes on when its caller hangs up."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.sync_api import expect

from nodeflow_app.store.accounts import AccountStore
from nodeflow_app.store.graphs import GraphStore

from tests.api.conftest import fields
from tests.llm.graphs import graph

from .server import OWNER_EMAIL, Server
from .test_api import owner_token, poll
from .test_editor import choose, node, open_editor

EXAMPLES = Path(__file__).resolve().parent.parent / "fixtures" / "graphs" / "examples"


def create_raw(server: Server, raw: dict, name: str) -> str:
    """Stores `raw` in the owner's workspace; returns its id."""
    url = f"sqlite:///{server.data_dir / 'nodeflow.db'}"
    accounts, graphs = AccountStore(url), GraphStore(url)
    try:
        workspace = accounts.personal_workspace(accounts.user_by_email(OWNER_EMAIL).id).id
        return graphs.create(name, raw, workspace_id=workspace).id
    finally:
        accounts.engine.dispose()
        graphs.engine.dispose()


@pytest.fixture
def create(nodeflow_server: Server):
    """Stores an example graph in the owner's workspace; returns its id."""
    return lambda example, name: create_raw(nodeflow_server, json.loads((EXAMPLES / example).read_text()), name)


def test_activate_a_webhook_graph_and_see_a_call_arrive_in_the_runs(page, nodeflow_server: Server, create):
    graph_id = create("webhook.json", "Orders by webhook")
    open_editor(page, nodeflow_server, graph_id)
    node(page, "Order received").click()
    url = page.get_by_test_id("webhook-url").inner_text()  # the whole URL, to copy into the calling system
    path = urlsplit(url).path
    assert url == nodeflow_server.url + path and path.startswith("/api/hooks/")
    with httpx.Client(base_url=nodeflow_server.url, timeout=15) as client:
        assert client.post(path, json={"sku": "pen", "qty": 2}).status_code == 404  # not active yet
        page.get_by_test_id("graph-active").click()
        expect(page.get_by_test_id("graph-active-label")).to_have_text("Live · v1")
        answer = client.post(path + "?source=curl", json={"sku": "pen", "qty": 2})
    assert answer.status_code == 200
    assert answer.json() == {"sku": "pen", "qty": 2, "source": "curl", "status": "accepted"}
    page.get_by_test_id("toggle-runs").click()
    page.get_by_test_id("refresh-runs").click()
    expect(page.get_by_test_id("run-started-by").first).to_contain_text("webhook")

    # Test mode: the editor listens, a call to the test address shows its payload.
    page.get_by_test_id("webhook-listen").click()
    expect(page.get_by_test_id("webhook-stop-listening")).to_be_visible()
    test_path = urlsplit(page.get_by_test_id("webhook-test-url").inner_text()).path
    with httpx.Client(base_url=nodeflow_server.url, timeout=15) as client:
        for _ in range(50):  # the listener is recorded by the background event a moment after the click
            heard = client.post(test_path + "?source=test", json={"sku": "ink", "qty": 1})
            if heard.status_code != 404:
                break
            page.wait_for_timeout(100)
    assert heard.status_code == 200 and heard.json()["sku"] == "ink", heard.text
    expect(page.get_by_test_id("webhook-heard")).to_contain_text('"sku": "ink"')

    # Switched off in the graph list: the address answers 404 again.
    page.goto(f"{nodeflow_server.url}/")
    row = page.get_by_test_id("graph-row-Orders by webhook")
    expect(row).to_be_visible()
    switch = page.get_by_test_id("graph-active-Orders by webhook")
    expect(switch).to_have_attribute("data-state", "checked")
    switch.click()
    expect(switch).to_have_attribute("data-state", "unchecked")
    with httpx.Client(base_url=nodeflow_server.url, timeout=15) as client:
        assert client.post(path, json={"sku": "pen", "qty": 2}).status_code == 404


def test_a_schedule_trigger_shows_its_next_three_times(page, nodeflow_server: Server, create):
    graph_id = create("schedule.json", "Morning schedule")
    open_editor(page, nodeflow_server, graph_id)
    node(page, "Weekdays 9:00").click()
    times = page.get_by_test_id("schedule-next").locator("p, span")
    expect(times).to_have_count(3)
    assert all("09:00:00 CE" in t for t in times.all_inner_texts())  # 9:00 in Paris (CET or CEST)


def test_a_header_token_typed_in_the_inspector_guards_the_webhook(page, nodeflow_server: Server, create):
    graph_id = create("webhook.json", "Guarded webhook")
    open_editor(page, nodeflow_server, graph_id)
    node(page, "Order received").click()
    choose(page, "field-auth", "Header token")
    secret = page.get_by_test_id("field-auth_secret")
    secret.fill("s3cret-token")
    secret.press("Enter")
    expect(secret).to_have_attribute("data-secret-set", "true")
    expect(secret).to_have_value("")  # the token is never shown again
    page.get_by_test_id("graph-active").click()  # saves the edit, then makes that version live
    expect(page.get_by_test_id("graph-active-label")).to_have_text("Live · v2")
    path = urlsplit(page.get_by_test_id("webhook-url").inner_text()).path
    with httpx.Client(base_url=nodeflow_server.url, timeout=15) as client:
        assert client.post(path + "?source=x", json={"sku": "a", "qty": 1}).status_code == 401
        answer = client.post(path + "?source=x", json={"sku": "a", "qty": 1},
                             headers={"X-Webhook-Token": "s3cret-token"})
    assert answer.status_code == 200 and answer.json()["status"] == "accepted"
    assert "s3cret-token" not in page.content()


def test_activate_a_schedule_and_see_its_runs_arrive(page, nodeflow_server: Server):
    raw = json.loads((EXAMPLES / "schedule.json").read_text())
    raw["nodes"][0]["data"] = {"mode": "interval", "every": 1, "unit": "seconds", "missed": "skip"}
    graph_id = create_raw(nodeflow_server, raw, "Every second")
    open_editor(page, nodeflow_server, graph_id)
    page.get_by_test_id("graph-active").click()
    expect(page.get_by_test_id("graph-active-label")).to_have_text("Live · v1")
    page.get_by_test_id("toggle-runs").click()
    started_by = page.get_by_test_id("run-started-by")
    for _ in range(40):  # the scheduler looks at the clock every second
        page.get_by_test_id("refresh-runs").click()
        if started_by.count() >= 2:
            break
        page.wait_for_timeout(500)
    expect(started_by.first).to_contain_text("schedule")
    assert started_by.count() >= 2, "a schedule firing every second started fewer than two runs in 20 s"
    page.get_by_test_id("graph-active").click()  # off: no more runs
    expect(page.get_by_test_id("graph-active-label")).to_have_count(0)
    page.wait_for_timeout(1500)  # a tick already under way may still fire once
    settled = runs_of(nodeflow_server, graph_id)  # read from the API: the list's refresh arrives a moment later
    page.get_by_test_id("refresh-runs").click()
    expect(started_by).to_have_count(settled)
    page.wait_for_timeout(2500)
    assert runs_of(nodeflow_server, graph_id) == settled, "a schedule that was switched off started runs"
    page.get_by_test_id("refresh-runs").click()
    expect(started_by).to_have_count(settled)


def runs_of(server: Server, graph_id: str) -> int:
    token, _ = owner_token(server)
    with httpx.Client(base_url=server.url, timeout=10, headers={"authorization": f"Bearer {token}"}) as client:
        answer = client.get(f"/api/v1/graphs/{graph_id}/runs")
    answer.raise_for_status()
    return len(answer.json())


def test_a_webhook_run_goes_on_when_the_caller_hangs_up(page, nodeflow_server: Server):
    slow = graph([("hook", "webhook-trigger", {"methods": "POST", "respond": "last_node"}),
                  ("wait", "wait", {"amount": 2}), ("after", "edit-fields", fields(waited=True))],
                 ["hook.output -> wait.input", "wait.output -> after.input"])
    for index, item in enumerate(slow["nodes"]):  # side by side, so each can be clicked
        item["position"] = {"x": index * 320, "y": 100}
    graph_id = create_raw(nodeflow_server, slow, "Slow webhook")
    open_editor(page, nodeflow_server, graph_id)
    page.get_by_test_id("graph-active").click()
    expect(page.get_by_test_id("graph-active-label")).to_have_text("Live · v1")
    node(page, "HOOK").click()
    path = urlsplit(page.get_by_test_id("webhook-url").inner_text()).path
    token, _ = owner_token(nodeflow_server)
    with httpx.Client(base_url=nodeflow_server.url, timeout=10,
                      headers={"authorization": f"Bearer {token}"}) as client:
        with pytest.raises(httpx.ReadTimeout):  # the caller gives up before the last node finishes
            client.post(path, json={"order": 7}, timeout=0.5)
        [summary] = client.get(f"/api/v1/graphs/{graph_id}/runs").json()
        run = poll(client, summary["run_id"])
    assert (run["status"], run["started_by"], run["output"]["waited"]) == ("completed", "webhook", True)
    assert run["output"]["body"] == {"order": 7} and run["output"]["headers"]["authorization"] == "(hidden)"
