"""MCP Server: connect to a Model Context Protocol server once per run and hand its tools to agents.

The connection is opened in `materialize` and must work: Agno's own `connect()` logs a failure and
leaves the agent without tools, so a server that does not start is a NodeError naming it instead.
It closes when the run stops (`ctx.runtime.on_finish`): completed, failed, cancelled or paused.
"""

from __future__ import annotations

import shlex
from typing import Any

from nodes._helpers import key_value_pairs, to_text
from nodeflow_app.contract import FlowContext, NodeError



class McpServerExecutor:
    node_type = "mcp-server"

    async def materialize(self, data: dict[str, Any], output_handle: str, ctx: FlowContext) -> Any:
        if output_handle != "tools":
            raise NodeError(f"MCP Server has no link output {output_handle!r} (it provides 'tools')")
        wanted = [name.strip() for name in to_text(data.get("tool_filter")).split(",") if name.strip()]
        toolkit, where = _toolkit(data)
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


def _toolkit(data: dict[str, Any]) -> tuple[Any, str]:
    """An unconnected run-scoped MCPTools for the node's settings, and how to name the server in errors."""
    from mcp import StdioServerParameters
    from mcp.client.stdio import get_default_environment

    from agno.tools.mcp.params import StreamableHTTPClientParams

    from .toolkit import RunScopedMCPTools

    transport = to_text(data.get("transport")) or "stdio"
    if transport == "streamable-http":
        url = to_text(data.get("url")).strip()
        if not url:
            raise NodeError("MCP Server needs a URL for the streamable-http transport")
        headers = {name: to_text(value) for name, value in key_value_pairs(data.get("headers"), "headers") if name}
        params = StreamableHTTPClientParams(url=url, headers=headers or None)
        return RunScopedMCPTools(transport=transport, server_params=params), f"at {url}"
    if transport != "stdio":
        raise NodeError(f"MCP Server transport must be 'stdio' or 'streamable-http', got {transport!r}")
    command = to_text(data.get("command")).strip()
    if not command:
        raise NodeError("MCP Server needs a command to start (e.g. npx, uvx or python)")
    args = _arguments(data.get("args"))
    # No shell runs the command: arguments travel as a list, so nothing in them is interpreted.
    env = {**get_default_environment(),
           **{name: to_text(value) for name, value in key_value_pairs(data.get("env"), "env") if name}}
    params = StdioServerParameters(command=command, args=args, env=env)
    return RunScopedMCPTools(transport="stdio", server_params=params), f"`{shlex.join([command, *args])}`"


def _arguments(value: Any) -> list[str]:
    """Rows of {value} from the editor, or plain strings (a wired or expression value)."""
    if value in (None, ""):
        return []
    if not isinstance(value, list):
        raise NodeError(f"MCP Server arguments must be a list, got {type(value).__name__}")
    args = [to_text(item.get("value")) if isinstance(item, dict) else to_text(item) for item in value]
    return [arg for arg in args if arg != ""]


def _reason(error: BaseException) -> str:
    text = str(error).removeprefix("Client failed to connect: ").strip()
    if text == "Connection closed":
        return "the process exited before it answered (its error output is in the app's log)"
    return text or type(error).__name__



executor = McpServerExecutor()
