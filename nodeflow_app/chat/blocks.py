"""The content blocks of a chat message (SPEC 8), as pydantic models: the schema the adapter, store and UI share.

Messages travel and are stored as plain dicts of these shapes (`model_dump()`); `validate_blocks` checks a
list read back from anywhere. Every block a node produced carries that node's `node_id`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

StepStatus = Literal["running", "completed", "failed", "skipped", "paused", "cancelled"]
CallStatus = Literal["running", "completed", "failed", "cancelled"]


class _Block(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TextBlock(_Block):
    """The answer (markdown): text an answering node streamed (nodeflow_app/chat/answer.py) or the run's final
    value; or the text of a user's message (`node_id` None)."""

    type: Literal["text"] = "text"
    node_id: str | None = None
    text: str = ""


class ReasoningBlock(_Block):
    """A model's reasoning, streamed; the UI shows it collapsed."""

    type: Literal["reasoning"] = "reasoning"
    node_id: str | None = None
    text: str = ""


class ToolCallBlock(_Block):
    """One tool call as a card: `result` when it completed, `error` when the tool failed."""

    type: Literal["tool_call"] = "tool_call"
    node_id: str | None = None
    call_id: str | None = None
    name: str = ""
    arguments: Any = None
    result: Any = None
    error: Any = None
    status: CallStatus = "running"


class ErrorBlock(_Block):
    """Why the run (or a member's run) failed, naming the node when one failed."""

    type: Literal["error"] = "error"
    node_id: str | None = None
    node_name: str | None = None
    message: str


MemberContent = Annotated[Union[TextBlock, ReasoningBlock, ToolCallBlock, ErrorBlock], Field(discriminator="type")]


class MemberRunBlock(_Block):
    """Work a team member (a sub-agent) did for the agent `node_id`, its own blocks nested."""

    type: Literal["member_run"] = "member_run"
    node_id: str | None = None
    member: str
    member_run_id: str | None = None
    status: CallStatus = "running"
    blocks: list[MemberContent] = Field(default_factory=list)


class FlowStepBlock(_Block):
    """One card per node of the run: `summary` is one line; `detail` is the outputs as JSON, the error or the reason;
    `text` is what the node streamed when its text is not the answer (a draft an Approval checks first)."""

    type: Literal["flow_step"] = "flow_step"
    node_id: str
    node_name: str
    node_type: str
    status: StepStatus = "running"
    summary: str = ""
    detail: str = ""
    duration_ms: float | None = None
    cached: bool = False
    ports: list[str] = Field(default_factory=list)  # output ports that got a value: the edges the data took
    child_run_url: str = ""  # an Execute Graph step: the run it started (editor URL with that run chosen)
    text: str = ""


class ApprovalBlock(_Block):
    """A paused node waiting for a person; `decision` and who/when are filled in when someone answers.
    `text` is the primary text of the value to approve (a draft answer), when it has one: shown as text, the
    whole `detail` only on demand."""

    type: Literal["approval"] = "approval"
    node_id: str
    node_name: str = ""
    prompt: str
    options: list[str] = Field(default_factory=lambda: ["approve", "reject"])
    detail: Any = None
    text: str = ""
    resume_at: float | None = None  # a timed pause (a long Wait): the server answers it then
    decision: str | None = None
    note: str | None = None
    decided_by: str | None = None
    decided_at: float | None = None


Block = Annotated[Union[TextBlock, ReasoningBlock, ToolCallBlock, MemberRunBlock, FlowStepBlock, ApprovalBlock,
                        ErrorBlock], Field(discriminator="type")]
BLOCKS: TypeAdapter[list[Block]] = TypeAdapter(list[Block])


def validate_blocks(value: Any) -> list[dict[str, Any]]:
    """Plain dicts of a block list checked against the schema (a pydantic ValidationError says what is wrong)."""
    return [block.model_dump() for block in BLOCKS.validate_python(value)]
