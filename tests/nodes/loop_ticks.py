"""How often the event loop got to run while a block awaited: a blocked loop does not tick at all."""

from __future__ import annotations

import asyncio
from contextlib import asynccontextmanager
from typing import AsyncIterator


@asynccontextmanager
async def loop_ticks() -> AsyncIterator[list[int]]:
    """`[n]`: the number of 10 ms sleeps the loop finished while the block ran (read it after the block)."""
    ticks = [0]

    async def tick() -> None:
        while True:
            await asyncio.sleep(0.01)
            ticks[0] += 1

    ticking = asyncio.create_task(tick())
    try:
        yield ticks
    finally:
        ticking.cancel()
