"""Secret parameters in Chromium (issue 12): an MCP Server's header value never reaches the browser (no frame of
the page's websocket carries it nor its ciphertext), the inspector says "set", typing replaces it (stored
encrypted), and the export leaves it out and says which secret to enter again."""
# The server's database is SQLite in its data folder; the test reads it directly to see what is at rest.

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import expect

from nodeflow_app.store.graphs import GraphStore
from nodes._registry import default_registry

from .server import Server

TOKEN = "Bearer tok-e2e-first-4242"
NEW_TOKEN = "tok-e2e-second-9797"


@pytest.fixture
def store(nodeflow_server: Server, monkeypatch):
    monkeypatch.setenv("NODEFLOW_DATA_DIR", str(nodeflow_server.data_dir))  # seal with the server's key
    monkeypatch.delenv("NODEFLOW_SECRET_KEY", raising=False)
    graphs = GraphStore(f"sqlite:///{nodeflow_server.data_dir / 'nodeflow.db'}")
    yield graphs
    graphs.engine.dispose()


def mcp_graph() -> dict:
    return {"id": "secret-e2e", "name": "Secret headers", "edges": [], "nodes": [
        {"id": "mcp-1", "type": "mcp-server", "version": 2, "name": "MCP", "position": {"x": 80, "y": 80},
         "data": {"transport": "streamable-http", "url": "https://mcp.example/mcp",
                  "headers": [{"name": "Authorization", "value": TOKEN}]}}]}


def test_a_secret_header_never_reaches_the_browser_nor_the_export(page, nodeflow_server: Server, store) -> None:
    summary, issues = store.import_json(json.dumps(mcp_graph()), default_registry())
    assert issues == []
    stored = json.dumps(store.get(summary.id).graph)
    ciphertext = store.get(summary.id).graph["nodes"][0]["data"]["headers"][0]["value"]["$secret"]
    assert TOKEN not in stored

    frames: list[str] = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda payload: frames.append(str(payload))))
    page.goto(f"{nodeflow_server.url}/graph/{summary.id}")
    page.wait_for_function("window.__nodeflowCanvas && window.__nodeflowCanvas.rev() > 0")
    page.get_by_test_id("node-MCP").locator(".nf-header").click()
    page.get_by_test_id("inspector-form-mcp-server").wait_for()
    value = page.get_by_test_id("row-headers-value")
    expect(value).to_have_attribute("placeholder", "•••• set (type to replace)")
    expect(value).to_have_value("")
    expect(page.get_by_test_id("row-headers-name")).to_have_value("Authorization")

    value.fill(NEW_TOKEN)
    value.press("Enter")  # leaves the field: the new secret goes to the server, which seals it
    expect(value).to_have_value("")
    page.get_by_test_id("save-graph").click()
    for _ in range(50):
        now = store.get(summary.id).graph["nodes"][0]["data"]["headers"][0]["value"]
        if now.get("$secret") != ciphertext:
            break
        page.wait_for_timeout(200)
    assert now.get("$secret") and now["$secret"] != ciphertext, "the new secret was not saved"
    assert NEW_TOKEN not in json.dumps(store.get(summary.id).graph)

    with page.expect_download() as download:
        page.get_by_test_id("export-graph").click()
    exported = Path(download.value.path()).read_text()
    assert json.loads(exported)["nodes"][0]["data"]["headers"] == [{"name": "Authorization", "value": {"$secret": ""}}]
    page.get_by_text("Secrets are not exported; enter them again after importing: 'MCP'.headers Authorization").wait_for()

    seen = "\n".join(frames) + page.content()
    assert frames, "no websocket frame was recorded"
    for secret in (TOKEN, NEW_TOKEN, ciphertext, now["$secret"]):
        assert secret not in seen and secret not in exported
