"""Agno run events -> NodeEvents: one streaming loop shared by every node that runs an Agno Agent or Team.

Events of the run we started are the node's own (tokens, reasoning, tool calls); events of any other
run in the same stream (team members, nested teams, agents run inside tools) become `member_event`s
naming the member. A RunError becomes a NodeError naming provider, model and HTTP status.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, AsyncIterator

from nodeflow_app.llm.paragraphs import Paragraphs
from nodeflow_app.llm.providers import ModelRef, describe_failure, track_http_errors
from nodeflow_app.contract import FlowContext, NodeError, NodeEvent


@dataclass
class RunOutcome:
    """What a finished Agno run produced: the full answer (a paragraph per turn around tool calls) and its tokens."""

    content: str = ""
    usage: dict[str, int] = field(default_factory=dict)
    run_id: str | None = None
    cancelled: bool = False


def _kind(event: Any) -> str:
    """The event name without the `Team` prefix: RunContent, ToolCallStarted, RunError, ..."""
    name = str(getattr(event, "event", "") or "")
    return name[4:] if name.startswith("Team") else name


def _tool_data(tool: Any, completed: bool) -> dict[str, Any]:
    data = {"id": getattr(tool, "tool_call_id", None), "name": getattr(tool, "tool_name", None),
            "arguments": getattr(tool, "tool_args", None) or {}}
    if completed:
        failed = bool(getattr(tool, "tool_call_error", False))
        result = getattr(tool, "result", None)
        data["result"] = None if failed else _plain(result)
        data["error"] = _plain(result) if failed else None
    return data


def _plain(value: Any) -> Any:
    """A JSON-friendly version of a tool result (Agno keeps them as strings mostly)."""
    if value is None or isinstance(value, (str, int, float, bool, list, dict)):
        return value
    return str(value)


def usage_of(metrics: Any) -> dict[str, int]:
    if metrics is None:
        return {}
    keys = ("input_tokens", "output_tokens", "total_tokens", "reasoning_tokens")
    return {key: int(getattr(metrics, key, 0) or 0) for key in keys}


def inner_event(event: Any) -> tuple[str, dict[str, Any]] | None:
    """(event_type, data) of one Agno event in NodeFlow's vocabulary; None for lifecycle noise."""
    kind = _kind(event)
    if kind == "RunContent":
        content, reasoning = getattr(event, "content", None), getattr(event, "reasoning_content", None)
        if isinstance(content, str) and content:
            return "token", {"text": content}
        if isinstance(reasoning, str) and reasoning:
            return "reasoning", {"text": reasoning}
        return None
    if kind == "ReasoningContentDelta":
        text = getattr(event, "reasoning_content", None)
        return ("reasoning", {"text": text}) if text else None
    if kind == "ToolCallStarted":
        return "tool_call_started", _tool_data(event.tool, completed=False)
    if kind == "ToolCallCompleted":
        return "tool_call_completed", _tool_data(event.tool, completed=True)
    if kind == "RunStarted":
        return "started", {}
    if kind == "RunCompleted":
        return "completed", {"content": _plain(getattr(event, "content", None)),
                             "usage": usage_of(getattr(event, "metrics", None))}
    if kind == "RunError":
        return "error", {"error": getattr(event, "content", None)}
    if kind == "RunCancelled":
        return "cancelled", {"reason": getattr(event, "reason", None)}
    return None


async def stream_run(runnable: Any, message: str, ctx: FlowContext, ref: ModelRef,
                     **run_options: Any) -> AsyncIterator[NodeEvent | RunOutcome]:
    """Run an Agno Agent/Team on `message`, yielding NodeEvents as they happen and finally one RunOutcome.

    Raises NodeError when the run fails. Closing this generator (a cancelled node) closes Agno's
    stream, which closes the HTTP response.
    """
    failures = track_http_errors()
    outcome = RunOutcome()
    said = _Said()
    stream = runnable.arun(message, stream=True, stream_events=True, **run_options)
    try:
        async for event in stream:
            kind = _kind(event)
            if outcome.run_id is None:  # the stream opens with an event of the run we started
                outcome.run_id = getattr(event, "run_id", None)
            if getattr(event, "run_id", None) != outcome.run_id:
                mapped = inner_event(event)
                if mapped is not None:
                    yield ctx.event("member_event", member=_member_name(event),
                                    event={"event_type": mapped[0], "data": mapped[1]},
                                    member_run_id=getattr(event, "run_id", None))
                continue
            if kind == "RunError":
                raise NodeError(describe_failure(ref, str(getattr(event, "content", "") or ""), failures))
            if kind == "RunCancelled":
                outcome.cancelled = True
                break  # Agno sends a RunCompleted after it anyway: cancelled is final
            if kind == "RunCompleted":
                content = getattr(event, "content", None)
                outcome.content = said.paragraphs_of(content) if isinstance(content, str) else (
                    "" if content is None else str(content))
                outcome.usage = usage_of(getattr(event, "metrics", None))
                continue
            mapped = inner_event(event)
            if mapped is not None and mapped[0] in ("token", "reasoning", "tool_call_started", "tool_call_completed"):
                said.note(*mapped)
                yield ctx.event(mapped[0], **mapped[1])
    finally:
        await stream.aclose()
    yield outcome


class _Said:
    """The run's own text as streamed, and again with a paragraph break wherever a tool call came between texts."""

    def __init__(self) -> None:
        self._paragraphs = Paragraphs()
        self._plain: list[str] = []
        self._spaced: list[str] = []

    def note(self, event_type: str, data: dict[str, Any]) -> None:
        if event_type == "tool_call_started":
            self._paragraphs.tool_call()
        elif event_type == "token":
            self._plain.append(data["text"])
            self._spaced.append(self._paragraphs.text(data["text"]))

    def paragraphs_of(self, content: str) -> str:
        """Agno's answer with the breaks: it joins its turns' texts with nothing between them. An answer that
        is not what was streamed (rewritten after the stream) is kept as it is."""
        return "".join(self._spaced) if content == "".join(self._plain) else content


def _member_name(event: Any) -> str | None:
    return getattr(event, "agent_name", None) or getattr(event, "team_name", None)
