"""The run panel's display strings."""

import json

from nodeflow_app.chat.adapter import approved_text
from nodeflow_app.runs.view import (
    approval_cards, ago, canvas_steps, duration_text, node_rows, pretty, result_row, run_row,
)


def test_durations_and_times_read_like_a_person_would_say_them():
    assert [duration_text(v) for v in (None, 0.2, 12.4, 1430, 125_000)] == ["—", "<1 ms", "12 ms", "1.4 s", "2 min 5 s"]
    assert [ago(1000 - s, 1000) for s in (3, 42, 300, 7200)] == ["just now", "42 s ago", "5 min ago", "2 h ago"]


def test_rows_of_a_run_and_its_nodes():
    run = {"id": "r1", "trigger_name": "Manual", "status": "completed", "duration_ms": 12.0, "graph_version": 3,
           "started_at": 995.0, "started_by": "test", "error": None,
           "nodes": [{"node_id": "a", "node_name": "A", "node_type": "edit-fields", "status": "completed",
                      "duration_ms": 0.0, "cached": True, "inputs": {"input": 1}, "outputs": {"output": 2, "x": None},
                      "error": None}]}
    assert run_row(run, 1000.0) == {"id": "r1", "trigger": "Manual", "status": "completed", "duration": "12 ms",
                                     "version": "v3", "started": "just now", "source": "test", "error": ""}
    whole = {**run, "trigger_name": None, "trigger_id": "a"}  # get_run names no trigger: its node does
    assert run_row(whole, 1000.0)["trigger"] == "A"
    [row] = node_rows(run, {"a"})
    assert (row["cached"], row["pinned"], row["inputs"]) == ("cached", "pinned", '{\n  "input": 1\n}')
    assert canvas_steps(run) == [{"node_id": "a", "status": "completed", "outputs": {"output": 1}, "error": ""}]
    assert pretty("x" * 30, limit=10).endswith("(22 more characters)")


def test_a_lone_surrogate_in_a_value_is_shown_escaped_so_the_page_can_carry_it():
    """A payload's "\ud800" (a client cut an emoji in half) reached the page's state raw: UTF-8 cannot encode it."""
    shown = pretty({"text": "a\ud800b", "name": "Zoë"})
    assert shown.encode("utf-8") and '"a\\ud800b"' in shown and "Zoë" in shown
    assert json.loads(shown) == {"text": "a\ud800b", "name": "Zoë"}  # pinned back, it is the same value


def test_a_paused_node_becomes_an_approval_card():
    run = {"nodes": [
        {"node_id": "ok", "node_name": "OK?", "status": "paused",
         "wait": {"prompt": "Ship it?", "options": ["approve", "reject"], "detail": {"order": 7}}},
        {"node_id": "a", "node_name": "A", "status": "completed", "wait": None}]}
    assert approval_cards(run) == [{"node_id": "ok", "name": "OK?", "prompt": "Ship it?", "detail": '{\n  "order": 7\n}',
                                    "text": "", "options": ["approve", "reject"]}]


def test_an_approval_card_shows_the_text_to_approve_as_the_chats_card_does():
    """An Approval after an agent: the Runs panel's card shows the draft itself (the chat's card text), not only
    the prompt; the whole input stays in `detail`."""
    draft = {"input": {"response": "Dear customer,\n\nyes, we refund.", "model": "m"}}
    run = {"nodes": [{"node_id": "ok", "node_name": "OK?", "status": "paused",
                      "wait": {"prompt": "Send it?", "options": ["approve", "reject"], "detail": draft}}]}
    [card] = approval_cards(run)
    assert card["text"] == approved_text(draft) == "Dear customer,\n\nyes, we refund."
    assert json.loads(card["detail"]) == draft


def test_the_inspector_shows_a_nodes_output_cut_or_its_whole_error():
    run = {"id": "r1", "started_at": 958.0}
    done = {"status": "completed", "duration_ms": 3.0, "outputs": {"output": {"text": "x" * 40}}, "error": None}
    shown = result_row(done, run, limit=20, now=1000.0)
    assert [shown[k] for k in ("run_id", "status", "started", "duration")] == ["r1", "completed", "42 s ago", "3 ms"]
    assert shown["output"] == '{\n  "text": "xxxxxxx\n… (36 more characters)' and shown["cut"] == "yes"
    assert result_row(done, run, limit=100)["cut"] == ""
    # Several ports: each by name (a lone `output` port shows just its value).
    branch = {**done, "outputs": {"true": {"a": 1}, "false": None}}
    assert json.loads(result_row(branch, run, limit=100)["output"]) == {"true": {"a": 1}}
    error = "node 'Edit Fields' failed: " + "why " * 200  # the card and the canvas cut it at 300 characters
    failed = result_row({"status": "failed", "duration_ms": None, "outputs": None, "error": error}, run, limit=20)
    assert (failed["status"], failed["error"], failed["output"], failed["cut"]) == ("failed", error, "", "")
