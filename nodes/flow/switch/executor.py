"""Switch: conditions tested in order; the input leaves unchanged on the first match's port or `else`."""

from typing import Any

from nodes._helpers import compare_async, get_path
from nodeflow_app.contract import ExecutionResult, FlowContext, NodeError


class SwitchExecutor:
    node_type = "switch"

    async def execute(self, data: dict[str, Any], inputs: dict[str, Any], ctx: FlowContext) -> ExecutionResult:
        value = inputs.get("input")
        conditions = data.get("conditions") or []
        if not isinstance(conditions, list):
            raise NodeError(f"conditions must be a list, got {type(conditions).__name__}")
        case_sensitive = bool(data.get("case_sensitive"))
        for index, condition in enumerate(conditions):
            if not isinstance(condition, dict):
                raise NodeError(f"condition {index} must be an object with field, operator and value")
            field = condition.get("field") or ""
            try:
                matched = await compare_async(get_path(value, field), condition.get("operator") or "equals",
                                  condition.get("value", ""), case_sensitive=case_sensitive)
            except NodeError as error:
                where = f"condition {index} (field {field!r})" if field else f"condition {index}"
                raise NodeError(f"{where}: {error}") from None
            if matched:
                return ExecutionResult(outputs={f"condition-{index}": value})
        return ExecutionResult(outputs={"else": value})


executor = SwitchExecutor()
