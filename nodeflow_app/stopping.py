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
    """On a stop signal, `work()` runs to its end (or failure), then the loop's handler that was there (the
    server's). False when the loop has no handler of ours to wrap (another server, e.g. uvicorn, which sets
    `signal.signal`): the lifespan's shutdown is then the only place."""
    # asyncio's Unix loop keeps the handles add_signal_handler made here (private, stable since 3.4).
    handlers = getattr(loop, "_signal_handlers", None) or {}
    wrapped = False
    for number in STOP_SIGNALS:
        server = handlers.get(number)
        if server is None:
            continue
        loop.add_signal_handler(number, _work_then, loop, work, server)
        wrapped = True
    return wrapped


def _work_then(loop: asyncio.AbstractEventLoop, work: Callable[[], Awaitable[None]], server: asyncio.Handle) -> None:
    async def in_order() -> None:
        try:
            await work()
        except Exception:  # noqa: BLE001 - stopping goes on whatever the work did
            log.exception("the work before stopping failed")
        finally:
            server._run()  # the server's own handler, as the loop would have run it

    loop.create_task(in_order())
