"""Wait: sleep (cancellable, like any asyncio task), then pass the input through."""

import asyncio
from typing import Any, AsyncIterator

from nodes._helpers import to_number
from nodeflow_app.contract import ExecutionResult, FlowContext, NodeError, NodeEvent

SECONDS_PER_UNIT = {"seconds": 1, "minutes": 60, "hours": 3600}


class WaitExecutor:
    node_type = "wait"

    async def execute(self, data: dict[str, Any], inputs: dict[str, Any],
                      ctx: FlowContext) -> AsyncIterator[NodeEvent | ExecutionResult]:
        amount = to_number(data.get("amount", 1.0))
        if amount is None or amount < 0 or amount == float("inf"):
            raise NodeError(f"amount must be a number of at least 0, got {data.get('amount')!r}")
        unit = data.get("unit") or "seconds"
        if unit not in SECONDS_PER_UNIT:
            raise NodeError(f"unknown unit {unit!r}; use seconds, minutes or hours")
        shown_unit = unit[:-1] if amount == 1 else unit
        yield ctx.event("progress", message=f"Waiting {amount:g} {shown_unit}")
        await asyncio.sleep(amount * SECONDS_PER_UNIT[unit])
        yield ExecutionResult(outputs={"output": inputs.get("input")})


executor = WaitExecutor()
