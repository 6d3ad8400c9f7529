"""Import of a graph of the older runtime in Chromium: the migration report first, then the converted graph."""

from __future__ import annotations

import json

from playwright.sync_api import expect

from .server import Server
from .test_graph_list import GRAPHS, graph_id_of_editor_url, import_file, open_list, row_of

LEGACY = GRAPHS / "legacy"


def test_import_shows_the_report_then_saves_and_opens_the_converted_graph(page, nodeflow_server: Server) -> None:
    open_list(page, nodeflow_server)
    total_before = page.get_by_test_id("graph-count").inner_text()
    import_file(page, LEGACY / "subagents.json")

    dialog = page.get_by_test_id("legacy-import")
    dialog.wait_for()
    assert "subagents.json" in dialog.inner_text()
    # Warnings depend on the server's providers (gpt-5 goes to OpenAI, maybe not configured there).
    assert page.get_by_test_id("legacy-summary").inner_text().startswith("7 converted, 1 not mapped, ")
    expect(dialog.locator('[data-kind="mapped"]')).to_have_count(7)
    texts = [line.inner_text() for line in dialog.get_by_test_id("legacy-line").all()]
    assert any("node lead (agent)" in t and "Agent 'Lead'" in t for t in texts)
    assert any("edge s1" in t and "researcher.tools-out -> lead.tools" in t for t in texts)
    [unmapped] = dialog.locator('[data-kind="unmapped"]').all()
    assert "tools.web_search = true" in unmapped.inner_text()
    # Nothing is stored while the report is open.
    assert page.get_by_test_id("graph-count").inner_text() == total_before

    page.get_by_test_id("legacy-confirm").click()
    graph_id = graph_id_of_editor_url(page)
    page.locator(".react-flow__node").first.wait_for()
    expect(page.locator(".react-flow__node")).to_have_count(4)

    open_list(page, nodeflow_server)
    row = row_of(page, graph_id)
    row.wait_for()
    assert row.get_attribute("data-testid") == "graph-row-Research team"
    assert row.get_by_test_id("graph-node-count").inner_text() == "4"


def test_import_of_an_old_graph_breaking_a_sub_agent_rule_stores_nothing(page, nodeflow_server: Server) -> None:
    open_list(page, nodeflow_server)
    import_file(page, LEGACY / "invalid_subagent_cycle.json")

    dialog = page.get_by_test_id("legacy-import")
    dialog.wait_for()
    [error] = dialog.locator('[data-kind="error"]').all()
    assert "edge s2" in error.inner_text() and "sub-agent cycle: a -> b -> a" in error.inner_text()
    assert page.get_by_test_id("legacy-summary").inner_text().startswith("1 error(s)")
    expect(page.get_by_test_id("legacy-confirm")).to_be_disabled()
    page.get_by_test_id("legacy-cancel").click()
    dialog.wait_for(state="detached")
    assert page.url.rstrip("/") == nodeflow_server.url


def test_import_of_a_sub_agent_chain_deeper_than_the_recursion_limit_shows_its_report(
        page, nodeflow_server: Server, tmp_path) -> None:
    """1,100 agents each the sub-agent of the one before (164 KB): the migration raised RecursionError, the upload
    handler crashed and no dialog opened."""
    agents = [{"id": f"a{i}", "type": "agent", "data": {"tools": {"subagents": True}}} for i in range(1100)]
    links = [{"id": f"e{i}", "source": f"a{i}", "target": f"a{i + 1}", "sourceHandle": "subagent"} for i in range(1099)]
    old = tmp_path / "team-chain.json"
    old.write_text(json.dumps({"nodes": [{"id": "s", "type": "start"}, *agents], "edges": links}))
    open_list(page, nodeflow_server)
    import_file(page, old)

    dialog = page.get_by_test_id("legacy-import")
    dialog.wait_for()
    assert "team-chain.json" in dialog.inner_text()
    assert page.get_by_test_id("legacy-summary").inner_text().startswith("2200 converted, 0 not mapped, ")
    expect(page.get_by_test_id("legacy-confirm")).to_be_enabled()
