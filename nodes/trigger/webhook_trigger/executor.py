"""Webhook: the HTTP call that started the run, as `{body, headers, query}`.

This folder owns the webhook payload's shape: the route passes the parsed body (JSON, a form as an object,
else text), the headers with lower-case names and the query as an object; a test run passes the
definition's example payload.
"""

from typing import Any

from nodeflow_app.contract import ExecutionResult, FlowContext, NodeError


def _object(value: Any, what: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise NodeError(f"a webhook's {what} must be an object, got {type(value).__name__}")
    return value


class WebhookExecutor:
    node_type = "webhook-trigger"

    async def execute(self, data: dict[str, Any], inputs: dict[str, Any], ctx: FlowContext) -> ExecutionResult:
        payload = ctx.payload if ctx.payload is not None else {}
        if not isinstance(payload, dict):
            payload = {"body": payload}
        headers = {str(k).lower(): v for k, v in _object(payload.get("headers"), "headers").items()}
        return ExecutionResult(outputs={"output": {
            "body": payload.get("body"),
            "headers": headers,
            "query": _object(payload.get("query"), "query"),
        }})


executor = WebhookExecutor()
