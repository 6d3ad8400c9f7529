"""What a new user's walkthrough tripped over, in Chromium at 1440x900: the inspector showed settings that do not
apply (a Schedule's cron in interval mode, with a 1-100,000 slider); saved edits of a live graph silently did not
run; the Runs panel cut trigger names; the Workspace page showed the MCP endpoint without host or copy button."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import urlsplit

import httpx
from playwright.sync_api import expect

from nodeflow_app.store.triggers import TriggerStore

from .server import Server, signed_in_context
from .test_editor import CANVAS, choose, node, open_editor, select
from .test_triggers import create_raw

EXAMPLES = Path(__file__).resolve().parent.parent / "fixtures" / "graphs" / "examples"


def _node(node_id: str, node_type: str, name: str, x: int, data: dict) -> dict:
    return {"id": node_id, "type": node_type, "name": name, "position": {"x": x, "y": 0}, "data": data}


def test_the_inspector_and_the_canvas_show_only_the_settings_that_apply(page, nodeflow_server: Server) -> None:
    raw = {"nodes": [_node("timer", "schedule-trigger", "Timer", 0, {}),
                     _node("call", "http-request", "Call", 360, {"url": "https://example.com/items"})],
           "edges": [{"id": "e1", "source": "timer", "sourceHandle": "output", "target": "call",
                      "targetHandle": "input", "data": {"channel": "flow"}}]}
    open_editor(page, nodeflow_server, create_raw(nodeflow_server, raw, "Show what applies"))

    # A Schedule: cron fields for a cron, interval fields (typed, no slider) for an interval; switching back shows
    # the cron as it was.
    select(page, "Timer", "schedule-trigger")
    expect(page.get_by_test_id("field-cron")).to_have_value("0 9 * * 1-5")
    expect(page.get_by_test_id("field-timezone")).to_be_visible()
    expect(page.get_by_test_id("param-every")).to_have_count(0)
    choose(page, "field-mode", "Every interval")
    expect(page.get_by_test_id("param-cron")).to_have_count(0)
    expect(page.get_by_test_id("param-timezone")).to_have_count(0)
    expect(page.get_by_test_id("field-unit")).to_be_visible()
    every = page.get_by_test_id("field-every")
    expect(every).to_be_visible()
    expect(page.get_by_test_id("slider-every")).to_have_count(0)  # 1 to 100,000 is typed, not slid
    every.fill("15")
    every.press("Enter")
    expect(page.get_by_test_id("schedule-next")).to_be_visible()
    choose(page, "field-mode", "Cron expression")
    expect(page.get_by_test_id("field-cron")).to_have_value("0 9 * * 1-5")
    expect(page.get_by_test_id("param-every")).to_have_count(0)
    choose(page, "field-mode", "Every interval")
    expect(page.get_by_test_id("field-every")).to_have_value("15")  # kept while hidden

    # An HTTP Request: the body fields of its body type; its File socket row on the canvas only for multipart.
    select(page, "Call", "http-request")
    for hidden in ("json_body", "form", "text_body", "file", "next_url_path", "page_parameter", "max_pages"):
        expect(page.get_by_test_id(f"param-{hidden}")).to_have_count(0)
    expect(page.get_by_test_id("inline-Call-file")).to_have_count(0)
    expect(page.get_by_test_id("param-max_redirects")).to_be_visible()
    choose(page, "field-body_type", "Multipart form")
    expect(page.get_by_test_id("param-form")).to_be_visible()
    expect(page.get_by_test_id("param-file")).to_be_visible()
    expect(page.get_by_test_id("inline-Call-file")).to_be_visible()
    expect(page.get_by_test_id("param-json_body")).to_have_count(0)
    choose(page, "field-pagination", "Page number parameter")
    expect(page.get_by_test_id("field-page_parameter")).to_have_value("page")
    expect(page.get_by_test_id("param-max_pages")).to_be_visible()
    expect(page.get_by_test_id("param-next_url_path")).to_have_count(0)


def test_saved_edits_of_a_live_graph_say_they_are_not_live_and_go_live_in_one_click(
        browser, nodeflow_server: Server) -> None:
    """In a wide window the badge says "(v2 saved)" in words; narrower, its amber, its tooltip and the button do
    (test_editor_ux.py measures the toolbar)."""
    raw = json.loads((EXAMPLES / "webhook.json").read_text())
    graph_id = create_raw(nodeflow_server, raw, "Live and saved")
    context = signed_in_context(browser, nodeflow_server, viewport={"width": 1680, "height": 900})
    try:
        _make_the_saved_version_live(context.new_page(), nodeflow_server, graph_id)
    finally:
        context.close()


def _make_the_saved_version_live(page, nodeflow_server: Server, graph_id: str) -> None:
    page.set_default_timeout(15_000)
    open_editor(page, nodeflow_server, graph_id)
    page.get_by_test_id("graph-active").click()
    label = page.get_by_test_id("graph-active-label")
    expect(label).to_have_text("Live · v1")
    expect(page.get_by_test_id("make-latest-live")).to_have_count(0)

    # An edit, saved: v2 is not what webhooks run, and the toolbar says so.
    page.evaluate(f"{CANVAS}.send('onMove', {{moves: [{{id: 'answer', position: {{x: 900, y: 40}}}}]}})")
    page.get_by_test_id("save-graph").click()
    expect(page.get_by_test_id("save-status")).to_have_text("Saved · v2")
    expect(label).to_have_text("Live · v1 (v2 saved)")
    expect(label.get_by_text("(v2 saved)")).to_be_visible()
    label.hover()
    expect(page.get_by_role("tooltip")).to_contain_text("still run v1")
    make_live = page.get_by_test_id("make-latest-live")
    expect(make_live).to_have_text("Make v2 live")
    make_live.click()
    expect(label).to_have_text("Live · v2")
    expect(make_live).to_have_count(0)
    triggers = TriggerStore(nodeflow_server.db_url)
    try:
        assert triggers.active_version(graph_id) == 2
    finally:
        triggers.engine.dispose()


def test_the_runs_panel_shows_a_trigger_name_and_who_started_it_whole(page, nodeflow_server: Server) -> None:
    """At the panel's usual width, "Order received" started by "webhook" was cut to "Order…" beside the rest."""
    graph_id = create_raw(nodeflow_server, json.loads((EXAMPLES / "webhook.json").read_text()), "Runs by webhook")
    open_editor(page, nodeflow_server, graph_id)
    page.get_by_test_id("graph-active").click()
    expect(page.get_by_test_id("graph-active-label")).to_have_text("Live · v1")
    node(page, "Order received").click()
    path = urlsplit(page.get_by_test_id("webhook-url").inner_text()).path
    with httpx.Client(base_url=nodeflow_server.url, timeout=15) as client:
        assert client.post(path + "?source=curl", json={"sku": "pen", "qty": 2}).status_code == 200
    page.get_by_test_id("toggle-runs").click()
    row = page.get_by_test_id("run-row").first
    expect(row).to_contain_text("completed")
    for text in (row.get_by_text("Order received", exact=True), row.get_by_text("webhook", exact=True)):
        expect(text).to_be_visible()
        assert text.evaluate("e => e.scrollWidth <= e.clientWidth"), text.evaluate("e => e.outerHTML")


def test_the_workspace_page_shows_the_whole_mcp_address_with_a_copy_button(browser, nodeflow_server: Server):
    context = signed_in_context(browser, nodeflow_server)
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=nodeflow_server.url)
    try:
        page = context.new_page()
        page.goto(nodeflow_server.url + "/workspace")
        url = page.get_by_test_id("mcp-url")
        expect(url).to_have_text(re.compile("^" + re.escape(nodeflow_server.url) + r"/api/mcp/\w+$"), timeout=15_000)
        page.get_by_test_id("mcp-url-copy").click()
        page.wait_for_function("t => navigator.clipboard.readText().then((c) => c === t)", arg=url.inner_text())
    finally:
        context.close()
