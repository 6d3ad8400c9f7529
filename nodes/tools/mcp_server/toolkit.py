"""Agno's MCPTools, kept open for the node tasks that use it (see lease.py)."""

from __future__ import annotations

from agno.tools.mcp import MCPTools

from .lease import TaskLease


class RunScopedMCPTools(MCPTools):
    """An MCPTools connected by the MCP Server node; its connection closes when its users' tasks end."""

    lease: TaskLease | None = None

    @property
    def initialized(self) -> bool:
        # Agno asks this at the start of every agent run, in the task running the agent: that task
        # now uses the connection, so it stays open until that task ends. After the lease is over,
        # a later agent run connects and disconnects by itself, as Agno does for any MCPTools.
        if self._initialized and self.lease is not None:
            self.lease.hold()
        return self._initialized

    async def release(self) -> None:
        """Close the connection; from the first step on, a new user sees it closed (never a closing one)."""
        client, self._session_context, self.session, self._initialized = self._session_context, None, None, False
        if client is not None:
            try:
                await client.__aexit__(None, None, None)
            except Exception:  # noqa: BLE001 - the server may be gone already; nothing is left to close
                pass
