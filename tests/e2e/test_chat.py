"""Chatting with a graph in Chromium, against the fake OpenAI-compatible server (real Agno, real HTTP).

    Chat Start --> Agent --> Approval --approve--> LLM Completion
                     ^               \\--reject---> Prompt Template "Rejected (note)"
          Toolset (calculator) ==tools==

The thread component keeps `window.__nodeflowChat` ({messageId, seq, ...}); tests wait on the DOM.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from nodeflow_app.store.graphs import GraphStore
from nodeflow_app.templates import TEMPLATES_DIR, read_template
from tests.llm.fake_openai import http_error, text, tool_call
from tests.llm.graphs import MODEL, graph, refund_desk

from .server import ROOT, Server

REFUND_DESK = refund_desk()
LAYOUT = {"chat": (0, 80), "calc": (0, 300), "agent": (300, 80), "ok": (620, 80), "llm": (940, 0), "no": (940, 220)}
ECHO = graph([("chat", "chat-start", {}), ("llm", "llm-completion", {"model": MODEL})], ["chat.output -> llm.input"])


@pytest.fixture
def store(nodeflow_server: Server):
    graphs = GraphStore(f"sqlite:///{nodeflow_server.data_dir / 'nodeflow.db'}")
    yield graphs
    graphs.engine.dispose()


def laid_out(raw: dict, layout: dict) -> dict:
    for node in raw["nodes"]:
        x, y = layout.get(node["id"], (0, 0))
        node["position"] = {"x": x, "y": y}
    return raw


def open_chat_panel(page, server: Server, graph_id: str) -> None:
    page.goto(f"{server.url}/graph/{graph_id}")
    page.wait_for_function("window.__nodeflowCanvas && window.__nodeflowCanvas.rev() > 0")
    page.get_by_test_id("toggle-chat").click()
    expect(page.get_by_test_id("chat-panel")).to_be_visible()


def send(page, message: str) -> None:
    page.get_by_test_id("chat-input").fill(message)
    page.get_by_test_id("chat-input").press("Enter")


def messages(page, role: str | None = None):
    selector = '[data-testid="chat-message"]' + (f'[data-role="{role}"]' if role else "")
    return page.locator(selector)


def last_answer(page):
    return messages(page, "assistant").last


def expect_answer_status(page, status: str, timeout: float = 20_000) -> None:
    expect(last_answer(page)).to_have_attribute("data-status", status, timeout=timeout)


def test_a_newcomer_chats_sees_tokens_tools_steps_and_approval_then_finds_it_after_reload(
        page, nodeflow_server, store, fake_llm):
    stored = store.create("Refund desk", laid_out(REFUND_DESK, LAYOUT))
    fake_llm.script(tool_call("calculator", {"expression": "6*7"}),
                    text([f"tok{i} " for i in range(40)], delay=0.05))
    open_chat_panel(page, nodeflow_server, stored.id)
    send(page, "What is 6*7?")

    # An Approval follows the agent: its text streams into its step's row as a draft, never into the answer.
    streaming = page.locator('[data-testid="chat-message"][data-streaming="true"]')
    expect(streaming.get_by_test_id("step-AGENT")).to_contain_text("tok3", timeout=15_000)
    expect(streaming.get_by_test_id("block-text")).to_have_count(0)
    # Meanwhile the canvas shows the run: the agent is running, the chat start done.
    expect(page.get_by_test_id("status-AGENT")).to_have_text("running")
    expect(page.get_by_test_id("status-CHAT")).to_have_text("completed")

    expect_answer_status(page, "paused")
    answer = last_answer(page)
    expect(answer.get_by_test_id("block-text")).to_have_count(0)
    expect(answer.get_by_test_id("approval-text")).to_contain_text("tok39")  # the draft, as text on the card
    tool = answer.get_by_test_id("block-tool")
    expect(tool).to_contain_text("calculator")
    expect(tool).to_contain_text("42")
    for name, status in (("CHAT", "completed"), ("AGENT", "completed"), ("OK", "paused")):
        expect(answer.get_by_test_id(f"step-{name}")).to_have_attribute("data-status", status)
    expect(page.get_by_test_id("status-OK")).to_have_text("paused")

    card = answer.get_by_test_id("approval-card")
    expect(card).to_contain_text("Send 'tok0")
    fake_llm.script(text(["All", " done", " here"], delay=0.02))
    card.get_by_test_id("approval-note").fill("looks right")
    card.get_by_test_id("approval-approve").click()
    expect_answer_status(page, "complete")
    expect(answer.get_by_test_id("step-LLM")).to_have_attribute("data-status", "completed")
    expect(answer.get_by_test_id("step-NO")).to_have_attribute("data-status", "skipped")
    expect(answer.get_by_test_id("block-text")).to_have_text("All done here")  # the LLM after the approval
    expect(card).to_have_attribute("data-decision", "approve")
    expect(card).to_contain_text("Admin")  # the signed-in owner decided
    expect(card).to_contain_text("looks right")
    expect(page.get_by_test_id("status-LLM")).to_have_text("completed")
    page.evaluate("window.__nodeflowCanvas.fitView()")
    page.wait_for_timeout(400)  # the fit animation
    page.screenshot(path=str(ROOT / "docs" / "screenshot-chat.png"))  # the README's picture of a chat

    page.reload()
    page.wait_for_function("window.__nodeflowCanvas && window.__nodeflowCanvas.rev() > 0")
    if not page.get_by_test_id("chat-panel").is_visible():
        page.get_by_test_id("toggle-chat").click()
    expect(messages(page)).to_have_count(2)
    answer = last_answer(page)
    expect(messages(page, "user")).to_contain_text("What is 6*7?")
    expect(answer).to_have_attribute("data-status", "complete")
    expect(answer.get_by_test_id("block-tool")).to_contain_text("calculator")
    expect(answer.get_by_test_id("approval-card")).to_have_attribute("data-decision", "approve")
    expect(answer).to_contain_text("All done here")
    expect(answer.get_by_test_id("step-LLM")).to_have_attribute("data-status", "completed")
    expect(page.get_by_test_id("chat-picker")).to_contain_text("What is 6*7?")


def test_reject_takes_the_other_branch_and_a_paused_answer_survives_a_reload(page, nodeflow_server, store, fake_llm):
    stored = store.create("Refund desk", laid_out(REFUND_DESK, LAYOUT))
    fake_llm.script(tool_call("calculator", {"expression": "6*7"}), text(["Refund", " 42"]))
    open_chat_panel(page, nodeflow_server, stored.id)
    send(page, "Refund me")
    expect_answer_status(page, "paused")
    page.reload()  # the paused run is in the database: the card still answers
    page.wait_for_function("window.__nodeflowCanvas && window.__nodeflowCanvas.rev() > 0")
    if not page.get_by_test_id("chat-panel").is_visible():
        page.get_by_test_id("toggle-chat").click()
    card = last_answer(page).get_by_test_id("approval-card")
    # Before the decision the title asks about the node; the whole input is there on demand, wrapped in the card.
    expect(card.get_by_test_id("approval-title")).to_have_text("Approve “OK”?")
    detail = card.locator(".nfc-approval-detail")
    expect(detail).to_be_hidden()
    card.get_by_text("Whole input").click()
    expect(detail).to_contain_text('"tokens_used"')
    assert detail.evaluate("e => getComputedStyle(e).whiteSpace") == "pre-wrap"
    assert detail.evaluate("e => e.scrollWidth <= e.clientWidth")
    card.get_by_test_id("approval-note").fill("too much")
    card.get_by_test_id("approval-reject").click()
    expect_answer_status(page, "complete")
    answer = last_answer(page)
    expect(answer.get_by_test_id("step-NO")).to_have_attribute("data-status", "completed")
    expect(answer.get_by_test_id("step-NO")).to_contain_text("Rejected (too much)")
    expect(answer.get_by_test_id("block-text")).to_have_text("Rejected (too much)")  # the branch taken answers
    expect(answer.get_by_test_id("step-LLM")).to_have_attribute("data-status", "skipped")
    # The skipped step says the approval decided it (the kernel names the node and the port it took).
    expect(answer.get_by_test_id("step-LLM")).to_contain_text("'OK' took Reject, not Approve")
    expect(card).to_have_attribute("data-decision", "reject")
    expect(card.get_by_test_id("approval-title")).to_have_text("“OK” was rejected")
    assert len(fake_llm.requests) == 2  # the agent's two calls; the LLM Completion never ran


def approval_template() -> dict:
    """Chat Start --> Draft (agent) --> Approve the draft --approve--> Send (the draft)
                                                         \\--reject---> Hold ("The draft was rejected (note); ...")"""
    raw = read_template(TEMPLATES_DIR / "approval.json").new_graph()
    [draft] = [node for node in raw["nodes"] if node["id"] == "draft"]
    draft["data"]["model"] = MODEL
    return raw


DRAFT = ["Dear", " customer,"] + [f" w{i}" for i in range(40)]  # ~2 s: the chat is seen while it streams


@pytest.mark.parametrize("decision, note, answer", [
    ("reject", "too generous", "The draft was rejected (too generous); nothing was sent."),
    ("approve", "ok to send", "".join(DRAFT))])
def test_the_approval_template_answers_with_send_or_hold_never_with_the_draft(
        page, nodeflow_server, store, fake_llm, decision, note, answer):
    stored = store.create("Approval before replying", approval_template())
    fake_llm.script(text(DRAFT, delay=0.05))
    open_chat_panel(page, nodeflow_server, stored.id)
    send(page, "Can I get a refund?")

    streaming = page.locator('[data-testid="chat-message"][data-streaming="true"]')
    step = streaming.get_by_test_id("step-Draft")
    expect(step).to_contain_text("Dear customer", timeout=15_000)  # the draft streams into its step's row
    expect(step).to_have_attribute("data-status", "running")
    expect(streaming.get_by_test_id("block-text")).to_have_count(0)  # not into the answer
    expect_answer_status(page, "paused")
    message = last_answer(page)
    expect(message.get_by_test_id("block-text")).to_have_count(0)
    card = message.get_by_test_id("approval-card")
    expect(card.get_by_test_id("approval-text")).to_have_text("".join(DRAFT))
    expect(card.locator(".nfc-approval-detail")).to_be_hidden()  # not the raw {response, model, tokens_used}
    expect(message.get_by_test_id("step-text")).to_have_count(0)  # the step is collapsed...
    message.get_by_test_id("step-Draft").get_by_role("button").first.click()
    expect(message.get_by_test_id("step-text")).to_have_text("".join(DRAFT))  # ...and opens

    card.get_by_test_id("approval-note").fill(note)
    card.get_by_test_id(f"approval-{decision}").click()
    expect_answer_status(page, "complete")
    expect(message.get_by_test_id("block-text")).to_have_text(answer)
    expect(message.get_by_test_id("continue")).to_have_count(0)
    page.reload()  # the stored answer is the same
    page.wait_for_function("window.__nodeflowCanvas && window.__nodeflowCanvas.rev() > 0")
    if not page.get_by_test_id("chat-panel").is_visible():
        page.get_by_test_id("toggle-chat").click()
    expect(last_answer(page).get_by_test_id("block-text")).to_have_text(answer)


def test_stop_keeps_the_partial_answer_and_retry_makes_a_sibling_the_arrows_switch(
        page, nodeflow_server, store, fake_llm):
    stored = store.create("Echo", ECHO)
    fake_llm.script(text([f"w{i} " for i in range(300)], delay=0.03))
    open_chat_panel(page, nodeflow_server, stored.id)
    send(page, "Talk a lot")
    streaming = page.locator('[data-testid="chat-message"][data-streaming="true"]')
    expect(streaming.get_by_test_id("block-text")).to_contain_text("w5 ", timeout=15_000)
    page.get_by_test_id("chat-stop").click()
    expect_answer_status(page, "stopped")
    stopped_text = last_answer(page).get_by_test_id("block-text").inner_text()
    assert stopped_text.startswith("w0") and "w299" not in stopped_text
    assert fake_llm.wait_for(lambda: fake_llm.streams and fake_llm.streams[-1].abandoned)
    expect(page.get_by_test_id("chat-send")).to_be_visible()

    fake_llm.reset()
    fake_llm.script(text(["A", " short", " one"]))
    last_answer(page).get_by_test_id("retry").click()
    expect(last_answer(page)).to_contain_text("A short one", timeout=15_000)
    expect_answer_status(page, "complete")
    expect(messages(page)).to_have_count(2)
    expect(last_answer(page).get_by_test_id("branch-label")).to_have_text("2/2")
    last_answer(page).get_by_test_id("branch-prev").click()
    expect(last_answer(page).get_by_test_id("branch-label")).to_have_text("1/2")
    expect(last_answer(page)).to_have_attribute("data-status", "stopped")
    expect(last_answer(page).get_by_test_id("block-text")).to_contain_text("w0")
    last_answer(page).get_by_test_id("branch-next").click()
    expect(last_answer(page)).to_contain_text("A short one")
    expect(last_answer(page).get_by_test_id("continue")).to_have_count(0)  # a finished answer needs no Continue

    # A stopped answer offers Continue, which says what it does and sends "Continue" after it.
    last_answer(page).get_by_test_id("branch-prev").click()
    go_on = last_answer(page).get_by_test_id("continue")
    expect(go_on).to_have_attribute("title", re.compile("stopped.*Continue"))
    go_on.click()
    expect(messages(page)).to_have_count(4)
    expect(messages(page, "user").last).to_contain_text("Continue")
    expect_answer_status(page, "complete")
    expect(last_answer(page)).to_contain_text("Continue")  # the fake echoes it


def test_edit_makes_a_new_user_message_beside_the_old_one(page, nodeflow_server, store, fake_llm):
    stored = store.create("Echo", ECHO)
    open_chat_panel(page, nodeflow_server, stored.id)
    send(page, "first question")  # nothing scripted: the fake echoes the question
    expect_answer_status(page, "complete")
    expect(last_answer(page)).to_contain_text("first question")
    user = messages(page, "user").last
    user.hover()
    user.get_by_test_id("edit").click()
    user.get_by_test_id("edit-text").fill("second question")
    user.get_by_test_id("edit-send").click()
    expect(last_answer(page)).to_contain_text("second question", timeout=15_000)
    expect(messages(page)).to_have_count(2)
    expect(messages(page, "user").last.get_by_test_id("branch-label")).to_have_text("2/2")
    messages(page, "user").last.get_by_test_id("branch-prev").click()
    expect(messages(page, "user").last).to_contain_text("first question")
    expect(last_answer(page)).to_contain_text("first question")


def test_full_page_chat_lists_creates_renames_and_deletes_chats(page, nodeflow_server, store, fake_llm):
    stored = store.create("Echo", ECHO)
    page.goto(f"{nodeflow_server.url}/graph/{stored.id}/chat")
    expect(page.get_by_test_id("chat-page")).to_be_visible()
    expect(page.get_by_test_id("chat-empty")).to_be_visible()
    send(page, "hello there")
    expect_answer_status(page, "complete")
    items = page.get_by_test_id("chat-list-item")
    expect(items).to_have_count(1)
    expect(items.first).to_contain_text("hello there")

    page.get_by_test_id("chat-new").click()
    expect(items).to_have_count(2)
    expect(page.get_by_test_id("chat-empty")).to_be_visible()
    page.get_by_test_id("chat-rename").click()
    page.get_by_test_id("chat-rename-input").fill("Second thoughts")
    page.get_by_test_id("chat-rename-confirm").click()
    expect(items.filter(has_text="Second thoughts")).to_have_count(1)

    items.filter(has_text="hello there").click()
    expect(messages(page)).to_have_count(2)
    page.get_by_test_id("chat-delete").click()
    page.get_by_test_id("chat-delete-confirm").click()
    expect(items).to_have_count(1)
    expect(items.first).to_contain_text("Second thoughts")
    page.reload()
    expect(page.get_by_test_id("chat-list-item")).to_have_count(1)
    assert re.search(r"/chat$", page.url)


def test_a_failed_run_names_the_node_and_why_and_retry_answers_again(page, nodeflow_server, store, fake_llm):
    stored = store.create("Echo", ECHO)
    fake_llm.script(http_error(500, "the model is down"))
    open_chat_panel(page, nodeflow_server, stored.id)
    page.get_by_test_id("toggle-runs").click()
    runs = page.get_by_test_id("run-row")
    expect(runs).to_have_count(0)
    send(page, "are you there?")
    expect_answer_status(page, "failed")
    expect(runs).to_have_count(1)  # the chat's run joins the open run history
    error = last_answer(page).get_by_test_id("block-error")
    expect(error).to_contain_text("LLM")
    expect(error).to_contain_text("500")
    expect(last_answer(page).get_by_test_id("step-LLM")).to_have_attribute("data-status", "failed")
    expect(page.get_by_test_id("status-LLM")).to_have_text("failed")
    expect(page.get_by_test_id("error-LLM")).to_contain_text("500")  # why, on the canvas node too
    last_answer(page).get_by_test_id("retry").click()
    expect(last_answer(page)).to_contain_text("are you there?", timeout=15_000)  # the fake echoes now
    expect_answer_status(page, "complete")
    expect(page.get_by_test_id("error-LLM")).to_have_count(0)  # a new run forgets the last one's errors
    expect(runs).to_have_count(2)


def test_markdown_and_code_render_while_streaming_and_reasoning_stays_collapsed(page, nodeflow_server, store, fake_llm):
    stored = store.create("Echo", ECHO)
    answer = ["# Plan", "\n\n", "Use **this**:", "\n\n", "```python\n", "total = 6 * 7\n", "```", "\n\n"]
    fake_llm.script(text(answer + [f"more{i} " for i in range(60)], delay=0.04, reasoning=["Think", " hard"]))
    open_chat_panel(page, nodeflow_server, stored.id)
    send(page, "show me code")
    streaming = page.locator('[data-testid="chat-message"][data-streaming="true"]')
    expect(streaming.locator("pre code")).to_contain_text("total = 6 * 7", timeout=15_000)
    expect(streaming.locator("h1")).to_have_text("Plan")
    expect(streaming.locator("strong")).to_have_text("this")
    expect_answer_status(page, "complete")
    reasoning = last_answer(page).get_by_test_id("block-reasoning")
    expect(reasoning).to_have_count(1)
    assert reasoning.evaluate("e => (e.tagName === 'DETAILS' ? e : e.querySelector('details')).open") is False


def paused_reminder(page, server: Server, store, amount: float, unit: str,
                    done: tuple[str, dict] = ("prompt-template", {"template": "Time is up"})):
    """Chat Start --> Wait (`amount` `unit`) --> `done` (a node type and its data; default: the text "Time is up"),
    asked once: the answer's card, paused at the Wait."""
    reminder = graph([("chat", "chat-start", {}), ("wait", "wait", {"amount": amount, "unit": unit}),
                      ("done", *done)],
                     ["chat.output -> wait.input", "wait.output -> done.input"])
    stored = store.create("Reminder", laid_out(reminder, {"chat": (0, 0), "wait": (300, 0), "done": (600, 0)}))
    open_chat_panel(page, server, stored.id)
    send(page, "remind me")
    expect_answer_status(page, "paused")
    return last_answer(page).get_by_test_id("approval-card")


def test_a_long_wait_says_until_when_and_resume_now_goes_on(page, nodeflow_server, store, fake_llm):
    """A Wait over a minute pauses on record (the server's timer would resume it when due: tests/runs/test_timers.py)."""
    card = paused_reminder(page, nodeflow_server, store, 2, "minutes")
    expect(card.locator(".nfc-approval-prompt")).to_have_text(re.compile(r"^Waiting 2 minutes, until \S+ \S+ UTC$"))
    card.get_by_test_id("approval-resume now").click()
    expect_answer_status(page, "complete")
    expect(last_answer(page).get_by_test_id("block-text")).to_have_text("Time is up")
    expect(card).to_have_attribute("data-decision", "resume now")
    assert fake_llm.requests == []


def test_a_long_wait_goes_on_by_itself_and_the_open_chat_follows_the_answer(page, nodeflow_server, store, fake_llm):
    """The shortest Wait that pauses on record (61 s): the server's timer resumes it, and the tab left open follows
    the answer as it streams (from its saves), then shows it whole, without a reload."""
    fake_llm.script(text([f"t{i} " for i in range(50)], delay=0.1))  # 5 s of streaming after the Wait
    card = paused_reminder(page, nodeflow_server, store, 61, "seconds", ("llm-completion", {"model": MODEL}))
    expect(card.get_by_test_id("approval-title")).to_have_text("“WAIT” waits")
    expect_answer_status(page, "streaming", timeout=90_000)
    expect(last_answer(page).get_by_test_id("block-text")).to_contain_text("t1 ")
    assert "t49" not in last_answer(page).inner_text()  # seen while it streams, not only at its end
    expect(page.get_by_test_id("status-DONE")).to_have_text("running")  # the canvas follows too
    expect(page.get_by_test_id("status-WAIT")).to_have_text("completed")
    expect_answer_status(page, "complete", timeout=20_000)
    expect(last_answer(page).get_by_test_id("block-text")).to_have_text(" ".join(f"t{i}" for i in range(50)) + " ")
    card = last_answer(page).get_by_test_id("approval-card")
    expect(card).to_have_attribute("data-decision", "resume now")
    expect(card.get_by_test_id("approval-title")).to_have_text("“WAIT” went on")
    expect(card).to_contain_text("Resume now by timer")
