"""A run driven by a task of its own, so it goes on when whoever waits for it (an HTTP caller) leaves.

Webhooks and the HTTP API answer at once, when the run ends, or with its events as they happen; in every
case the run is not the request's: a caller that disconnects stops listening, never the run (SPEC 6).
"""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator

from nodeflow_app.contract import NodeEvent
from nodeflow_app.runs.graph_runner import final_output
from nodeflow_app.runtime.run import Run

_driving: set[asyncio.Task] = set()  # a task nothing refers to may be garbage-collected mid-run


class Detached:
    """Drives `run` at once; `wait()` for its end, or `stream()` its events (one listener, from the start)."""

    def __init__(self, run: Run, *, listen: bool = False):
        self.run = run
        self._queue: asyncio.Queue[NodeEvent | None] | None = asyncio.Queue() if listen else None
        self.task = asyncio.create_task(self._drive())
        _driving.add(self.task)
        self.task.add_done_callback(_driving.discard)

    async def _drive(self) -> Run:
        try:
            async for event in self.run.events():
                if self._queue is not None:
                    self._queue.put_nowait(event)
        finally:
            if self._queue is not None:
                self._queue.put_nowait(None)
        return self.run

    async def wait(self) -> Run:
        """The run once it ended or paused; a cancelled waiter leaves the run going."""
        return await asyncio.shield(self.task)

    async def stream(self) -> AsyncIterator[NodeEvent]:
        """The run's events in order, until it ends; leaving early leaves the run going."""
        assert self._queue is not None, "Detached(run, listen=True) to stream its events"
        while (event := await self._queue.get()) is not None:
            yield event
        await self.wait()  # a failure of the driver itself surfaces here


def outcome(run: Run) -> dict[str, Any]:
    """What a caller waiting for a run gets: its id, status, and final output or error."""
    body: dict[str, Any] = {"run_id": run.run_id, "status": run.status}
    if run.status == "completed":
        body["output"] = final_output(run)
    elif run.status == "paused":
        body["waiting"] = [run.plan.nodes[n].node.name for n in run.paused_nodes()]
    elif run.error:
        body["error"] = run.error
    return body
