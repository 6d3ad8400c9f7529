"""The test message of a Chat Start graph: typed in a small prompt, then sent as the trigger's payload of a
test run (the run itself is RunHistoryState's). Like the chat, it sends the text: the trigger shapes it."""

from __future__ import annotations

from typing import Any

import reflex as rx

from nodeflow_app.state.run_history_state import RunHistoryState

TEST_MESSAGE = "Hello! This is a test run from the editor."


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
        return RunHistoryState.test_run("", text)
