"""Approval: ask to wait for a person's decision, then route the input to `approve` or `reject`."""

from typing import Any

from nodes._helpers import to_text
from nodeflow_app.contract import ExecutionResult, FlowContext, NodeError, WaitForInput

DECISIONS = ("approve", "reject")
_OPTIONAL = ("note", "by", "at")
_EXPECTED = '{"decision": "approve" | "reject", "note"?: text, "by"?: who, "at"?: when}'


class ApprovalExecutor:
    node_type = "approval"

    async def execute(self, data: dict[str, Any], inputs: dict[str, Any], ctx: FlowContext) -> ExecutionResult:
        value = inputs.get("input")
        if ctx.resume_payload is None:
            prompt = to_text(data.get("prompt")).strip() or "Approve this step?"
            detail = {"input": value} if data.get("show_input", True) else {}
            return ExecutionResult(wait=WaitForInput(prompt=prompt, options=list(DECISIONS), detail=detail))
        approval = _approval(ctx.resume_payload)
        if isinstance(value, dict):
            output = {**value, "approval": approval}
        else:
            output = {"input": value, "approval": approval}
        return ExecutionResult(outputs={approval["decision"]: output})

    def answer_problem(self, payload: Any) -> str | None:
        """Why the run refuses `payload` as this node's answer (it stays paused), or None."""
        return _problem(payload)


def _problem(payload: Any) -> str | None:
    if not isinstance(payload, dict):
        return f"approval answer must be an object {_EXPECTED}, got {type(payload).__name__} {payload!r:.80}"
    unknown = sorted(set(payload) - {"decision", *_OPTIONAL})
    if unknown:
        return f"approval answer has unknown keys {unknown} (received {payload!r:.120}); expected {_EXPECTED}"
    decision = payload.get("decision")
    if decision not in DECISIONS:
        return f"approval answer needs decision 'approve' or 'reject', got {decision!r} (received {payload!r:.120})"
    note = payload.get("note")
    if note is not None and not isinstance(note, str):
        return f"approval note must be text, got {type(note).__name__} {note!r:.60}"
    return None


def _approval(payload: Any) -> dict[str, Any]:
    """The checked answer: {decision, note, by, at}, absent optional keys as None."""
    problem = _problem(payload)
    if problem:  # the kernel refuses such an answer first; a node run some other way says it here
        raise NodeError(problem)
    return {"decision": payload["decision"], **{key: payload.get(key) for key in _OPTIONAL}}


executor = ApprovalExecutor()
