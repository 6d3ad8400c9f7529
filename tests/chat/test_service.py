"""ChatService end to end: real runs, real Agno, real HTTP against the fake OpenAI server, a SQLite file.

    Chat Start --> Agent --> Approval --approve--> LLM Completion
                     ^               \\--reject---> Prompt Template "Rejected (note)"
          Toolset (calculator) ==tools==
"""

from __future__ import annotations

import asyncio
import time

import pytest
from sqlalchemy import text as text_sql

from nodeflow_app.chat.patch import apply_patch, step_statuses
from nodeflow_app.chat.blocks import validate_blocks
from nodeflow_app.chat.service import ChatError, ChatService, ChatUpdate
from nodeflow_app.store.chats import ChatNotFound
from nodeflow_app.store.graphs import GraphNotFound
from nodeflow_app.templates import TEMPLATES_DIR, read_template
from tests.llm.fake_openai import text, tool_call
from tests.llm.graphs import MODEL, graph, refund_desk

RAW = refund_desk()


@pytest.fixture
def url(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'nodeflow.db'}"


@pytest.fixture
def service(url):
    chat_service = ChatService(url, interval=0.01)
    yield chat_service
    chat_service.close()


@pytest.fixture
def chat(service):
    stored = service.graphs.create("Refund desk", RAW)
    return service.create_chat(stored.id)


async def collect(updates) -> list[ChatUpdate]:
    return [update async for update in updates]


def replay(updates: list[ChatUpdate], blocks: list | None = None) -> list:
    """What a UI holding `blocks` shows after applying every update of one answer."""
    blocks = list(blocks or [])
    for update in updates:
        if update.kind in ("patch", "end"):
            apply_patch(blocks, update.ops)
    return blocks


def of_type(blocks: list, kind: str) -> list:
    return [b for b in blocks if b["type"] == kind]


def steps(blocks: list) -> dict:
    return {b["node_id"]: b["status"] for b in of_type(blocks, "flow_step")}


def step_of(blocks: list, node_id: str) -> dict:
    [card] = [b for b in of_type(blocks, "flow_step") if b["node_id"] == node_id]
    return card


def script_agent(fake_llm, answer: list[str], delay: float = 0.0) -> None:
    fake_llm.script(tool_call("calculator", {"expression": "6*7"}), text(answer, delay=delay))


async def test_a_message_streams_steps_a_tool_call_and_an_approval_then_approve_continues(fake_llm, service, chat):
    script_agent(fake_llm, ["It", " is", " 42"], delay=0.03)
    updates = await collect(service.send(chat.id, "What is 6*7?"))
    kinds = [u.kind for u in updates]
    assert kinds[:2] == ["user", "start"] and kinds[-1] == "end" and kinds.count("patch") >= 3
    user, start, end = updates[0].message, updates[1], updates[-1]
    assert user.text == "What is 6*7?" and user.parent_id is None
    assert (start.message.parent_id, start.message.status, start.run_id) == (user.id, "streaming", end.run_id)
    # The draft's text arrived in several batches, each carrying only what was new.
    appended = [op["text"] for u in updates for op in u.ops if op["op"] == "append"]
    assert len(appended) >= 2 and "".join(appended) in ("It is 42", " is 42", " 42")
    answer = end.message
    assert (answer.status, end.status) == ("paused", "paused")
    assert replay(updates) == answer.blocks == validate_blocks(answer.blocks)
    [call] = of_type(answer.blocks, "tool_call")
    assert (call["name"], call["arguments"], call["result"], call["status"]) == (
        "calculator", {"expression": "6*7"}, "42", "completed")
    # An Approval follows the agent: its text is a draft in its step, not the answer.
    assert of_type(answer.blocks, "text") == [] and step_of(answer.blocks, "agent")["text"] == "It is 42"
    assert steps(answer.blocks) == {"chat": "completed", "agent": "completed", "ok": "paused"}
    live: dict[str, str] = {}  # what the canvas shows, batch after batch
    for update in updates:
        live.update(step_statuses(update.ops))
    assert live == steps(answer.blocks)
    [card] = of_type(answer.blocks, "approval")
    assert (card["node_id"], card["node_name"], card["prompt"], card["decision"]) == (
        "ok", "OK", "Send 'It is 42'?", None)
    assert service.history(chat.id).chat.title == "What is 6*7?"

    fake_llm.script(text(["All", " done"]))
    resumed = await collect(service.resume(chat.id, answer.id, "ok", "approve", note="fine", who="ann"))
    assert [u.kind for u in resumed][0] == "start" and resumed[-1].status == "complete"
    final = resumed[-1].message
    assert replay(resumed, answer.blocks) == final.blocks
    assert steps(final.blocks) == {"chat": "completed", "agent": "completed", "ok": "completed",
                                   "llm": "completed", "no": "skipped"}
    [card] = of_type(final.blocks, "approval")
    assert (card["decision"], card["note"], card["decided_by"]) == ("approve", "fine", "ann")
    assert card["decided_at"] > answer.created_at
    assert [b["text"] for b in of_type(final.blocks, "text")] == ["All done"]  # the LLM after the approval
    with pytest.raises(ChatError, match="not waiting for an answer"):
        await collect(service.resume(chat.id, answer.id, "ok", "approve"))


async def test_a_drafts_text_before_and_after_a_tool_call_are_two_paragraphs_of_its_step(fake_llm, service, chat):
    """The agent says something, calls a tool, then answers: its step reads as two paragraphs, not one run-on."""
    fake_llm.script(tool_call("calculator", {"expression": "6*7"}, saying=["Let me", " check."]),
                    text(["It", " is", " 42."]))
    answer = (await collect(service.send(chat.id, "What is 6*7?")))[-1].message
    assert step_of(answer.blocks, "agent")["text"] == "Let me check.\n\nIt is 42."
    assert of_type(answer.blocks, "text") == []  # still a draft (an Approval follows): not the answer


async def test_reject_takes_the_other_branch(fake_llm, service, chat):
    script_agent(fake_llm, ["Refund", " 42"])
    end = (await collect(service.send(chat.id, "Refund me")))[-1]
    with pytest.raises(ChatError, match="answer one of approve, reject, not 'maybe'"):
        await collect(service.resume(chat.id, end.message_id, "ok", "maybe"))
    final = (await collect(service.resume(chat.id, end.message_id, "ok", "reject", note="too much")))[-1].message
    assert final.status == "complete"
    assert steps(final.blocks)["no"] == "completed" and steps(final.blocks)["llm"] == "skipped"
    assert step_of(final.blocks, "no")["summary"] == "Rejected (too much)"
    assert [b["text"] for b in of_type(final.blocks, "text")] == ["Rejected (too much)"]  # the branch taken answers
    [ok] = [b for b in of_type(final.blocks, "flow_step") if b["node_id"] == "ok"]
    assert ok["ports"] == ["reject"]  # the canvas draws the edge the data took, not the other one
    assert len(fake_llm.requests) == 2  # the agent's two calls; the LLM Completion never ran


def approval_template() -> dict:
    """Chat Start --> Draft (agent) --> Approval --approve--> Send ("{{ Draft's response }}")
                                                 \\--reject---> Hold ("The draft was rejected ({note}); ...")"""
    raw = read_template(TEMPLATES_DIR / "approval.json").new_graph()
    [draft] = [node for node in raw["nodes"] if node["id"] == "draft"]
    draft["data"]["model"] = MODEL
    return raw


@pytest.mark.parametrize("decision, note, answer", [
    ("approve", "ok to send", "Dear customer, yes."),
    ("reject", "too generous", "The draft was rejected (too generous); nothing was sent.")])
async def test_the_approval_templates_answer_is_what_the_graph_answers_never_the_draft(
        fake_llm, service, decision, note, answer):
    chat = service.create_chat(service.graphs.create("Approval before replying", approval_template()).id)
    fake_llm.script(text(["Dear", " customer,", " yes."], delay=0.02))
    updates = await collect(service.send(chat.id, "Can I get a refund?"))
    paused = updates[-1].message
    assert paused.status == "paused"
    # Nothing streamed into an answer: every block that ever went out is a step or the approval card.
    sent = {op["block"]["type"] for u in updates for op in u.ops if op["op"] == "set"}
    assert sent == {"flow_step", "approval"} and of_type(paused.blocks, "text") == []
    assert step_of(paused.blocks, "draft")["text"] == "Dear customer, yes."  # the draft, in its (collapsed) step
    [card] = of_type(paused.blocks, "approval")
    assert card["text"] == "Dear customer, yes."  # what is approved, readable

    final = (await collect(service.resume(chat.id, paused.id, "ask", decision, note=note, who="ann")))[-1].message
    assert final.status == "complete"
    assert [b["text"] for b in of_type(final.blocks, "text")] == [answer]


async def test_stop_keeps_a_partial_stopped_answer_and_retry_makes_a_sibling(fake_llm, service, chat):
    script_agent(fake_llm, [f"w{i} " for i in range(200)], delay=0.02)
    updates: list[ChatUpdate] = []
    async for update in service.send(chat.id, "Talk a lot"):
        updates.append(update)
        if update.kind == "patch" and any(op["op"] == "append" for op in update.ops):
            assert service.stop(update.run_id)
    stopped = updates[-1].message
    assert stopped.status == "stopped" and not service.stop(stopped.run_id)
    partial = step_of(stopped.blocks, "agent")["text"]  # a draft: an Approval follows the agent
    assert partial.startswith("w0 ") and len(partial.split()) < 100 and of_type(stopped.blocks, "text") == []
    assert steps(stopped.blocks)["agent"] == "cancelled"
    assert service.history(chat.id).messages[stopped.id].blocks == stopped.blocks
    assert fake_llm.streams[-1].abandoned

    fake_llm.reset()
    fake_llm.script(text(["Short", " one"]))
    retried = (await collect(service.retry(chat.id, stopped.id)))[-1].message
    assert retried.parent_id == stopped.parent_id and retried.status == "paused"
    history = service.history(chat.id)
    assert history.siblings(retried.id) == [stopped.id, retried.id]
    assert history.path == [stopped.parent_id, retried.id]
    assert history.branch(stopped.id) == [stopped.parent_id, stopped.id]


async def test_a_consumer_that_leaves_early_stops_the_run(fake_llm, service, chat):
    """A UI handler that breaks out (aclose) or is cancelled must not leave a run going on unobserved."""
    script_agent(fake_llm, [f"w{i} " for i in range(200)], delay=0.02)
    updates = service.send(chat.id, "Talk")
    async for update in updates:
        if update.kind == "patch" and any(op["op"] == "append" for op in update.ops):
            break
    await updates.aclose()
    left = service.history(chat.id).messages[update.message_id]
    assert left.status == "stopped" and step_of(left.blocks, "agent")["text"].startswith("w0 ")
    assert service.runs.get_run(left.run_id)["status"] == "cancelled" and not service.launcher.is_live(left.run_id)

    # Leaving right after `start` stops the run too.
    updates = service.send(chat.id, "Never mind")
    async for update in updates:
        if update.kind == "start":
            break
    await updates.aclose()
    assert service.history(chat.id).messages[update.message_id].status == "stopped"
    assert service.runs.get_run(update.run_id)["status"] == "cancelled"

    fake_llm.reset()  # whatever the stopped runs left unread
    script_agent(fake_llm, [f"w{i} " for i in range(200)], delay=0.02)
    seen: list[ChatUpdate] = []

    async def consume() -> None:
        async for update in service.send(chat.id, "Talk again"):
            seen.append(update)

    task = asyncio.create_task(consume())
    while not any(op["op"] == "append" for u in seen for op in u.ops):
        await asyncio.sleep(0.01)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert service.history(chat.id).messages[seen[-1].message_id].status == "stopped"


async def test_a_tool_that_needs_confirmation_asks_in_the_chat(fake_llm, url):
    from tests.llm.test_tool_confirmation import deleted, registry_with_guarded_tools

    deleted.clear()
    service = ChatService(url, registry=registry_with_guarded_tools(), interval=0.01)
    try:
        raw = graph([("chat", "chat-start", {}), ("a", "agent", {"model": MODEL}), ("kit", "test-guarded-tools", {})],
                    ["chat.output -> a.input", "kit.tools => a.tools"])
        chat = service.create_chat(service.graphs.create("Files", raw).id)
        fake_llm.script(tool_call("delete_file", {"path": "/tmp/old.log"}), text("Deleted it."))
        paused = (await collect(service.send(chat.id, "Delete /tmp/old.log")))[-1].message
        [card] = of_type(paused.blocks, "approval")
        assert (paused.status, card["node_id"]) == ("paused", "a")
        assert card["prompt"] == 'Allow tool delete_file with args {"path": "/tmp/old.log"}?'
        final = (await collect(service.resume(chat.id, paused.id, "a", "approve", who="ann")))[-1].message
        assert final.status == "complete" and deleted == ["/tmp/old.log"]
        assert of_type(final.blocks, "text")[-1]["text"] == "Deleted it."
    finally:
        deleted.clear()
        service.close()


async def test_edit_makes_a_user_sibling_and_answers_it(fake_llm, service, chat):
    fake_llm.script(text("first answer"), text("second answer"))
    first = await collect(service.send(chat.id, "Frist question"))
    edited = await collect(service.edit(chat.id, first[0].message_id, "First question"))
    new_user, new_answer = edited[0].message, edited[-1].message
    assert new_user.parent_id is None and new_answer.parent_id == new_user.id
    history = service.history(chat.id)
    assert history.siblings(new_user.id) == [first[0].message_id, new_user.id]
    assert history.path == [new_user.id, new_answer.id]
    # A follow-up continues the latest branch.
    fake_llm.script(text("third"))
    follow = await collect(service.send(chat.id, "And then?"))
    assert follow[0].message.parent_id == new_answer.id
    with pytest.raises(ChatError, match="only a user's message can be edited"):
        await collect(service.edit(chat.id, new_answer.id, "x"))
    other = service.create_chat(chat.graph_id, "Someone else's chat")  # ids come from the browser
    with pytest.raises(ChatNotFound, match=f"no message '{new_user.id}' in chat '{other.id}'"):
        await collect(service.edit(other.id, new_user.id, "x"))
    with pytest.raises(ChatNotFound, match=f"no message '{new_answer.id}' in chat '{other.id}'"):
        await collect(service.retry(other.id, new_answer.id))


async def test_after_a_restart_the_history_is_whole_and_a_paused_run_resumes(fake_llm, url, service, chat):
    script_agent(fake_llm, ["It", " is", " 42"])
    paused = (await collect(service.send(chat.id, "What is 6*7?")))[-1].message
    before = service.history(chat.id)
    service.close()

    restarted = ChatService(url, interval=0.01)
    try:
        assert restarted.recover() == []
        after = restarted.history(chat.id)
        assert after.messages == before.messages and after.path == before.path
        assert [c.id for c in restarted.list_chats(chat.graph_id)] == [chat.id]
        fake_llm.script(text(["All", " done"]))
        final = (await collect(restarted.resume(chat.id, paused.id, "ok", "approve", who="bob")))[-1].message
        assert final.status == "complete" and steps(final.blocks)["llm"] == "completed"
        assert of_type(final.blocks, "approval")[0]["decided_by"] == "bob"
        assert restarted.history(chat.id).messages[paused.id].blocks == final.blocks
    finally:
        restarted.close()


async def test_an_answer_left_streaming_by_a_dead_process_becomes_failed(service, chat):
    user = service.chats.add_message(chat.id, "user", [{"type": "text", "text": "hi"}], parent_id=None)
    ghost = service.chats.add_message(chat.id, "assistant", [], parent_id=user.id, status="streaming")
    assert service.recover() == [ghost.id]
    message = service.history(chat.id).messages[ghost.id]
    assert message.status == "failed" and message.blocks[-1]["message"].startswith("the server stopped")


async def test_a_graph_without_a_model_answers_with_its_final_value(service):
    stored = service.graphs.create("Splitter", graph([("chat", "chat-start", {}), ("split", "text-split", {})],
                                                      ["chat.output -> split.input"]))
    chat = service.create_chat(stored.id)
    end = (await collect(service.send(chat.id, "fig, pear")))[-1]
    assert end.status == "complete"
    assert of_type(end.message.blocks, "text") == [
        {"type": "text", "node_id": "split", "text": '```json\n[\n  "fig",\n  "pear"\n]\n```'}]


async def test_a_graph_it_cannot_run_gets_a_failed_answer_that_says_why(service):
    stored = service.graphs.create("No trigger", graph([("llm", "llm-completion", {"model": MODEL})], []))
    chat = service.create_chat(stored.id)
    [user, end] = await collect(service.send(chat.id, "hello"))
    assert (end.kind, end.status) == ("end", "failed")
    assert end.message.blocks == [{"type": "error", "node_id": None, "node_name": None,
                                   "message": "add a Chat Start node to start runs from chat"}]
    with pytest.raises(ChatError, match="needs some text"):
        await collect(service.send(chat.id, "  "))


def test_chats_of_a_graph_are_created_listed_renamed_and_deleted(service):
    graph_id = service.graphs.create("G", RAW).id
    first, second = service.create_chat(graph_id), service.create_chat(graph_id, "Pricing")
    assert [c.id for c in service.list_chats(graph_id)] == [second.id, first.id]
    service.rename_chat(first.id, "  Refunds\n  in May ")
    assert [c.title for c in service.list_chats(graph_id)] == ["Pricing", "Refunds in May"]
    service.delete_chat(second.id)
    assert [c.id for c in service.list_chats(graph_id)] == [first.id]
    with pytest.raises(ChatNotFound):
        service.delete_chat(second.id)
    with pytest.raises(ChatNotFound):
        service.history(second.id)
    with pytest.raises(GraphNotFound):
        service.create_chat("nope")


async def test_a_quiet_streaming_answer_is_saved_every_few_seconds(fake_llm, url):
    """Chat Start -> LLM (streams at once) -> Wait (quiet): the stored answer has the text before the run ends."""
    service = ChatService(url, interval=0.01, save_interval=0.2)
    try:
        raw = graph([("chat", "chat-start", {}), ("llm", "llm-completion", {"model": MODEL}),
                     ("wait", "wait", {"amount": 4})], ["chat.output -> llm.input", "llm.output -> wait.input"])
        chat = service.create_chat(service.graphs.create("Quiet", raw).id)
        fake_llm.script(text(["Saved", " early"]))
        updates: list[ChatUpdate] = []

        async def consume() -> None:
            async for update in service.send(chat.id, "hi"):
                updates.append(update)

        task = asyncio.create_task(consume())
        deadline = time.monotonic() + 30
        while not any(op.get("block", {}).get("node_id") == "wait" for u in updates for op in u.ops):
            assert time.monotonic() < deadline and not task.done(), "the Wait never started"
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.6)  # three save intervals into the Wait's 4 quiet seconds: no batch was sent
        start = next(u for u in updates if u.kind == "start")
        stored = service.history(chat.id).messages[start.message_id]
        assert stored.status == "streaming" and not task.done()  # the Wait still runs: no end yet
        assert of_type(stored.blocks, "text")[0]["text"] == "Saved early"
        await task
    finally:
        service.close()


async def test_after_a_kill_a_paused_answer_keeps_its_approval_card_and_can_be_answered(fake_llm, url, service, chat):
    script_agent(fake_llm, ["It", " is", " 42"])
    paused = (await collect(service.send(chat.id, "What is 6*7?")))[-1].message
    # What a kill -9 at that moment leaves: the answer still `streaming`, its run `running` under a dead process.
    service.chats.update_message(paused.id, status="streaming")
    with service.engine.begin() as conn:
        conn.execute(text_sql("UPDATE run SET status='running', owner='gone-host:1:x', heartbeat_at=0 WHERE id=:id"),
                     {"id": paused.run_id})
    assert service.recover() == [paused.id]
    recovered = service.history(chat.id).messages[paused.id]
    assert recovered.status == "paused" and recovered.blocks == paused.blocks  # nothing lost, nothing added
    assert service.runs.get_run(paused.run_id)["status"] == "interrupted"
    fake_llm.script(text(["All", " done"]))
    final = (await collect(service.resume(chat.id, paused.id, "ok", "approve", who="ann")))[-1].message
    assert final.status == "complete" and steps(final.blocks)["llm"] == "completed"


def test_each_member_lists_only_their_own_chats_of_a_graph(service):
    graph_id = service.graphs.create("Shared desk", RAW).id
    ann, bob = service.create_chat(graph_id, "Ann's", user_id="u-ann"), service.create_chat(graph_id, "Bob's",
                                                                                              user_id="u-bob")
    assert [c.id for c in service.list_chats(graph_id, "u-ann")] == [ann.id]
    assert [c.id for c in service.list_chats(graph_id, "u-bob")] == [bob.id]
    assert service.get_chat(bob.id).user_id == "u-bob"  # what ChatState checks before it opens a chat by id


async def test_sending_editing_and_retrying_read_the_chat_off_the_event_loop(service, monkeypatch):
    """Each read the whole chat (send) or its messages (edit, retry) on the loop every run and tab shares."""
    import threading

    stored = service.graphs.create("Splitter", graph([("chat", "chat-start", {}), ("split", "text-split", {})],
                                                      ["chat.output -> split.input"]))
    chat = service.create_chat(stored.id)
    on_the_loop = []
    for name in ("history", "get_message", "get_chat"):
        read = getattr(service.chats, name)

        def recorded(*args, name=name, read=read, **kwargs):
            if threading.current_thread() is threading.main_thread():
                on_the_loop.append(name)
            return read(*args, **kwargs)

        monkeypatch.setattr(service.chats, name, recorded)
    sent = await collect(service.send(chat.id, "fig, pear"))
    edited = await collect(service.edit(chat.id, sent[0].message_id, "plum"))
    retried = await collect(service.retry(chat.id, edited[-1].message_id))
    assert [updates[-1].status for updates in (sent, edited, retried)] == ["complete"] * 3
    assert on_the_loop == []
