"""Keep a shared connection open while the tasks of a run use it; close it once they have let it go.

The kernel materializes a link once per run and hands the same artifact to every node that asks, but
tells no node when the run ends. Every node task of a run has ended by the time the run does
(completed, failed, cancelled, or paused waiting for input), so a connection held by the tasks that
use it closes with the run at the latest. A short grace period lets the next node of a chain pick
the connection up instead of starting the server again.
"""

from __future__ import annotations

import asyncio
from typing import Awaitable, Callable

# Seconds a connection stays open after its last user's task ended.
IDLE_GRACE = 1.0

# Pending closings: the event loop keeps only weak references to tasks.
_closing: set[asyncio.Task] = set()


class TaskLease:
    """Calls `close` once, `grace` seconds after the last task that called `hold()` has finished."""

    def __init__(self, close: Callable[[], Awaitable[None]], grace: float = IDLE_GRACE):
        self._close = close
        self._grace = grace
        self._holders: set[asyncio.Task] = set()
        self._closer: asyncio.Task | None = None
        self.released = False

    def hold(self) -> None:
        """The current task uses the connection: keep it open until this task ends."""
        task = asyncio.current_task()
        if self.released or task is None or task in self._holders:
            return
        if self._closer is not None:
            self._closer.cancel()
            self._closer = None
        self._holders.add(task)
        task.add_done_callback(self._let_go)

    def _let_go(self, task: asyncio.Task) -> None:
        self._holders.discard(task)
        if self._holders or self.released:
            return
        self._closer = asyncio.get_running_loop().create_task(self._close_when_idle())
        _closing.add(self._closer)
        self._closer.add_done_callback(_closing.discard)

    async def _close_when_idle(self) -> None:
        await asyncio.sleep(self._grace)
        self.released = True
        await self._close()


async def wait_closed() -> None:
    """Wait until pending closings are done (tests; an app shutting down)."""
    while _closing:
        await asyncio.gather(*_closing, return_exceptions=True)
