"""Work that must run when the server is told to stop, before the server itself starts stopping.

Granian's worker stops on SIGTERM / SIGINT through its event loop's signal handlers, then stops its Rust runtime,
then runs the ASGI lifespan's shutdown. Stopping the runtime panics now and then ("Cannot drop pointer into Python
heap without the thread being attached", granian#799 and #884: multi-threaded runtime with websockets); when it
does, the lifespan's shutdown never runs, and what it was to save (the co-editing rooms' last edits) was lost
(tests/e2e/test_make_run.py saw it about one stop in three). So such work runs on the signal, then Granian's own
handler.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from typing import Awaitable, Callable

log = logging.getLogger(__name__)
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def run_before_stopping(loop: asyncio.AbstractEventLoop, work: Callable[[], Awaitable[None]]) -> bool:
    """On the first stop signal, `work()` runs to its end (or failure), then the loop's handler that was there (the
    server's). False when the loop has no handler of ours to wrap (another server, e.g. uvicorn, which sets
    `signal.signal`): the lifespan's shutdown is then the only place."""
    # asyncio's Unix loop keeps the handles add_signal_handler made here (private, stable since 3.4).
    handlers = getattr(loop, "_signal_handlers", None) or {}
    once = _WorkOnce(loop, work)
    wrapped = False
    for number in STOP_SIGNALS:
        server = handlers.get(number)
        if server is None:
            continue
        loop.add_signal_handler(number, once.then, server)
        wrapped = True
    return wrapped


class _WorkOnce:
    """The work starts at the first signal; every signal's server handler runs once it ended. A worker gets a stop
    signal twice (`kill` of the process group, then Granian's main process stopping it): had the second run the
    server's handler at once, the worker's loop would stop in the middle of the first signal's save."""

    def __init__(self, loop: asyncio.AbstractEventLoop, work: Callable[[], Awaitable[None]]) -> None:
        self.loop, self.work = loop, work
        self.done: asyncio.Task | None = None

    def then(self, server: asyncio.Handle) -> None:
        if self.done is None:
            self.done = self.loop.create_task(self._work())
        # the server's own handler, as the loop would have run it
        self.done.add_done_callback(lambda _: server._run())

    async def _work(self) -> None:
        try:
            await self.work()
        except Exception:  # noqa: BLE001 - stopping goes on whatever the work did
            log.exception("the work before stopping failed")
