"""The test message of a Chat Start graph: typed in a small prompt, then sent as the trigger's payload of a
test run (the run itself is RunHistoryState's)."""

from __future__ import annotations

from typing import Any

import reflex as rx

from nodeflow_app.chat.service import CHAT_START
from nodeflow_app.runs.service import FIRST_PAYLOADS, TEST_MESSAGE
from nodeflow_app.state.run_history_state import RunHistoryState


class RunMessageState(rx.State):
    open: bool = False
    message: str = TEST_MESSAGE

    @rx.event
    def ask(self):
        self.open = True

    @rx.event
    def set_open(self, open_: bool):
        self.open = open_

    @rx.event
    def send(self, form: dict[str, Any]):
        text = str(form.get("message") or "").strip()
        if not text:
            return rx.toast.error("Type a message to test with")
        self.message, self.open = text, False
        return RunHistoryState.test_run("", chat_payload(text))


def chat_payload(message: str) -> dict[str, Any]:
    """A Chat Start's payload for a test run: the chat's shape, with this message and no chat."""
    return {**FIRST_PAYLOADS[CHAT_START](), "message": message}
