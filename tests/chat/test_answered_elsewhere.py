"""A chat answer's approval belongs to the chat: answered in the run panel or through the API, the run went on and
completed while the chat's message stayed paused with an open card, and the chat's own Approve then failed."""

from __future__ import annotations

import pytest

from nodeflow_app.chat.service import ChatService
from nodeflow_app.runs.service import RunRefused, RunService
from tests.chat.test_service import collect, of_type, script_agent
from tests.llm.fake_openai import text
from tests.llm.graphs import refund_desk


@pytest.fixture
def service(tmp_path):
    chat_service = ChatService(f"sqlite:///{tmp_path / 'nodeflow.db'}", interval=0.01)
    yield chat_service
    chat_service.close()


async def test_a_chat_runs_approval_is_answered_in_the_chat_only(fake_llm, service):
    chat = service.create_chat(service.graphs.create("Refund desk", refund_desk()).id)
    script_agent(fake_llm, ["It", " is", " 42"])
    paused = (await collect(service.send(chat.id, "What is 6*7?")))[-1]
    assert paused.message.status == "paused"
    runs = RunService(launcher=service.launcher)  # what the run panel and POST /api/v1/runs/{id}/resume use
    with pytest.raises(RunRefused, match="answers a chat message: answer its card in the chat"):
        runs.answer(paused.run_id, "ok", "approve", None, "bob")
    fake_llm.script(text(["All", " done"]))
    end = (await collect(service.resume(chat.id, paused.message_id, "ok", "approve", who="ann")))[-1]
    [card] = of_type(end.message.blocks, "approval")
    assert (end.message.status, card["decision"]) == ("complete", "approve")
