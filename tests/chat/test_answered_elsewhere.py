"""A chat answer's approval belongs to the chat: answered in the run panel or through the API, the run went on and
completed while the chat's message stayed paused with an open card, and the chat's own Approve then failed."""

from __future__ import annotations

import pytest

from nodeflow_app.chat.service import ChatError, ChatService
from nodeflow_app.runs.service import RunRefused, RunService, approval_payload
from tests.chat.test_service import collect, of_type, script_agent
from tests.llm.fake_openai import text
from tests.llm.graphs import graph, refund_desk


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


async def test_a_card_answered_outside_the_chat_is_refused_and_leaves_the_run_answerable(service):
    """`nodeflow resume` (or a crash before the chat saved its message) answers a card the chat still shows open.
    The chat checks the card against the run's record while it holds the run: refused, the run is given back
    paused at its next question, not left claimed by this process and driven by nobody."""
    raw = graph([("chat", "chat-start", {}), ("first", "approval", {"prompt": "First?"}),
                 ("second", "approval", {"prompt": "Second?"})],
                ["chat.output -> first.input", "first.approve -> second.input"])
    chat = service.create_chat(service.graphs.create("Two approvals", raw).id)
    paused = (await collect(service.send(chat.id, "ship it")))[-1]
    launcher = service.launcher
    elsewhere = launcher.restore(paused.run_id)  # what `nodeflow resume --node first` does
    async for _ in elsewhere.resume("first", approval_payload("approve", None, "cli")):
        pass
    assert elsewhere.status == "paused"

    with pytest.raises(ChatError, match="node 'first' is not waiting for input"):
        await collect(service.resume(chat.id, paused.message_id, "first", "approve", who="bob"))
    assert launcher.store.get_run(paused.run_id)["status"] == "paused"
    answer = approval_payload("approve", None, "ann")
    again = launcher.answer(paused.run_id, "second", answer)
    assert again is not None  # restored here, not "taken" by a run nobody drives
    async for _ in again.resume("second", answer):
        pass
    assert again.status == "completed"
