"""Agno's MCPTools opened by the MCP Server node for one run, closed by the run's on_finish hook."""

from __future__ import annotations

from typing import Any

import agno.tools.mcp.mcp as agno_mcp
from agno.tools.mcp import MCPTools

from nodeflow_app.net.guard import guarded_httpx2_client


def _guarded_http_client_factory(timeout: Any, sse_read_timeout: Any) -> Any:
    """Agno's factory of the MCP SDK's HTTP client, with every connection through the SSRF guard.

    The node checks a URL before connecting; this checks each address again when the connection opens (a
    name that resolves elsewhere the second time, DNS rebinding). Agno builds that client in a module function
    for every streamable-HTTP and SSE connection, so it is replaced here, for the whole process: no MCP
    connection NodeFlow opens should reach an internal address. Timeouts as Agno sets them (30 s, 300 s read).
    """
    import httpx2

    def seconds(value: Any, default: float) -> float:
        value = value.total_seconds() if hasattr(value, "total_seconds") else value
        return float(value) if value is not None else default

    timeout_ = httpx2.Timeout(seconds(timeout, 30.0), read=seconds(sse_read_timeout, 300.0))

    def factory(*, headers: Any = None, auth: Any = None, **_: Any) -> Any:
        return guarded_httpx2_client(headers=headers, auth=auth, timeout=timeout_)

    return factory


agno_mcp._http_client_factory = _guarded_http_client_factory


class RunScopedMCPTools(MCPTools):
    """An MCPTools connected once per run; `release` closes it when the run stops."""

    async def release(self) -> None:
        """Close the connection; from the first step on, a new user sees it closed (never a closing one)."""
        client, self._session_context, self.session, self._initialized = self._session_context, None, None, False
        if client is not None:
            try:
                await client.__aexit__(None, None, None)
            except Exception:  # noqa: BLE001 - the server may be gone already; nothing is left to close
                pass
