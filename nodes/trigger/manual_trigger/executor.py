from typing import Any

from nodeflow_app.contract import ExecutionResult, FlowContext


class ManualTriggerExecutor:
    node_type = "manual-trigger"

    async def execute(self, data: dict[str, Any], inputs: dict[str, Any], ctx: FlowContext) -> ExecutionResult:
        payload = ctx.payload if ctx.payload is not None else data.get("payload")
        return ExecutionResult(outputs={"output": payload if payload is not None else {}})


executor = ManualTriggerExecutor()
