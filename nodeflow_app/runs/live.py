"""A run's flow steps as batches of patch ops, at most one batch per interval, for a live canvas (no reflex)."""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator

from nodeflow_app.chat.adapter import MessageBuilder
from nodeflow_app.runtime.run import Run

INTERVAL = 0.04
STOP_TIMEOUT = 5.0


async def step_batches(run: Run, interval: float = INTERVAL) -> AsyncIterator[list[dict[str, Any]]]:
    """Drive `run` from a task of its own; yield MessageBuilder patch ops (flow_step cards among them).

    The run goes on while the consumer applies a batch; a consumer that leaves early stops the run.
    """
    builder = MessageBuilder({node_id: pn.node.name for node_id, pn in run.plan.nodes.items()})
    wake = asyncio.Event()
    pump = asyncio.create_task(_pump(run, builder, wake))
    try:
        while True:
            await wake.wait()
            wake.clear()
            if pump.done():
                break
            if builder.dirty:
                yield builder.flush()
            await asyncio.sleep(interval)  # events keep flowing into the builder meanwhile
        pump.result()
    finally:
        await _stop(run, pump)
    builder.finish(run.status, run.error)
    if builder.dirty:
        yield builder.flush()


async def _pump(run: Run, builder: MessageBuilder, wake: asyncio.Event) -> None:
    try:
        async for event in run.events():
            builder.consume(event)
            wake.set()
    finally:
        wake.set()


async def _stop(run: Run, pump: asyncio.Task) -> None:
    if not pump.done():
        run.cancel()
        await asyncio.wait({pump}, timeout=STOP_TIMEOUT)
    if not pump.done():
        pump.cancel()
    await asyncio.gather(pump, return_exceptions=True)
