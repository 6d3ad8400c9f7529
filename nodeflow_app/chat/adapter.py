"""Kernel NodeEvents -> the content blocks of one assistant message (SPEC 8), built as the run goes.

A token costs a few dict lookups and list appends: streamed text is joined into its block only when someone
looks (`snapshot`, `flush`). `flush()` returns what changed since the last flush as patch operations
(nodeflow_app.chat.patch), so a UI sends deltas, never the whole message.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Collection, Mapping

from nodeflow_app import routes
from nodeflow_app.chat.blocks import (ApprovalBlock, ErrorBlock, FlowStepBlock, MemberRunBlock, ReasoningBlock,
                                      TextBlock, ToolCallBlock)
from nodeflow_app.chat.patch import BlockList, Path
from nodeflow_app.llm.paragraphs import Paragraphs
from nodes._helpers import primary_text, to_text
from nodeflow_app.contract import NodeEvent

Owner = Any  # a node id (its own content) or (node id, member run key) (a member's content)

MESSAGE_STATUS = {"completed": "complete", "cancelled": "stopped", "paused": "paused", "failed": "failed"}
SUMMARY_CHARS, DETAIL_CHARS = 160, 1500  # the whole outputs are in the run history
ANSWER_CHARS = 20_000  # a final value shown as the answer (a graph without a model)
_DELTA_BLOCKS = {"text": TextBlock, "reasoning": ReasoningBlock}


class MessageBuilder:
    """The blocks of one assistant message; feed it `consume(event)` and finally `finish(run status, error)`.

    `blocks` continues a stored message (a resumed run): the UI has those already, only what follows is flushed.
    `answers`: the nodes whose streamed text is the answer (nodeflow_app.chat.answer; None: every node's); the
    text of the others goes into their step.
    """

    def __init__(self, node_names: Mapping[str, str] | None = None, blocks: list[dict[str, Any]] | None = None,
                 answers: Collection[str] | None = None):
        self.status = "streaming"
        self._doc = BlockList(blocks)
        self._names = dict(node_names or {})
        self._answers = answers
        self._steps: dict[str, Path] = {}        # node id -> its flow_step card
        self._approvals: dict[str, Path] = {}    # node id -> its latest approval card
        self._members: dict[tuple[str, str], Path] = {}  # (node id, member run) -> member_run block
        self._open: dict[tuple[Owner, str], Path] = {}   # (owner, "text" | "reasoning") -> block taking deltas
        self._calls: dict[tuple[Owner, str], Path] = {}  # (owner, call id) -> running tool_call card
        # node id -> the paragraphs of its step's text: text after a tool call starts a new one.
        self._step_paragraphs: dict[str, Paragraphs] = {}
        self._node_failed = False
        for index, block in enumerate(self._doc.blocks):
            self._index((index,), block)

    # -- reading -------------------------------------------------------------------------------------

    @property
    def dirty(self) -> bool:
        return self._doc.dirty

    def snapshot(self) -> list[dict[str, Any]]:
        """The whole message as plain dicts (a copy)."""
        return self._doc.snapshot()

    def to_json(self) -> str:
        return self._doc.to_json()

    def flush(self) -> list[dict[str, Any]]:
        """Patch operations (nodeflow_app.chat.patch) for what changed since the previous flush."""
        return self._doc.flush()

    # -- writing -------------------------------------------------------------------------------------

    def consume(self, event: NodeEvent) -> None:
        handler = _HANDLERS.get(event.event_type)
        if handler is not None:
            handler(self, event.node_id, event.node_type, event.data)

    def finish(self, run_status: str, error: str | None = None) -> str:
        """The run ended (or paused): settle the message and return its status."""
        self.status = MESSAGE_STATUS.get(run_status, "failed")
        if self.status == "failed" and not self._node_failed:
            self._doc.add((), ErrorBlock(message=error or f"the run ended as {run_status}").model_dump())
        if self.status != "paused":
            self._settle()
        self._open.clear()
        return self.status

    def answer_with(self, value: Any, node_id: str | None = None) -> None:
        """A run whose answering nodes streamed no text answers with its final value (`node_id`'s)."""
        if value is None or any(block.get("type") == "text" for block in self._doc.blocks):
            return
        self._doc.add((), TextBlock(node_id=node_id, text=answer_text(value)).model_dump())

    # -- events --------------------------------------------------------------------------------------

    def _on_started(self, node: str, node_type: str, data: dict[str, Any]) -> None:
        if data.get("name"):
            self._names[node] = data["name"]
        self._step(node, node_type, status="running", cached=bool(data.get("cached")))

    def _on_token(self, node: str, node_type: str, data: dict[str, Any]) -> None:
        if self._answers is None or node in self._answers:
            self._delta(node, (), "text", node, data.get("text"))
        elif data.get("text"):  # not the answer (yet): the step shows it, collapsed
            text = self._step_paragraphs.setdefault(node, Paragraphs()).text(data["text"])
            self._doc.append_text(self._step_path(node, node_type), text)

    def _on_tool_call_started(self, node: str, _type: str, data: dict[str, Any]) -> None:
        if node in self._step_paragraphs:
            self._step_paragraphs[node].tool_call()
        self._tool_started(node, (), node, data)

    def _on_member(self, node: str, _type: str, data: dict[str, Any]) -> None:
        inner = data.get("event") or {}
        kind, inner_data = inner.get("event_type"), inner.get("data") or {}
        member = str(data.get("member") or "member")
        key = (node, str(data.get("member_run_id") or member))
        path = self._members.get(key)
        if path is None:
            self._close(node)
            path = self._members[key] = self._doc.add((), MemberRunBlock(
                node_id=node, member=member, member_run_id=data.get("member_run_id")).model_dump())
        if kind in ("token", "reasoning"):
            self._delta(key, path, "text" if kind == "token" else "reasoning", node, inner_data.get("text"))
        elif kind == "tool_call_started":
            self._tool_started(key, path, node, inner_data)
        elif kind == "tool_call_completed":
            self._tool_completed(key, path, node, inner_data)
        elif kind in ("completed", "cancelled"):
            self._doc.set(path, status=kind)
        elif kind == "error":
            self._doc.set(path, status="failed")
            self._doc.add(path, ErrorBlock(node_id=node, node_name=member,
                                       message=str(inner_data.get("error") or "failed")).model_dump())

    def _on_progress(self, node: str, node_type: str, data: dict[str, Any]) -> None:
        fields: dict[str, Any] = {"summary": _clip(str(data.get("message") or ""), SUMMARY_CHARS)}
        if data.get("child_run_id") and data.get("graph_id"):  # Execute Graph: link the run it started
            fields["child_run_url"] = routes.run_url(str(data["graph_id"]), str(data["child_run_id"]))
        self._step(node, node_type, **fields)

    def _on_completed(self, node: str, node_type: str, data: dict[str, Any]) -> None:
        self._close(node)
        outputs = data.get("outputs")
        ports = [port for port, value in outputs.items() if value is not None] if isinstance(outputs, dict) else []
        self._step(node, node_type, status="completed", duration_ms=data.get("duration_ms"),
                   cached=bool(data.get("cached")), summary=summarize(outputs), detail=_pretty(outputs), ports=ports)

    def _on_error(self, node: str, node_type: str, data: dict[str, Any]) -> None:
        message = str(data.get("error") or "failed")
        if data.get("handled"):  # the node's error mode turns it into an output: `completed` follows
            self._step(node, node_type, detail=message)
            return
        self._close(node)
        self._node_failed = True
        self._step(node, node_type, status="failed", summary=_clip(message, SUMMARY_CHARS), detail=message)
        self._doc.add((), ErrorBlock(node_id=node, node_name=self._name(node), message=message).model_dump())

    def _on_skipped(self, node: str, node_type: str, data: dict[str, Any]) -> None:
        reason = str(data.get("reason") or "skipped")
        self._step(node, node_type, status="skipped", summary=_clip(reason, SUMMARY_CHARS), detail=reason)

    def _on_paused(self, node: str, node_type: str, data: dict[str, Any]) -> None:
        self._close(node)
        prompt, detail = str(data.get("prompt") or ""), data.get("detail")
        self._step(node, node_type, status="paused", summary=_clip(prompt, SUMMARY_CHARS))
        self._approvals[node] = self._doc.add((), ApprovalBlock(
            node_id=node, node_name=self._name(node), prompt=prompt,
            options=list(data.get("options") or ["approve", "reject"]), detail=detail,
            text=approved_text(detail), resume_at=data.get("resume_at")).model_dump())

    def _on_resumed(self, node: str, node_type: str, data: dict[str, Any]) -> None:
        payload = data.get("payload")
        path = self._approvals.get(node)
        if path is not None and isinstance(payload, dict):
            self._doc.set(path, decision=payload.get("decision"), note=payload.get("note"),
                      decided_by=payload.get("by"), decided_at=payload.get("at"))
        self._step(node, node_type, status="running")

    def _on_cancelled(self, node: str, node_type: str, data: dict[str, Any]) -> None:
        self._close(node)
        self._step(node, node_type, status="cancelled")

    # -- block helpers -------------------------------------------------------------------------------

    def _delta(self, owner: Owner, container: Path, kind: str, node: str, text: Any) -> None:
        if not text:
            return
        path = self._open.get((owner, kind))
        if path is None:  # the other kind's block ends here: reasoning, text, reasoning makes three blocks
            self._open.pop((owner, "reasoning" if kind == "text" else "text"), None)
            path = self._open[(owner, kind)] = self._doc.add(container, _DELTA_BLOCKS[kind](node_id=node).model_dump())
        self._doc.append_text(path, text)

    def _tool_started(self, owner: Owner, container: Path, node: str, data: dict[str, Any]) -> None:
        self._close(owner)
        call_id = str(data.get("id") or data.get("name"))
        self._calls[(owner, call_id)] = self._doc.add(container, ToolCallBlock(
            node_id=node, call_id=data.get("id"), name=str(data.get("name") or ""),
            arguments=data.get("arguments")).model_dump())

    def _tool_completed(self, owner: Owner, container: Path, node: str, data: dict[str, Any]) -> None:
        path = self._calls.pop((owner, str(data.get("id") or data.get("name"))), None)
        if path is None:  # its start was not seen (e.g. before a resume): a card of its own
            self._tool_started(owner, container, node, data)
            path = self._calls.pop((owner, str(data.get("id") or data.get("name"))))
        failed = data.get("error") is not None
        self._doc.set(path, result=data.get("result"), error=data.get("error"), status="failed" if failed else "completed")

    def _step(self, node: str, node_type: str, **fields: Any) -> None:
        self._doc.set(self._step_path(node, node_type), **fields)

    def _step_path(self, node: str, node_type: str) -> Path:
        path = self._steps.get(node)
        if path is None:
            path = self._steps[node] = self._doc.add((), FlowStepBlock(
                node_id=node, node_name=self._name(node), node_type=node_type).model_dump())
        return path

    def _close(self, owner: Owner) -> None:
        """Deltas of `owner` that come next start new blocks (after the card being added now)."""
        self._open.pop((owner, "text"), None)
        self._open.pop((owner, "reasoning"), None)

    def _settle(self) -> None:
        """The run is over: whatever still says running was cut off."""
        for index, block in enumerate(self._doc.blocks):
            for j, inner in enumerate(block.get("blocks") or ()):
                if inner.get("status") == "running":
                    self._doc.set((index, j), status="cancelled")
            if block.get("status") == "running":
                self._doc.set((index,), status="cancelled")

    def _index(self, path: Path, block: dict[str, Any]) -> None:
        kind, node = block.get("type"), block.get("node_id")
        if kind == "flow_step":
            self._steps[node] = path
            block.setdefault("text", "")  # stored before steps took text
            if block["text"]:
                self._step_paragraphs[node] = Paragraphs(has_text=True)
        elif kind == "approval":
            self._approvals[node] = path
        elif kind == "member_run":
            self._members[(node, str(block.get("member_run_id") or block.get("member")))] = path

    def _name(self, node: str) -> str:
        return self._names.get(node, node)


_HANDLERS: dict[str, Callable[[MessageBuilder, str, str, dict[str, Any]], None]] = {
    "started": MessageBuilder._on_started,
    "token": MessageBuilder._on_token,
    "reasoning": lambda self, node, _type, data: self._delta(node, (), "reasoning", node, data.get("text")),
    "tool_call_started": MessageBuilder._on_tool_call_started,
    "tool_call_completed": lambda self, node, _type, data: self._tool_completed(node, (), node, data),
    "member_event": MessageBuilder._on_member,
    "progress": MessageBuilder._on_progress,
    "completed": MessageBuilder._on_completed,
    "error": MessageBuilder._on_error,
    "skipped": MessageBuilder._on_skipped,
    "paused": MessageBuilder._on_paused,
    "resumed": MessageBuilder._on_resumed,
    "cancelled": MessageBuilder._on_cancelled,
}


# What a graph says, in the object its last step gives: its `response` (an Agent's; a field set for the answer),
# else its `text` (an LLM Completion's), else its `message` (a Chat Start's). Not SPEC 5's primary text of an
# input, which reads `message` first: Edit Fields keeps its input's fields by default, so a step answering
# `{"message": <the person's message>, "response": ...}` answered with the person's own words.
ANSWER_KEYS = ("response", "text", "message")


def said(value: Any) -> str | None:
    """The text a final value says (a string, or an object's first ANSWER_KEYS field); None: it says no text."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for key in ANSWER_KEYS:
            if value.get(key) is not None:
                return to_text(value[key])
    return None


def answer_text(value: Any) -> str:
    """A final value as the answer's markdown: the text it says, else the value as a JSON code block."""
    text = said(value)
    if text is not None:
        return _clip(text, ANSWER_CHARS)
    return "```json\n" + _clip(json.dumps(value, indent=2, default=str, ensure_ascii=False), ANSWER_CHARS) + "\n```"


def approved_text(detail: Any) -> str:
    """The text of the value a pause asks about (its detail's `input`, as an Approval shows it), else ''."""
    text = said(detail.get("input") if isinstance(detail, dict) else None)
    return _clip(text, ANSWER_CHARS) if text is not None else ""


def summarize(outputs: Any) -> str:
    """One line about a node's outputs: the primary text of its first port (named when it is not `output`)."""
    if not isinstance(outputs, dict) or not outputs:
        return "no output"
    port, value = next(iter(outputs.items()))
    text = " ".join(primary_text(value).split())
    return _clip(text if port == "output" else f"{port}: {text}", SUMMARY_CHARS)


def _pretty(value: Any) -> str:
    return _clip(json.dumps(value, indent=2, default=str, ensure_ascii=False), DETAIL_CHARS)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"
