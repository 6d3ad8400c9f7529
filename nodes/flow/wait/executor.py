"""Wait: sleep (cancellable, like any asyncio task) for a minute or less; longer, a timed pause on record (the app
resumes it when due: nodeflow_app/runs/timers.py) where the run can pause. Either way the input passes through."""

import asyncio
import time
from datetime import datetime, timezone
from typing import Any, AsyncIterator

from nodes._helpers import to_number
from nodeflow_app.contract import ExecutionResult, FlowContext, NodeError, NodeEvent, WaitForInput

from .definition import IN_MEMORY_S, MAX_SECONDS, PER_UNIT, RESUME


class WaitExecutor:
    node_type = "wait"

    async def execute(self, data: dict[str, Any], inputs: dict[str, Any],
                      ctx: FlowContext) -> AsyncIterator[NodeEvent | ExecutionResult]:
        if ctx.resume_payload is not None:  # the time came, or someone said "resume now" (any answer goes on)
            yield ExecutionResult(outputs={"output": inputs.get("input")})
            return
        seconds, shown = _duration(data)
        # Inside a For Each or Loop, or in a run nothing persists, nothing could resume a pause: it sleeps.
        if seconds > IN_MEMORY_S and (ctx.runtime is None or ctx.runtime.pauses_on_record):
            until = time.time() + seconds
            when = datetime.fromtimestamp(until, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
            yield ExecutionResult(wait=WaitForInput(prompt=f"Waiting {shown}, until {when}", options=[RESUME],
                                                    detail={"until": when}, resume_at=until))
            return
        yield ctx.event("progress", message=f"Waiting {shown}")
        await asyncio.sleep(seconds)
        yield ExecutionResult(outputs={"output": inputs.get("input")})


def _duration(data: dict[str, Any]) -> tuple[float, str]:
    """(seconds, "<amount> <unit>") of the node's settings; NodeError naming what is wrong."""
    amount = to_number(data.get("amount", 1.0))
    if amount is None or amount < 0 or amount == float("inf"):
        raise NodeError(f"amount must be a number of at least 0, got {data.get('amount')!r}")
    unit = data.get("unit") or "seconds"
    if unit not in PER_UNIT:
        raise NodeError(f"unknown unit {unit!r}; use seconds, minutes, hours or days")
    seconds = amount * PER_UNIT[unit]
    if seconds > MAX_SECONDS:
        raise NodeError(f"a Wait lasts at most 30 days, not {amount:g} {unit}")
    return seconds, f"{amount:g} {unit[:-1] if amount == 1 else unit}"


executor = WaitExecutor()
