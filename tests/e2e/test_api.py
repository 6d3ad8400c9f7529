"""The HTTP API on the real production server (front end, Reflex backend and API on one port)."""

from __future__ import annotations

import json
import re
import time

import httpx
import httpx2
import openai
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from playwright.sync_api import expect

from nodeflow_app.cli import main as cli
from nodeflow_app.store.accounts import AccountStore
from nodeflow_app.store.graphs import GraphStore

from tests.api.test_mcp_endpoint import EXAMPLE as MCP_EXAMPLE
from tests.api.test_runs_api import waiting_graph
from tests.llm.fake_openai import text
from tests.llm.graphs import MODEL, graph

from .server import OWNER_EMAIL, Server, signed_in_context


def owner_token(server: Server) -> tuple[str, str]:
    """(a new API token of the install's owner for their workspace, that workspace's id)."""
    accounts = AccountStore(f"sqlite:///{server.data_dir / 'nodeflow.db'}")
    try:
        owner = accounts.user_by_email(OWNER_EMAIL)
        workspace = accounts.personal_workspace(owner.id).id
        return accounts.create_api_token(owner.id, workspace, "e2e")[0], workspace
    finally:
        accounts.engine.dispose()


def stored_graph(server: Server, workspace: str, raw: dict) -> str:
    graphs = GraphStore(f"sqlite:///{server.data_dir / 'nodeflow.db'}")
    try:
        return graphs.create("API e2e graph", raw, workspace_id=workspace).id
    finally:
        graphs.engine.dispose()


def poll(client: httpx.Client, run_id: str, timeout: float = 30) -> dict:
    """GET the run until it is no longer running (how a client follows a long run without a connection)."""
    deadline = time.monotonic() + timeout
    while (run := client.get(f"/api/v1/runs/{run_id}").json())["status"] == "running":
        assert time.monotonic() < deadline, run
        time.sleep(0.2)
    return run


def test_runs_go_on_when_the_caller_disconnects_and_polling_follows_them(nodeflow_server: Server):
    token, workspace = owner_token(nodeflow_server)
    graph_id = stored_graph(nodeflow_server, workspace, waiting_graph(2))
    auth = {"authorization": f"Bearer {token}"}
    with httpx.Client(base_url=nodeflow_server.url, headers=auth, timeout=10) as client:
        # A streaming caller reads the run's id and hangs up.
        with client.stream("POST", f"/api/v1/graphs/{graph_id}/runs", json={"mode": "stream"}) as stream:
            lines = stream.iter_lines()
            assert next(lines) == "event: run"
            streamed = json.loads(next(lines).removeprefix("data: "))["run_id"]
        # A waiting caller gives up before the end.
        with pytest.raises(httpx.ReadTimeout):
            client.post(f"/api/v1/graphs/{graph_id}/runs", json={"mode": "wait"}, timeout=0.5)
        waited = client.get("/api/v1/graphs").json()  # the server still answers meanwhile
        assert graph_id in [g["id"] for g in waited]
        # The timed-out caller never got its run's id: the graph's run list has it.
        runs = client.get(f"/api/v1/graphs/{graph_id}/runs").json()
        assert len(runs) == 2 and streamed in [r["run_id"] for r in runs]
        for run_id in (r["run_id"] for r in runs):
            run = poll(client, run_id)
            assert run["status"] == "completed" and run["output"] == {"waited": True}
            assert (run["started_by"], run["started_by_user"]) == ("api", "Admin")


def test_the_api_answers_beside_the_pages_with_a_token(nodeflow_server: Server):
    token, workspace = owner_token(nodeflow_server)
    graphs = GraphStore(f"sqlite:///{nodeflow_server.data_dir / 'nodeflow.db'}")
    try:
        graph_id = graphs.create("API e2e graph", workspace_id=workspace).id
    finally:
        graphs.engine.dispose()
    with httpx.Client(base_url=nodeflow_server.url, timeout=10) as client:
        refused = client.get("/api/v1/graphs")
        assert refused.status_code == 401 and refused.headers["www-authenticate"] == "Bearer"
        listed = client.get("/api/v1/graphs", headers={"authorization": f"Bearer {token}"})
        assert listed.status_code == 200 and graph_id in [g["id"] for g in listed.json()]
        assert client.get("/api/v1/openapi.json").json()["info"]["title"] == "NodeFlow API"
        assert client.get("/ping").status_code == 200 and client.get("/").status_code == 200


@pytest.mark.parametrize("method, path, status, allow", [
    ("GET", "/api/mcp/WORKSPACE", 405, "DELETE, POST"), ("GET", "/api/v1/runs/RUN/stop", 405, "POST"),
    ("DELETE", "/api/v1/graphs", 405, "GET"), ("GET", "/api/v1/graphs/GRAPH", 404, None),
    ("GET", "/api/v1/nothing", 404, None)])
def test_an_unknown_api_path_or_method_answers_json_not_the_front_ends_page(nodeflow_server: Server, method, path,
                                                                               status, allow):
    """The built front end is mounted behind the API: these answered its HTML 404 page (or a plain-text 405)."""
    answer = httpx.request(method, nodeflow_server.url + path, timeout=10)
    assert (answer.status_code, answer.headers["content-type"]) == (status, "application/json"), answer.text[:200]
    assert answer.headers.get("allow") == allow and f"{method} {path}" in answer.json()["detail"]


def test_the_openai_sdk_chats_with_an_agent_graph_streaming_and_not(nodeflow_server: Server, fake_llm):
    token, workspace = owner_token(nodeflow_server)
    agent = graph([("chat", "chat-start", {}), ("agent", "agent", {"model": MODEL})], ["chat.output -> agent.input"])
    graph_id = stored_graph(nodeflow_server, workspace, agent)
    client = openai.OpenAI(base_url=f"{nodeflow_server.url}/api/v1", api_key=token, max_retries=0, timeout=30)
    assert graph_id in [m.id for m in client.models.list().data]

    fake_llm.script(text(["Hello", " from", " the", " graph"]))
    completion = client.chat.completions.create(model=graph_id, messages=[{"role": "user", "content": "Hi"}])
    assert completion.choices[0].message.content == "Hello from the graph"
    assert fake_llm.requests[-1]["messages"][-1]["content"] == "Hi"  # the Chat Start's message reached the model

    fake_llm.script(text(["Stre", "amed", "!"], delay=0.05))
    stream = client.chat.completions.create(model=graph_id, stream=True,
                                            messages=[{"role": "user", "content": "Stream it"}])
    deltas = [chunk.choices[0].delta.content for chunk in stream if chunk.choices[0].delta.content]
    assert deltas == ["Stre", "amed", "!"]  # one chunk per token, as the model streamed them


async def test_the_mcp_client_lists_and_calls_a_graph_tool(nodeflow_server: Server):
    token, workspace = owner_token(nodeflow_server)
    stored_graph(nodeflow_server, workspace, json.loads(MCP_EXAMPLE.read_text()))
    http = httpx2.AsyncClient(headers={"authorization": f"Bearer {token}"}, timeout=30)
    async with http, streamable_http_client(f"{nodeflow_server.url}/api/mcp/{workspace}", http_client=http) as streams:
        async with ClientSession(*streams) as session:
            await session.initialize()
            assert "order_status" in [tool.name for tool in (await session.list_tools()).tools]
            result = await session.call_tool("order_status", {"order_id": 120})
    assert not result.is_error and result.structured_content == {"order": 120, "status": "packing"}


def test_the_workspace_page_shows_the_mcp_endpoint_beside_the_tokens(browser, nodeflow_server: Server):
    context = signed_in_context(browser, nodeflow_server)
    try:
        page = context.new_page()
        page.goto(nodeflow_server.url + "/workspace")
        url = page.get_by_test_id("mcp-url")
        expect(url).to_have_text(re.compile("^" + re.escape(nodeflow_server.url) + r"/api/mcp/\w+$"), timeout=15_000)
        shown = url.inner_text().removeprefix(nodeflow_server.url + "/api/mcp/")
    finally:
        context.close()
    accounts = AccountStore(f"sqlite:///{nodeflow_server.data_dir / 'nodeflow.db'}")
    try:
        owner = accounts.user_by_email(OWNER_EMAIL)
        assert shown in [w.id for w in accounts.workspaces(owner.id)]  # the page's current workspace
    finally:
        accounts.engine.dispose()


def test_the_cli_lists_and_runs_graphs_on_the_server_with_a_token(nodeflow_server: Server, capsys, monkeypatch):
    token, workspace = owner_token(nodeflow_server)
    graph_id = stored_graph(nodeflow_server, workspace, waiting_graph(0.2))
    monkeypatch.setenv("NODEFLOW_TOKEN", token)
    assert cli(["remote", "graphs", "--url", nodeflow_server.url]) == 0
    assert graph_id in capsys.readouterr().out
    assert cli(["remote", "run", graph_id, "--url", nodeflow_server.url, "--input", '{"a": 1}']) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("run ") and "wait: completed" in lines and "after: completed" in lines
    final = json.loads(lines[-1])
    assert (final["event_type"], final["output"]) == ("run_completed", {"a": 1, "waited": True})
    assert cli(["remote", "get", final["run_id"], "--url", nodeflow_server.url]) == 0
    assert json.loads(capsys.readouterr().out)["started_by"] == "api"
    assert cli(["remote", "graphs", "--url", nodeflow_server.url, "--token", "nf_forged"]) == 2
    assert "the server answered 401" in capsys.readouterr().err


def test_the_api_docs_page_renders_without_internet(browser, nodeflow_server: Server):
    """Swagger UI's files came from a CDN: without internet the page stayed blank. Every request to another host is
    cut off here; the page must still show the API's operations. (After the asyncio tests: the browser fixture
    keeps Playwright's loop running.)"""
    context = browser.new_context()
    outside: list[str] = []

    def only_this_server(route):
        if route.request.url.startswith(nodeflow_server.url):
            return route.continue_()
        outside.append(route.request.url)
        return route.abort()

    context.route(re.compile(r"^https?://"), only_this_server)
    page = context.new_page()
    try:
        page.goto(nodeflow_server.url + "/api/v1/docs")
        expect(page.locator(".opblock-summary-path", has_text="/api/v1/graphs/{graph_id}/runs").first).to_be_visible()
    finally:
        context.close()
    assert outside == []
