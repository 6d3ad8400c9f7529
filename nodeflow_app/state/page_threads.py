"""Page work off the event loop, in threads of its own.

Runs execute on the web server's event loop, and so do page handlers: a handler that waits on the database (or
parses a file, or formats a whole run) there holds every run and every other tab. Page handlers and the access
check before each event do such work through `off_loop`, in a pool of their own: the default pool
(`asyncio.to_thread`) is where run steps read documents, chunk text and index knowledge for seconds at a time,
and an event queued behind them would hold its tab, and its graph's room, meanwhile.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, TypeVar

T = TypeVar("T")

_PAGE_THREADS = ThreadPoolExecutor(max_workers=8, thread_name_prefix="nodeflow-page")


async def off_loop(call: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
    """`call(*args, **kwargs)` in a page thread, seeing this event's context (the caller the access check
    allowed), as `asyncio.to_thread` would."""
    context = contextvars.copy_context()
    work = functools.partial(context.run, call, *args, **kwargs)
    return await asyncio.get_running_loop().run_in_executor(_PAGE_THREADS, work)
