"""`/api/mcp/{workspace_id}`: the workspace's graphs with an MCP Tool trigger, served as tools of a
streamable-HTTP MCP server (the `mcp` library's low-level Server and session manager).

Token authentication only (no session cookie: a browser must not be able to call tools). Each HTTP request
is handled statelessly by a fresh server bound to the workspace, so every request sees the graphs as they
are saved now and no session outlives its token. A tool call runs the graph from its MCP Tool node
(started by "mcp", through the launcher) in a task of its own and answers with the graph's final output
(graph_runner.final_output); a failed run is a tool error naming why.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from fastapi import APIRouter, Depends, HTTPException, Request
from mcp.server.lowlevel.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from nodeflow_app.api.access import ApiAccess, authorize, requires
from nodeflow_app.runs.detached import drive
from nodeflow_app.contract import NodeError
from nodeflow_app.runs.graph_runner import final_output
from nodeflow_app.store.encoding import replaced_surrogates
from nodes.trigger.mcp_tool.executor import input_schema, tool_name

STARTED_BY = "mcp"  # the entry point: the MCP Tool trigger's definition lists it in `started_by`
router = APIRouter(tags=["mcp"])


@dataclass(frozen=True)
class GraphTool:
    name: str
    description: str
    schema: dict[str, Any]
    graph_id: str
    node_id: str


@router.api_route("/api/mcp/{workspace_id}", methods=["POST", "DELETE"], include_in_schema=False)
@requires("chat")
async def mcp_endpoint(workspace_id: str, request: Request, access: ApiAccess = Depends(authorize)) -> Response:
    if access.via != "token":
        raise HTTPException(401, "the MCP endpoint takes an API token (Authorization: Bearer nf_...)",
                            headers={"WWW-Authenticate": "Bearer"})
    return _Handoff(_server(request.app.state.services, workspace_id))


class _Handoff(Response):
    """Hands the request (its body still unread) to the MCP library's streamable-HTTP transport."""

    def __init__(self, server: Server) -> None:
        super().__init__()
        self.server = server

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        manager = StreamableHTTPSessionManager(self.server, stateless=True, json_response=True)
        async with manager.run():
            await manager.handle_request(scope, receive, send)


def _server(services: Any, workspace_id: str) -> Server:
    async def list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
        tools = await run_in_threadpool(graph_tools, services, workspace_id)
        return types.ListToolsResult(tools=[types.Tool(name=t.name, description=t.description,
                                                       input_schema=t.schema) for t in tools])

    async def call_tool(_ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        tools = await run_in_threadpool(graph_tools, services, workspace_id)
        tool = next((t for t in tools if t.name == params.name), None)
        if tool is None:
            return _error(f"no tool '{params.name}' in this workspace")
        return await _call(services, tool, params.arguments or {})

    return Server("NodeFlow", version="1", instructions="Graphs of a NodeFlow workspace, as tools.",
                  on_list_tools=list_tools, on_call_tool=call_tool)


def graph_tools(services: Any, workspace_id: str) -> list[GraphTool]:
    """Every MCP Tool node of the workspace's saved graphs with a valid name and schema (a name used twice
    keeps its first graph, the most recently edited)."""
    graphs, registry, found = services.graphs(), services.launcher().registry, {}
    for summary in graphs.list(workspace_id=workspace_id):
        stored = graphs.get(summary.id)
        for node in (stored.graph.get("nodes", []) if stored else []):
            definition = registry.definition(str(node.get("type")))
            if definition is None or STARTED_BY not in definition.started_by:
                continue
            data = node.get("data") or {}
            try:
                name, schema = tool_name(data), input_schema(data)
            except NodeError:
                continue  # the editor shows the problem; a broken tool is not offered
            description = str(data.get("description") or "").strip() or f"Runs the NodeFlow graph '{summary.name}'."
            found.setdefault(name, GraphTool(name, description, schema, summary.id, node["id"]))
    return list(found.values())


async def _call(services: Any, tool: GraphTool, arguments: dict[str, Any]) -> types.CallToolResult:
    def start() -> Any:
        launcher = services.launcher()
        plan = launcher.plan(services.graphs().get(tool.graph_id).graph)
        return launcher.start(plan, started_by=STARTED_BY, trigger=tool.node_id, payload=arguments,
                              graph_id=tool.graph_id, defer_start=True)  # the client gets only its end

    try:
        run = await run_in_threadpool(start)
    except Exception as error:  # an invalid graph: the caller learns why
        return _error(f"the graph cannot run: {error}")
    driver = drive(run, run.events())  # goes on if the client leaves
    await driver.done.wait()
    if run.status == "paused":
        return _error(f"the run {run.run_id} waits for a person's answer; it goes on when answered in NodeFlow")
    if run.status != "completed":
        return _error(run.error or f"the run ended as {run.status}")
    value = replaced_surrogates(final_output(run))
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                structured_content=value if isinstance(value, dict) else None)


def _error(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=replaced_surrogates(message))], is_error=True)
