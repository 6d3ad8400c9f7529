"""A worker's periodic background work (schedules, timed pauses, housekeeping): done again and again for as long as
the process lives. A pass that fails (a database hiccup) is logged with its trace, and the next comes as usual."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Awaitable, Callable


async def every(seconds: float, work: Callable[[], Awaitable[Any]], log: logging.Logger, what: str) -> None:
    """`await work()`, then sleep `seconds`, forever; `what` names the work in the log."""
    while True:
        try:
            await work()
        except Exception:  # noqa: BLE001 - one failed pass must not end the loop
            log.exception("%s failed; trying again in %g s", what, seconds)
        await asyncio.sleep(seconds)
