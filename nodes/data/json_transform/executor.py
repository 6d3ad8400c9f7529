"""JSON Transform: a JSONata expression (the `jsonata-python` port) on the input, or on each item of a list.

The evaluation runs in an evaluator process with a memory limit (evaluators.py; evaluation.py is what it runs),
waited for in a worker thread so the other branches' events go on; JSONata's own time box stops a runaway
expression, and its regex literals are time-limited.
"""

import asyncio
from typing import Any

from nodes._helpers import items_at
from nodeflow_app.contract import ExecutionResult, FlowContext, NodeError

from .evaluators import pool

TIME_LIMIT_MS = 10_000  # the port's time box, per node call


class JsonTransformExecutor:
    node_type = "json-transform"

    async def execute(self, data: dict[str, Any], inputs: dict[str, Any], ctx: FlowContext) -> ExecutionResult:
        expression = data.get("expression")
        if not isinstance(expression, str) or not expression.strip():
            raise NodeError("the expression is empty; `$` outputs the input unchanged")
        value = inputs.get("input")
        apply_to = data.get("apply_to") or "input"
        if apply_to == "input":
            result = await asyncio.to_thread(pool().evaluate, expression, value, False, TIME_LIMIT_MS)
        elif apply_to == "each_item":
            items = items_at(value, data.get("field") or "")
            result = await asyncio.to_thread(pool().evaluate, expression, items, True, TIME_LIMIT_MS)
        else:
            raise NodeError(f"apply to must be 'input' or 'each_item', got {apply_to!r}")
        return ExecutionResult(outputs={"output": result})


executor = JsonTransformExecutor()
