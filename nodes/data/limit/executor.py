"""Limit: the first or last N items of a list."""

import math
from typing import Any

from nodes._helpers import items_at, to_number
from nodeflow_app.contract import ExecutionResult, FlowContext, NodeError


class LimitExecutor:
    node_type = "limit"

    async def execute(self, data: dict[str, Any], inputs: dict[str, Any], ctx: FlowContext) -> ExecutionResult:
        items = items_at(inputs.get("input"), data.get("field") or "")
        raw = data.get("count")
        count = to_number(raw)
        if count is None or not 0 <= count < math.inf or count != int(count):
            raise NodeError(f"max items must be a whole number of 0 or more, got {raw!r}")
        keep = data.get("keep") or "first"
        if keep not in ("first", "last"):
            raise NodeError(f"keep must be 'first' or 'last', got {keep!r}")
        count = int(count)
        kept = items[:count] if keep == "first" else items[max(len(items) - count, 0):]
        return ExecutionResult(outputs={"output": kept})


executor = LimitExecutor()
