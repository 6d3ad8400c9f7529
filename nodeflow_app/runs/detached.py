"""A run driven by a task of its own, so it goes on when whoever waits for it (an HTTP caller) leaves.

Webhooks, the HTTP API, the MCP endpoint and schedules start runs that are not the request's (SPEC 6): a
caller that streams listens to the task's events, one that waits awaits its end, one that polls reads the
database; a caller that disconnects stops listening, never the run. Every event is also persisted by the
launcher's hooks as usual.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

from nodeflow_app.contract import NodeEvent
from nodeflow_app.runs.graph_runner import final_output
from nodeflow_app.runtime.run import Run

log = logging.getLogger("nodeflow.runs.detached")
KEEPALIVE_S = 15.0  # a comment line on quiet streams, well under the idle cut of common proxies (60-100 s)

_driving: set[asyncio.Task] = set()  # strong references: a task nobody holds may be collected mid-run


class RunDriver:
    """One run driven to its end (completed, failed, cancelled or paused) in a background task."""

    def __init__(self, run: Run, events: AsyncIterator[NodeEvent]):
        self.run = run
        self.started = asyncio.Event()  # its first event arrived: the run is recorded, GET /runs/{id} finds it
        self.done = asyncio.Event()
        self._events = events
        self._listeners: list[asyncio.Queue[NodeEvent | None]] = []

    def listen(self, keepalive: float | None = None) -> AsyncIterator[NodeEvent | None]:
        """Every event from now until the run ends or pauses; call before the first await after `drive`.
        With `keepalive`, None after that many quiet seconds (a stream's cue to tell proxies it is alive)."""
        queue: asyncio.Queue[NodeEvent | None] = asyncio.Queue()
        self._listeners.append(queue)
        return self._relay(queue, keepalive)

    async def _relay(self, queue: asyncio.Queue[NodeEvent | None],
                     keepalive: float | None) -> AsyncIterator[NodeEvent | None]:
        try:
            while True:
                try:
                    event = await asyncio.wait_for(queue.get(), keepalive)
                except asyncio.TimeoutError:
                    yield None
                    continue
                if event is None:
                    return
                yield event
        finally:
            self._listeners.remove(queue)

    async def _drive(self) -> None:
        try:
            async for event in self._events:
                self.started.set()
                for queue in self._listeners:
                    queue.put_nowait(event)
        except Exception:  # the run records its own failure; this only keeps the task from dying silently
            log.exception("run %s stopped with an error", self.run.run_id)
        finally:
            self.started.set()
            self.done.set()
            for queue in self._listeners:
                queue.put_nowait(None)


def drive(run: Run, events: AsyncIterator[NodeEvent]) -> RunDriver:
    """Start driving `events` (run.events() or run.resume(...)) on the running loop; returns at once."""
    driver = RunDriver(run, events)
    task = asyncio.create_task(driver._drive(), name=f"run-{run.run_id}")
    _driving.add(task)
    task.add_done_callback(_driving.discard)
    return driver



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
