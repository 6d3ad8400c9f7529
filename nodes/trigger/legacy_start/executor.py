"""Start (imported): the run's payload, else the Initial input, as `{text}` (the older runtime's start value)."""

from typing import Any

from nodes._helpers import to_text
from nodeflow_app.contract import ExecutionResult, FlowContext, NodeError


class LegacyStartExecutor:
    node_type = "legacy-start"

    async def execute(self, data: dict[str, Any], inputs: dict[str, Any], ctx: FlowContext) -> ExecutionResult:
        payload = ctx.payload
        if payload is None:
            payload = data.get("initial_input")
        if isinstance(payload, dict):
            if "text" not in payload:
                raise NodeError(f"a Start payload must be text or an object with a text, got keys {sorted(payload)}")
            payload = payload["text"]
        if isinstance(payload, (list, tuple)):
            raise NodeError("a Start payload must be text or an object with a text, got a list")
        return ExecutionResult(outputs={"output": {"text": to_text(payload)}})


executor = LegacyStartExecutor()
