"""MCP Server: connect to a Model Context Protocol server once per run and hand its tools to agents.

stdio servers are the install's (nodeflow_app/llm/mcp_servers.py): the graph names one, never a command.
A URL passes the SSRF guard first; header values are secret parameters, revealed only here and only for the
origin they were entered with.

The connection is opened in `materialize` and must work: Agno's own `connect()` logs a failure and
leaves the agent without tools, so a server that does not start is a NodeError naming it instead.
It closes when the run stops (`ctx.runtime.on_finish`): completed, failed, cancelled or paused.
"""

from __future__ import annotations

from typing import Any

from nodeflow_app.contract import FlowContext, NodeError
from nodeflow_app.llm.mcp_servers import McpConfigError, declared_server, how_to_declare
from nodeflow_app.secret_values import reveal_set
from nodes._helpers import header_problem, key_value_pairs, to_text


class McpServerExecutor:
    node_type = "mcp-server"

    async def materialize(self, data: dict[str, Any], output_handle: str, ctx: FlowContext) -> Any:
        if output_handle != "tools":
            raise NodeError(f"MCP Server has no link output {output_handle!r} (it provides 'tools')")
        wanted = [name.strip() for name in to_text(data.get("tool_filter")).split(",") if name.strip()]
        toolkit, where = _toolkit(data, ctx)
        if toolkit.transport == "streamable-http":
            await _check_url(toolkit.server_params.url)
        try:
            await toolkit.__aenter__()  # unlike connect(), raises when the server cannot be reached
        except Exception as error:  # the client has unwound its half-open connection itself
            failed = "failed to start" if toolkit.transport == "stdio" else "could not be reached"
            raise NodeError(f"MCP server {where} {failed}: {_reason(error)}") from error
        if not toolkit.initialized:  # the tool listing failed: Agno logged it and kept the connection
            await toolkit.release()
            raise NodeError(f"MCP server {where} started but did not list its tools (see the log)")
        missing = [name for name in wanted if name not in toolkit.functions]
        if missing:
            await toolkit.release()
            raise NodeError(f"MCP server {where} has no tool {', '.join(missing)}; "
                            f"it offers: {', '.join(toolkit.functions) or 'no tools'}")
        if wanted:
            toolkit.include_tools = wanted
            toolkit.functions = {name: f for name, f in toolkit.functions.items() if name in wanted}
        ctx.runtime.on_finish(toolkit.release)
        return toolkit


def _toolkit(data: dict[str, Any], ctx: FlowContext) -> tuple[Any, str]:
    """An unconnected run-scoped MCPTools for the node's settings, and how to name the server in errors."""
    from .toolkit import RunScopedMCPTools

    name = _node_name(ctx)
    if "command" in data:  # never started: a graph cannot name a program (the normalizer refuses it too)
        raise NodeError(f"MCP Server '{name}' names a command to start; {how_to_declare()}")
    transport = to_text(data.get("transport")) or "stdio"
    if transport == "streamable-http":
        from agno.tools.mcp.params import StreamableHTTPClientParams

        url = to_text(data.get("url")).strip()
        if not url:
            raise NodeError(f"MCP Server '{name}' needs a URL for the streamable-http transport")
        headers = {header.strip(): to_text(reveal_set(value, f"MCP Server '{name}' header {header}", url=url)).strip()
                   for header, value in key_value_pairs(data.get("headers"), "headers") if header.strip()}
        for header, value in headers.items():  # the MCP client's own error would quote the value, a secret
            if problem := header_problem(header, value):
                raise NodeError(f"MCP Server '{name}' header {header[:80]!r}: {problem}")
        params = StreamableHTTPClientParams(url=url, headers=headers or None)
        return RunScopedMCPTools(transport=transport, server_params=params), f"at {url}"
    if transport != "stdio":
        raise NodeError(f"MCP Server transport must be 'stdio' or 'streamable-http', got {transport!r}")
    chosen = to_text(data.get("server")).strip()
    if not chosen:
        raise NodeError(f"MCP Server '{name}': choose a declared server under Server. {how_to_declare()}")
    try:
        server = declared_server(chosen)
    except McpConfigError as error:
        raise NodeError(f"MCP Server '{name}': {error}") from None
    from mcp import StdioServerParameters
    from mcp.client.stdio import get_default_environment

    # No shell runs the command: arguments travel as a list, so nothing in them is interpreted.
    params = StdioServerParameters(command=server.command, args=list(server.args),
                                   env={**get_default_environment(), **server.env})
    return RunScopedMCPTools(transport="stdio", server_params=params), f"'{server.name}'"


def _node_name(ctx: FlowContext) -> str:
    try:
        return str(ctx.runtime.get_node(ctx.node_id).get("name") or ctx.node_id)
    except (AttributeError, KeyError):
        return ctx.node_id


async def _check_url(url: str) -> None:
    """The SSRF guard, before connecting (the MCP client follows redirects only within the URL's origin)."""
    from nodeflow_app.net.guard import BlockedUrl, check_url

    try:
        await check_url(url)
    except BlockedUrl as error:
        raise NodeError(f"MCP server at {url}: {error}") from None
    except ValueError as error:  # e.g. "http://[::1/mcp"
        raise NodeError(f"MCP server at {url!r}: not a URL ({error})") from None


def _reason(error: BaseException) -> str:
    text = str(error).removeprefix("Client failed to connect: ").strip()
    if text == "Connection closed":
        return "the process exited before it answered (its error output is in the app's log)"
    return text or type(error).__name__

executor = McpServerExecutor()
