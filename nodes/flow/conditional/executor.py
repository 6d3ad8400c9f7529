"""Conditional: one test on a field of the input; the input leaves unchanged on `true` or `false`."""

from typing import Any

from nodes._helpers import compare_async, get_path
from nodeflow_app.contract import ExecutionResult, FlowContext, NodeError


class ConditionalExecutor:
    node_type = "conditional"

    async def execute(self, data: dict[str, Any], inputs: dict[str, Any], ctx: FlowContext) -> ExecutionResult:
        value = inputs.get("input")
        field = data.get("field") or ""
        try:
            passed = await compare_async(get_path(value, field), data.get("operator") or "equals", data.get("value", ""),
                             case_sensitive=bool(data.get("case_sensitive")))
        except NodeError as error:
            raise NodeError(f"field {field!r}: {error}" if field else str(error)) from None
        return ExecutionResult(outputs={"true" if passed else "false": value})


executor = ConditionalExecutor()
