"""A malformed answer to a paused node, sent through the services (the run panel's and the chat's cards), is
refused with the node's reason and the run stays paused: it failed the run, while the HTTP API refused it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nodeflow_app.chat.service import ChatError, ChatService
from nodeflow_app.runs.launcher import RunLauncher
from nodeflow_app.runs.service import RunRefused, RunService
from tests.chat.test_service import collect
from tests.llm.graphs import graph

APPROVAL = Path(__file__).parents[1] / "fixtures" / "graphs" / "examples" / "approval.json"
NOT_TEXT = "node 'Manager approval' does not take this answer: approval note must be text, got int 3"


#  Chat Start --> Manager approval --approve--> Approved
#                                  \-reject---> Rejected
async def test_the_run_service_refuses_a_note_that_is_not_text_and_the_run_stays_paused(tmp_path):
    launcher = RunLauncher(f"sqlite:///{tmp_path / 'runs.db'}")
    try:
        run = await launcher.start(json.loads(APPROVAL.read_text()), started_by="test", payload="refund 42").run()
        assert run.status == "paused"
        runs = RunService(launcher=launcher)
        with pytest.raises(RunRefused, match=NOT_TEXT):
            runs.answer(run.run_id, "ask", "approve", 3, "bob")
        assert launcher.store.get_run(run.run_id)["status"] == "paused"
        again = runs.answer(run.run_id, "ask", "approve", "fine", "bob")
        async for _ in again.resume("ask", {"decision": "approve", "note": "fine"}):
            pass
        assert again.status == "completed"
    finally:
        launcher.close()


#  Chat --> Ask (an approval)
async def test_the_chat_refuses_a_note_that_is_not_text_and_its_message_stays_paused(tmp_path):
    service = ChatService(f"sqlite:///{tmp_path / 'nodeflow.db'}", interval=0.01)
    try:
        raw = graph([("chat", "chat-start", {}), ("ask", "approval", {"prompt": "Ship?"})],
                    ["chat.output -> ask.input"])
        chat = service.create_chat(service.graphs.create("Ship", raw).id)
        paused = (await collect(service.send(chat.id, "ship it")))[-1]
        refused = "node 'ASK' does not take this answer: approval note must be text, got int 3"
        with pytest.raises(ChatError, match=f"^{refused}$"):  # not "this run cannot take an answer now"
            await collect(service.resume(chat.id, paused.message_id, "ask", "approve", 3, who="bob"))
        assert service.launcher.store.get_run(paused.run_id)["status"] == "paused"
        end = (await collect(service.resume(chat.id, paused.message_id, "ask", "approve", "ok", who="bob")))[-1]
        assert end.message.status == "complete"
    finally:
        service.close()
