"""A run's flow steps as batches of patch ops, at most one batch per interval, for a live canvas (no reflex)."""

from __future__ import annotations

from contextlib import aclosing
from typing import Any, AsyncIterator

from nodeflow_app.chat.adapter import MessageBuilder
from nodeflow_app.chat.pump import Pump
from nodeflow_app.runtime.run import Run

INTERVAL = 0.04


async def step_batches(run: Run, interval: float = INTERVAL) -> AsyncIterator[list[dict[str, Any]]]:
    """Drive `run` from a task of its own; yield MessageBuilder patch ops (flow_step cards among them).

    The run goes on while the consumer applies a batch; a consumer that leaves early stops the run.
    """
    builder = MessageBuilder({node_id: pn.node.name for node_id, pn in run.plan.nodes.items()})
    pump = Pump(run, run.events(), builder)
    try:
        async with aclosing(pump.batches(interval)) as batches:
            async for ops in batches:
                yield ops
    finally:
        await pump.stop()
    builder.finish(run.status, run.error)
    if builder.dirty:
        yield builder.flush()
