"""Drive a run's events into a builder from a task of its own, and hand out its changes in batches.

The run goes on while a consumer (a UI applying a batch under its state lock) is busy: events pile up in the
builder, and the next batch carries them all. The chat (a MessageBuilder) and the editor's test runs (a
StepBuilder) both stream this way.
"""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator, Protocol

from nodeflow_app.contract import NodeEvent
from nodeflow_app.runtime.run import Run


class Builder(Protocol):
    """What the pump feeds: it takes events and hands out what changed as patch ops."""

    @property
    def dirty(self) -> bool: ...

    def consume(self, event: NodeEvent) -> None: ...

    def flush(self) -> list[dict[str, Any]]: ...

STOP_TIMEOUT = 5.0  # seconds a cancelled run gets to wind down before its task is cancelled outright


class Pump:
    """Starts consuming `events` at once (so the run starts even if nobody asks for a batch yet)."""

    def __init__(self, run: Run, events: AsyncIterator[NodeEvent], builder: Builder):
        self.run, self.builder = run, builder
        self._wake = asyncio.Event()
        self._first_token = asyncio.Event()  # cuts the wait short once: the answer's first words go out at once
        self._task = asyncio.create_task(self._drive(events))

    async def batches(self, interval: float) -> AsyncIterator[list[dict[str, Any]]]:
        """The builder's patch ops, at most one batch per `interval`, until the events end (their error raised)."""
        while True:
            await self._wake.wait()
            self._wake.clear()
            if self._task.done():
                break
            if self.builder.dirty:
                yield self.builder.flush()
            await self._pause(interval)  # events keep flowing into the builder meanwhile
        self._task.result()

    async def _pause(self, interval: float) -> None:
        """Wait `interval`, or less: the run's end and the answer's first token are sent without waiting."""
        waiters: set[asyncio.Future] = {self._task}
        first = None if self._first_token.is_set() else asyncio.ensure_future(self._first_token.wait())
        if first is not None:
            waiters.add(first)
        await asyncio.wait(waiters, timeout=interval, return_when=asyncio.FIRST_COMPLETED)
        if first is not None and not first.done():
            first.cancel()

    async def stop(self) -> None:
        """The stream ended or its consumer left: the run stops (cooperatively first) and the task is awaited."""
        if not self._task.done():
            self.run.cancel()
            await asyncio.wait({self._task}, timeout=STOP_TIMEOUT)
        if not self._task.done():
            self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)

    async def _drive(self, events: AsyncIterator[NodeEvent]) -> None:
        try:
            async for event in events:
                self.builder.consume(event)
                self._wake.set()
                if event.event_type == "token":
                    self._first_token.set()
        finally:
            self._wake.set()
