"""Agno's MCPTools opened by the MCP Server node for one run, closed by the run's on_finish hook."""

from __future__ import annotations

from agno.tools.mcp import MCPTools


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
