"""The MCP endpoint in process, through the MCP Python client (streamable HTTP over ASGI): it lists the
workspace's graphs with an MCP Tool trigger and calls one; tokens only."""

from __future__ import annotations

import json
from contextlib import asynccontextmanager
from pathlib import Path

import httpx2
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.llm.graphs import graph
from tests.store.writes import recorded_writes

EXAMPLE = Path(__file__).parents[1] / "fixtures" / "graphs" / "examples" / "mcp_tool.json"


@asynccontextmanager
async def mcp_session(team, who: str = "owner", workspace: str | None = None):
    http = httpx2.AsyncClient(transport=httpx2.ASGITransport(app=team.api), base_url="http://api.test",
                              headers={"authorization": f"Bearer {team.tokens[who]}"})
    url = f"http://api.test/api/mcp/{workspace or team.workspace_id}"
    async with http, streamable_http_client(url, http_client=http) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            yield session


@pytest.fixture
def tools(team) -> dict[str, str]:
    """The example tool, a second tool on another graph, and a graph whose tool has no valid name."""
    example = team.graphs.create("Orders", json.loads(EXAMPLE.read_text()), workspace_id=team.workspace_id).id
    failing = graph([("tool", "mcp-tool", {"tool_name": "always_fails", "input_schema": {}}),
                     ("boom", "code", {"code": "raise ValueError('no stock')"})], ["tool.output -> boom.input"])
    other = team.graphs.create("Fails", failing, workspace_id=team.workspace_id).id
    nameless = graph([("tool", "mcp-tool", {"tool_name": "bad name"})], [])
    team.graphs.create("Nameless", nameless, workspace_id=team.workspace_id)
    return {"order_status": example, "always_fails": other}


async def test_the_client_lists_the_workspaces_tools(team, tools):
    async with mcp_session(team, "viewer") as session:
        listed = {tool.name: tool for tool in (await session.list_tools()).tools}
    assert set(listed) == {"order_status", "always_fails"}
    assert listed["order_status"].description == "The shipping status of an order, by its number."
    assert listed["order_status"].input_schema["required"] == ["order_id"]
    assert listed["always_fails"].description == "Runs the NodeFlow graph 'Fails'."


async def test_calling_a_tool_runs_its_graph(team, tools):
    async with mcp_session(team) as session:
        # The process's first JSON Transform starts its evaluator (~0.3 s): a run that slow is written as it starts.
        await session.call_tool("order_status", {"order_id": 1})
        writes = recorded_writes(team.launcher.store)
        result = await session.call_tool("order_status", {"order_id": 7})
        assert {status for _, status in writes} == {"completed"}  # written once, with its end
        wrong = await session.call_tool("order_status", {"order_id": "seven"})
        failed = await session.call_tool("always_fails", {})
        unknown = await session.call_tool("nope", {})
    assert not result.is_error and result.structured_content == {"order": 7, "status": "shipped"}
    assert json.loads(result.content[0].text) == {"order": 7, "status": "shipped"}
    assert wrong.is_error and "'seven' is not of type 'integer'" in wrong.content[0].text
    assert failed.is_error and "no stock" in failed.content[0].text
    assert unknown.is_error and unknown.content[0].text == "no tool 'nope' in this workspace"
    [run] = team.launcher.store.list_runs(tools["order_status"])[:1]
    assert (run["started_by"], run["started_by_user"]) == ("mcp", "Ada")


async def test_only_a_token_of_the_workspace_opens_it(team, tools):
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    async with team.client("owner", session=True) as signed_in, team.client("outsider") as outsider_client:
        cookie = await signed_in.post(f"/api/mcp/{team.workspace_id}", json=init)
        outsider = await outsider_client.post(f"/api/mcp/{team.workspace_id}", json=init)
    assert cookie.status_code == 401 and "takes an API token" in cookie.json()["detail"]
    assert (outsider.status_code, outsider.json()) == (404, {"detail": "not found"})


async def test_a_lone_surrogate_in_the_output_becomes_a_replacement_character(team):
    """The MCP library writes UTF-8, which cannot hold one: the call failed instead of answering."""
    odd = graph([("tool", "mcp-tool", {"tool_name": "odd_text", "input_schema": {}}),
                 ("make", "code", {"code": "return {'text': 'a\\ud800b'}"})], ["tool.output -> make.input"])
    team.graphs.create("Odd", odd, workspace_id=team.workspace_id)
    async with mcp_session(team) as session:
        result = await session.call_tool("odd_text", {})
    assert not result.is_error and result.structured_content == {"text": "a\ufffdb"}


async def test_a_get_is_405_as_the_spec_allows_a_server_without_a_stream_of_its_own(team):
    """Stateless, the server never sends unasked: the stream a GET opened could carry nothing, ever."""
    async with team.client("owner") as client:
        answer = await client.get(f"/api/mcp/{team.workspace_id}", headers={"accept": "text/event-stream"})
    assert answer.status_code == 405 and set(answer.headers["allow"].split(", ")) == {"POST", "DELETE"}
