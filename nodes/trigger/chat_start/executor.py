"""Chat Start: turns the run's payload (a message string or an object with a `message`) into
`{message, chat_id, attachments}`; an object without a `message` is refused (it is not a chat message).

This folder owns the chat payload's shape: the chat passes the message text and the conversation in the
run's context; a test run passes the definition's example payload.
"""

from typing import Any

from nodes._helpers import to_text
from nodeflow_app.contract import CONVERSATION, ExecutionResult, FlowContext, NodeError


class ChatStartExecutor:
    node_type = "chat-start"

    async def execute(self, data: dict[str, Any], inputs: dict[str, Any], ctx: FlowContext) -> ExecutionResult:
        payload = ctx.payload
        if payload is None or isinstance(payload, str):
            payload = {"message": payload or ""}
        if not isinstance(payload, dict):
            raise NodeError(f"a chat message must be text or an object with a message, got {type(payload).__name__}")
        if "message" not in payload:  # {"order": 42} sent to a chat graph ran with an empty message, silently
            got = f"an object with {', '.join(map(str, payload))}" if payload else "an empty object"
            raise NodeError(f'Chat Start needs a message: send {{"message": "..."}} or a string (got {got})')
        attachments = payload.get("attachments")
        if attachments is None:
            attachments = []
        elif isinstance(attachments, dict):
            attachments = [attachments]
        elif not isinstance(attachments, list):
            raise NodeError(f"attachments must be a list, got {type(attachments).__name__}")
        conversation = ctx.context.get(CONVERSATION)
        return ExecutionResult(outputs={"output": {
            "message": to_text(payload.get("message")),
            "chat_id": conversation if conversation is not None else payload.get("chat_id"),
            "attachments": attachments,
        }})


executor = ChatStartExecutor()
