"""Schedule: the due time that started the run, as `{scheduled_at, timezone}` (ISO 8601 in that zone).

The scheduler passes the due time; a test run passes the definition's example payload.
"""

from typing import Any

from nodeflow_app.contract import ExecutionResult, FlowContext


class ScheduleExecutor:
    node_type = "schedule-trigger"

    async def execute(self, data: dict[str, Any], inputs: dict[str, Any], ctx: FlowContext) -> ExecutionResult:
        payload = ctx.payload if isinstance(ctx.payload, dict) else {}
        return ExecutionResult(outputs={"output": {
            "scheduled_at": payload.get("scheduled_at"),
            "timezone": payload.get("timezone") or data.get("timezone") or "UTC",
        }})


executor = ScheduleExecutor()
