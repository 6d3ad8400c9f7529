"""Text a model writes around tool calls: what it says after a tool call starts a new paragraph.

"Let me check." (tool call) "It is 4." reads "Let me check.\n\nIt is 4.", not "Let me check.It is 4.".
One rule for an agent's answer (nodeflow_app.llm.events) and for a step's text in chat (nodeflow_app.chat.adapter).
"""

from __future__ import annotations

PARAGRAPH_BREAK = "\n\n"


class Paragraphs:
    """One speaker's streamed text: `text` returns each delta as it is to be appended, `tool_call` marks a turn."""

    def __init__(self, has_text: bool = False):
        self._has_text = has_text  # a break goes only between two texts, never before the first one
        self._break_due = False

    def tool_call(self) -> None:
        self._break_due = self._has_text

    def text(self, delta: str) -> str:
        """`delta`, led by a paragraph break when it is the first text after a tool call."""
        if not delta:
            return delta
        lead = PARAGRAPH_BREAK if self._break_due else ""
        self._has_text, self._break_due = True, False
        return lead + delta
