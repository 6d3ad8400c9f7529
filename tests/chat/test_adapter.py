"""MessageBuilder over scripted NodeEvent sequences: the blocks of an assistant message, and its patches."""

from __future__ import annotations

import json

from nodeflow_app.chat.adapter import MessageBuilder, answer_text, approved_text, summarize
from nodeflow_app.chat.patch import apply_patch
from nodeflow_app.chat.blocks import validate_blocks
from nodeflow_app.contract import NodeEvent

NAMES = {"chat": "Chat Start", "a": "Researcher", "b": "Writer", "ok": "Approval"}
TYPES = {"chat": "chat-start", "a": "agent", "b": "llm-completion", "ok": "approval", "call": "execute-graph"}


def ev(node: str, event_type: str, **data) -> NodeEvent:
    return NodeEvent("run-1", node, TYPES[node], event_type, data)


def build(*events: NodeEvent, blocks=None) -> MessageBuilder:
    builder = MessageBuilder(NAMES, blocks=blocks)
    for event in events:
        builder.consume(event)
    return builder


def kinds(blocks) -> list[tuple]:
    return [(b["type"], b.get("node_id")) for b in blocks]


def step(blocks, node: str) -> dict:
    [card] = [b for b in blocks if b["type"] == "flow_step" and b["node_id"] == node]
    return card


def test_tokens_of_two_nodes_go_to_a_text_block_each():
    builder = build(
        ev("chat", "started", name="Chat Start"), ev("chat", "completed", outputs={"output": {"message": "hi"}},
                                                     duration_ms=0.4),
        ev("a", "started", name="Researcher"), ev("b", "started", name="Writer"),
        ev("a", "token", text="Par"), ev("b", "token", text="Sum"), ev("a", "token", text="is"),
        ev("b", "token", text="mary"),
        ev("a", "completed", outputs={"output": {"response": "Paris", "model": "m"}}, duration_ms=12.5),
    )
    blocks = builder.snapshot()
    assert kinds(blocks) == [("flow_step", "chat"), ("flow_step", "a"), ("flow_step", "b"),
                             ("text", "a"), ("text", "b")]
    assert [b["text"] for b in blocks if b["type"] == "text"] == ["Paris", "Summary"]
    assert step(blocks, "chat") | {"duration_ms": None} == {
        "type": "flow_step", "node_id": "chat", "node_name": "Chat Start", "node_type": "chat-start",
        "status": "completed", "summary": "hi", "detail": '{\n  "output": {\n    "message": "hi"\n  }\n}',
        "duration_ms": None, "cached": False, "ports": ["output"], "child_run_url": "", "text": ""}
    assert (step(blocks, "a")["status"], step(blocks, "a")["duration_ms"]) == ("completed", 12.5)
    assert step(blocks, "b")["status"] == "running"
    assert validate_blocks(blocks) == blocks


def test_text_of_a_node_that_is_not_the_answer_streams_into_its_step_not_into_the_answer():
    """Researcher (a draft an Approval checks) streams before the pause; only Writer's text is the answer."""
    builder = MessageBuilder(NAMES, answers={"b"})
    for event in (ev("a", "started", name="Researcher"), ev("a", "token", text="Dear")):
        builder.consume(event)
    shown = apply_patch([], builder.flush())
    builder.consume(ev("a", "token", text=" customer"))
    assert builder.flush() == [{"op": "append", "path": [0], "text": " customer"}]  # into the step, cheaply
    for event in (ev("a", "completed", outputs={"output": {"response": "Dear customer"}}, duration_ms=1.0),
                  ev("ok", "started", name="Approval"),
                  ev("ok", "paused", prompt="Send it?", detail={"input": {"response": "Dear customer", "model": "m"}})):
        builder.consume(event)
    builder.finish("paused")
    blocks = builder.snapshot()
    assert apply_patch(shown, builder.flush()) == blocks
    assert kinds(blocks) == [("flow_step", "a"), ("flow_step", "ok"), ("approval", "ok")]  # no answer yet
    assert step(blocks, "a")["text"] == "Dear customer"
    assert blocks[2]["text"] == "Dear customer"  # what is approved, as text (the detail keeps the whole input)

    resumed = MessageBuilder(NAMES, blocks=blocks, answers={"b"})
    for event in (ev("b", "started", name="Writer"), ev("b", "token", text="Sent.")):
        resumed.consume(event)
    assert [(b["type"], b["text"]) for b in resumed.snapshot() if b["type"] == "text"] == [("text", "Sent.")]
    assert validate_blocks(resumed.snapshot()) == resumed.snapshot()


def test_a_drafts_text_after_a_tool_call_starts_a_new_paragraph_of_its_step():
    """Researcher's step: no blank line before its first text, one between what it said before and after a tool
    call, also in a message that goes on (a resumed run); the answering node's text blocks stay as they were."""
    call = {"id": "c1", "name": "calculator", "arguments": {"expression": "2+2"}}
    builder = MessageBuilder(NAMES, answers={"b"})
    for event in (ev("a", "started", name="Researcher"), ev("a", "tool_call_started", **call),
                  ev("a", "tool_call_completed", **call, result="4"), ev("a", "token", text="Let me"),
                  ev("a", "token", text=" check."), ev("a", "tool_call_started", **call),
                  ev("a", "tool_call_completed", **call, result="4"), ev("a", "token", text="It is 4.")):
        builder.consume(event)
    assert step(builder.snapshot(), "a")["text"] == "Let me check.\n\nIt is 4."
    resumed = MessageBuilder(NAMES, blocks=builder.snapshot(), answers={"b"})
    for event in (ev("a", "tool_call_started", **call), ev("a", "token", text="Sure."), ev("b", "token", text="Hi"),
                  ev("b", "tool_call_started", id="c2", name="calculator"), ev("b", "token", text="Bye")):
        resumed.consume(event)
    blocks = resumed.snapshot()
    assert step(blocks, "a")["text"] == "Let me check.\n\nIt is 4.\n\nSure."
    assert [b["text"] for b in blocks if b["type"] == "text"] == ["Hi", "Bye"]


def test_an_approval_shows_the_text_it_asks_about_only_when_there_is_one():
    for detail, text in (({"input": "plain words"}, "plain words"), ({"input": {"message": "hi", "n": 1}}, "hi"),
                         ({"input": {"total": 3}}, ""), ({"tool": "rm", "args": {}}, ""), (None, "")):
        builder = build(ev("ok", "paused", prompt="Go?", detail=detail))
        assert builder.snapshot()[1]["text"] == text


def test_a_tool_call_is_one_card_and_the_text_after_it_a_new_block():
    builder = build(
        ev("a", "started", name="Researcher"),
        ev("a", "reasoning", text="need "), ev("a", "reasoning", text="math"),
        ev("a", "token", text="Let me compute."),
        ev("a", "tool_call_started", id="call_1", name="calculator", arguments={"expression": "6*7"}),
        ev("a", "tool_call_completed", id="call_1", name="calculator", arguments={"expression": "6*7"},
           result="42", error=None),
        ev("a", "tool_call_started", id="call_2", name="divide", arguments={"a": 1, "b": 0}),
        ev("a", "tool_call_completed", id="call_2", name="divide", arguments={"a": 1, "b": 0},
           result=None, error="division by zero"),
        ev("a", "token", text="It is 42."),
    )
    blocks = builder.snapshot()
    assert kinds(blocks) == [("flow_step", "a"), ("reasoning", "a"), ("text", "a"), ("tool_call", "a"),
                             ("tool_call", "a"), ("text", "a")]
    assert blocks[1]["text"] == "need math" and blocks[2]["text"] == "Let me compute."
    assert blocks[3] == {"type": "tool_call", "node_id": "a", "call_id": "call_1", "name": "calculator",
                         "arguments": {"expression": "6*7"}, "result": "42", "error": None, "status": "completed"}
    assert (blocks[4]["status"], blocks[4]["error"]) == ("failed", "division by zero")
    assert blocks[5]["text"] == "It is 42."


def test_member_work_nests_under_a_member_run():
    def member(event_type: str, **data) -> NodeEvent:
        return ev("a", "member_event", member="Helper", member_run_id="m1",
                  event={"event_type": event_type, "data": data})

    builder = build(
        ev("a", "started", name="Researcher"),
        ev("a", "tool_call_started", id="d1", name="delegate_task_to_member", arguments={"task": "add"}),
        member("started"), member("tool_call_started", id="t1", name="add", arguments={"a": 1}),
        member("tool_call_completed", id="t1", name="add", arguments={"a": 1}, result="3", error=None),
        member("token", text="3"), member("token", text=" it is"),
        member("completed", content="3 it is", usage={}),
        ev("a", "tool_call_completed", id="d1", name="delegate_task_to_member", arguments={}, result="3 it is",
           error=None),
        ev("a", "token", text="The sum is 3"),
    )
    blocks = builder.snapshot()
    assert kinds(blocks) == [("flow_step", "a"), ("tool_call", "a"), ("member_run", "a"), ("text", "a")]
    run = blocks[2]
    assert (run["member"], run["member_run_id"], run["status"]) == ("Helper", "m1", "completed")
    assert kinds(run["blocks"]) == [("tool_call", "a"), ("text", "a")]
    assert run["blocks"][0]["result"] == "3" and run["blocks"][1]["text"] == "3 it is"
    assert blocks[1]["status"] == "completed" and blocks[3]["text"] == "The sum is 3"
    assert validate_blocks(blocks) == blocks


def test_a_failed_node_gets_a_failed_card_and_one_error_block_naming_it():
    builder = build(ev("a", "started", name="Researcher"), ev("a", "token", text="partial"),
                    ev("a", "tool_call_started", id="c", name="slow", arguments={}),
                    ev("a", "error", error="model openai:x failed (HTTP 500): boom", handled=False))
    assert builder.finish("failed", "node 'Researcher' failed: model openai:x failed (HTTP 500): boom") == "failed"
    blocks = builder.snapshot()
    assert kinds(blocks) == [("flow_step", "a"), ("text", "a"), ("tool_call", "a"), ("error", "a")]
    assert (step(blocks, "a")["status"], step(blocks, "a")["summary"]) == (
        "failed", "model openai:x failed (HTTP 500): boom")
    assert blocks[3] == {"type": "error", "node_id": "a", "node_name": "Researcher",
                         "message": "model openai:x failed (HTTP 500): boom"}
    assert blocks[2]["status"] == "cancelled"  # cut off by the failure
    assert blocks[1]["text"] == "partial"


def test_a_run_that_fails_outside_any_node_still_says_why():
    builder = build(ev("a", "started", name="Researcher"))
    builder.finish("failed", "internal error after node 'Researcher': KeyError: 'x'")
    *_, error = builder.snapshot()
    assert error == {"type": "error", "node_id": None, "node_name": None,
                     "message": "internal error after node 'Researcher': KeyError: 'x'"}


def test_a_handled_error_keeps_the_step_going_to_its_output():
    builder = build(ev("a", "started", name="Researcher"), ev("a", "error", error="boom", handled=True),
                    ev("a", "completed", outputs={"output": {"error": "boom"}}, duration_ms=1.0))
    assert [b["type"] for b in builder.snapshot()] == ["flow_step"]
    assert step(builder.snapshot(), "a")["status"] == "completed"


def test_a_pause_becomes_an_approval_card_and_the_answer_is_recorded_after_a_reload():
    builder = build(
        ev("ok", "started", name="Approval"),
        ev("ok", "paused", prompt="Send it?", options=["approve", "reject"], detail={"input": {"x": 1}}),
        ev("b", "skipped", reason="no input arrived"),
    )
    assert builder.finish("paused") == "paused"
    stored = builder.snapshot()
    assert kinds(stored) == [("flow_step", "ok"), ("approval", "ok"), ("flow_step", "b")]
    assert stored[1] == {"type": "approval", "node_id": "ok", "node_name": "Approval", "prompt": "Send it?",
                         "options": ["approve", "reject"], "detail": {"input": {"x": 1}}, "text": "", "resume_at": None,
                         "decision": None, "note": None, "decided_by": None, "decided_at": None}
    assert (stored[0]["status"], stored[0]["summary"]) == ("paused", "Send it?")
    assert (stored[2]["status"], stored[2]["summary"]) == ("skipped", "no input arrived")

    # The service rebuilds the builder from the stored blocks when the answer comes (maybe in another process).
    resumed = build(ev("ok", "resumed", payload={"decision": "approve", "note": "fine", "by": "ann", "at": 5.0}),
                    ev("ok", "started", name="Approval"),
                    ev("ok", "completed", outputs={"approve": {"x": 1}}, duration_ms=0.1),
                    ev("b", "started", name="Writer"), ev("b", "token", text="Done"),
                    ev("b", "completed", outputs={"output": {"text": "Done"}}, duration_ms=2.0), blocks=stored)
    resumed.finish("completed")
    blocks = resumed.snapshot()
    assert kinds(blocks) == kinds(stored) + [("text", "b")]
    assert {k: blocks[1][k] for k in ("decision", "note", "decided_by", "decided_at")} == {
        "decision": "approve", "note": "fine", "decided_by": "ann", "decided_at": 5.0}
    assert (blocks[0]["status"], blocks[0]["summary"]) == ("completed", 'approve: {"x": 1}')
    assert (blocks[2]["status"], blocks[2]["summary"]) == ("completed", "Done")  # b's card, updated in place
    assert blocks[3]["text"] == "Done"


def test_a_cancelled_run_is_stopped_and_nothing_says_running():
    builder = build(ev("a", "started", name="Researcher"), ev("a", "token", text="half an ans"),
                    ev("a", "cancelled"))
    assert builder.finish("cancelled") == "stopped"
    blocks = builder.snapshot()
    assert step(blocks, "a")["status"] == "cancelled" and blocks[1]["text"] == "half an ans"


def test_flushes_replayed_in_order_rebuild_the_message():
    events = [ev("chat", "started", name="Chat Start"), ev("chat", "completed", outputs={"output": {}}),
              ev("a", "started", name="Researcher"), *[ev("a", "token", text=f"t{i} ") for i in range(5)],
              ev("a", "tool_call_started", id="c", name="calc", arguments={}),
              *[ev("a", "member_event", member="H", member_run_id="m", event={"event_type": "token", "data": {"text": t}})
                for t in "xy"],
              ev("a", "tool_call_completed", id="c", name="calc", arguments={}, result="1", error=None),
              *[ev("a", "token", text=f"u{i}") for i in range(5)],
              ev("a", "completed", outputs={"output": {"response": "done"}}, duration_ms=3.0)]
    builder, replayed, all_ops = MessageBuilder(NAMES), [], []
    for index, event in enumerate(events):
        builder.consume(event)
        if index % 3 == 0:
            all_ops.append(builder.flush())
            apply_patch(replayed, all_ops[-1])
    builder.finish("completed")
    apply_patch(replayed, builder.flush())
    assert replayed == builder.snapshot()
    assert builder.flush() == [] and not builder.dirty
    # Text already sent is never sent again: a batch of tokens into a known block is one small append.
    builder2 = build(ev("a", "started", name="Researcher"), ev("a", "token", text="Hello"))
    builder2.flush()
    builder2.consume(ev("a", "token", text=" wor"))
    builder2.consume(ev("a", "token", text="ld"))
    assert builder2.flush() == [{"op": "append", "path": [1], "text": " world"}]


class CountedText(str):
    """A token that counts how often text is concatenated onto it (`text_so_far + token` calls __radd__ first)."""

    concatenations = 0

    def __radd__(self, other: str) -> str:
        CountedText.concatenations += 1
        return str.__add__(other, self)


def test_tokens_cost_constant_time():
    """A token is kept as a part and joined once when someone looks: never `text += token`, which copies the
    whole answer per token. (Its cost per token is the chat benchmark's figure, not a timed test's.)"""
    builder = build(ev("a", "started", name="Researcher"))
    CountedText.concatenations = 0
    for _ in range(10_000):
        builder.consume(ev("a", "token", text=CountedText("word ")))
    assert CountedText.concatenations == 0
    assert len(builder.snapshot()[1]["text"]) == 50_000


def test_summary_is_one_line_of_the_primary_text():
    assert summarize({"output": {"response": "a\nb", "model": "m"}}) == "a b"
    assert summarize({"reject": "no"}) == "reject: no"
    assert summarize({}) == "no output"
    assert len(summarize({"output": "x" * 1000})) == 160


def test_an_execute_graph_step_links_the_run_it_started():
    builder = build(ev("call", "started", name="Call"),
                    ev("call", "progress", message="ran graph g1 (run r1)", child_run_id="r1", graph_id="g1"))
    assert step(builder.snapshot(), "call")["child_run_url"] == "/graph/g1?run=r1"


def test_a_final_value_becomes_the_answer_only_when_no_text_was_streamed():
    builder = build(ev("a", "started", name="Researcher"))
    builder.answer_with({"response": "Paris", "model": "m"}, "a")
    assert [b["text"] for b in builder.snapshot() if b["type"] == "text"] == ["Paris"]
    streamed = build(ev("a", "token", text="Rome"))
    streamed.answer_with({"response": "Paris"}, "a")
    assert [b["text"] for b in streamed.snapshot() if b["type"] == "text"] == ["Rome"]
    assert answer_text({"total": 3}) == '```json\n{\n  "total": 3\n}\n```'


def test_an_answer_is_what_the_last_step_says_not_the_message_it_passed_through():
    """Edit Fields keeps its input's fields by default: the person's `message` rides along beside the answer."""
    assert answer_text({"message": "Hi", "response": "Echo: Hi"}) == "Echo: Hi"
    assert answer_text({"message": "Hi", "text": "Echo: Hi", "usage": {}}) == "Echo: Hi"
    assert answer_text({"message": "Hi"}) == "Hi"
    assert approved_text({"input": {"message": "Hi", "response": "the draft"}}) == "the draft"


def test_a_lone_surrogate_reaches_the_message_escaped_so_the_page_can_carry_it():
    """The page's websocket carries only UTF-8: a "\\ud800" from a payload or a model failed the whole update."""
    builder = build(ev("chat", "started", name="Chat Start"),
                    ev("chat", "completed", outputs={"output": {"message": "cut \ud83d"}}, duration_ms=0.4),
                    ev("a", "started", name="Researcher"), ev("a", "token", text="half \ud83d"),
                    ev("ok", "paused", prompt="Ship \ud800?", options=["approve"], detail={"n": "\udfff"}),
                    ev("b", "error", error="bad \ud800 input"))
    text = json.dumps(builder.snapshot(), ensure_ascii=False)
    assert text.encode("utf-8") and "half \\\\ud83d" in text and "cut \\\\ud83d" in text
    assert "Ship \\\\ud800?" in text and "bad \\\\ud800 input" in text and "\\\\udfff" in text
