"""nodes/flow/approval: pause for a person's decision, then route on it; run end to end on the real kernel."""

from __future__ import annotations

import re

import pytest

from nodeflow_app.runtime.engine import start_run
from nodeflow_app.runtime.graph import normalize_or_raise
from nodeflow_app.runtime.plan import compile_plan
from nodeflow_app.runtime.run import Run, RunError, RunHooks
from nodes._registry import BUILTIN_ROOT, Registry, load_folder
from nodes.flow.approval.definition import definition
from tests.runtime import toys

FOLDER = BUILTIN_ROOT / "flow" / "approval"
ORDER = {"amount": 120, "payee": "ACME"}


def registry() -> Registry:
    reg = toys.registry()
    reg.add(load_folder(FOLDER))
    return reg


def approval_graph(edges: list[str], *extra_nodes: tuple, **approval_data) -> dict:
    """START -> AP (a real approval node) plus the toy nodes and edges of a test."""
    graph = toys.graph([("start", "start"), ("ap", "pass", approval_data), *extra_nodes],
                       ["start.out -> ap.input", *edges])
    graph["nodes"][1]["type"] = "approval"
    return graph


async def drain(events) -> list:
    return [event async for event in events]


def of(events: list, node_id: str, event_type: str) -> list[dict]:
    return [e.data for e in events if e.node_id == node_id and e.event_type == event_type]


#   START ──> AP ─approve─> YES
#                └─reject──> NO
BRANCHES = (["ap.approve -> yes.in", "ap.reject -> no.in"], ("yes", "pass"), ("no", "pass"))


async def test_pauses_with_the_prompt_the_options_and_the_input():
    run = start_run(approval_graph(*BRANCHES), registry(), payload=ORDER)
    events = await drain(run.events())
    assert run.status == "paused" and run.paused_nodes() == ["ap"]
    assert of(events, "ap", "paused") == [{"prompt": "Approve this step?", "options": ["approve", "reject"],
                                           "detail": {"input": ORDER}}]
    assert run.records["yes"].status == run.records["no"].status == "pending"


@pytest.mark.parametrize("decision, taken, skipped", [("approve", "yes", "no"), ("reject", "no", "yes")])
async def test_resume_routes_the_input_with_the_decision_attached(decision, taken, skipped):
    run = start_run(approval_graph(*BRANCHES), registry(), payload=ORDER)
    await drain(run.events())
    answer = {"decision": decision, "note": "checked", "by": "ada", "at": "2025-01-02T03:04:05Z"}
    events = await drain(run.resume("ap", answer))
    assert run.status == "completed"
    assert of(events, "ap", "resumed") == [{"payload": answer}]
    assert run.records["ap"].outputs == {decision: {**ORDER, "approval": answer}}
    assert run.records[taken].outputs == {"out": {**ORDER, "approval": answer}}
    assert run.records[skipped].status == "skipped"
    # The skipped branch says the approval decided it: nothing came out of its port, the other one was taken.
    labels = {"approve": "Approve", "reject": "Reject"}
    other = "reject" if decision == "approve" else "approve"
    assert of(events, skipped, "skipped") == [
        {"reason": f"'AP' took {labels[decision]}, not {labels[other]}"}]


async def test_optional_keys_default_to_none_and_a_non_object_input_is_wrapped():
    run = start_run(approval_graph(*BRANCHES), registry(), payload="deploy v2")
    await drain(run.events())
    await drain(run.resume("ap", {"decision": "approve"}))
    assert run.records["yes"].outputs == {"out": {"input": "deploy v2", "approval": {
        "decision": "approve", "note": None, "by": None, "at": None}}}


#   START ──> AP ─approve─> YES      (prompt is an expression; show_input off)
async def test_prompt_expression_and_hidden_input():
    graph = approval_graph(["ap.approve -> yes.in"], ("yes", "pass"),
                           prompt="Pay {{ $json.amount }} EUR to {{ $json.payee }}?", show_input=False)
    run = start_run(graph, registry(), payload=ORDER)
    events = await drain(run.events())
    assert of(events, "ap", "paused") == [{"prompt": "Pay 120 EUR to ACME?", "options": ["approve", "reject"],
                                           "detail": {}}]


@pytest.mark.parametrize("answer, message", [
    ("approve", r"approval answer must be an object \{\"decision\": \"approve\" \| \"reject\".*got str 'approve'"),
    ({"decision": "maybe"}, r"needs decision 'approve' or 'reject', got 'maybe' \(received \{'decision': 'maybe'\}\)"),
    ({"note": "ok"}, r"needs decision 'approve' or 'reject', got None"),
    ({"decision": "approve", "reason": "x"}, r"unknown keys \['reason'\] \(received .*'reason': 'x'.*\); expected"),
    ({"decision": "reject", "note": 3}, r"approval note must be text, got int 3"),
])
async def test_a_bad_answer_is_refused_saying_what_was_received_and_expected_and_the_run_stays_paused(
        answer, message):
    run = start_run(approval_graph(*BRANCHES), registry(), payload=ORDER)
    await drain(run.events())
    with pytest.raises(RunError, match="node 'AP' does not take this answer: ") as refused:
        run.answer("ap", answer)
    assert re.search(message, str(refused.value)), refused.value
    assert run.status == "paused" and run.paused_nodes() == ["ap"]
    events = await drain(run.resume("ap", {"decision": "approve"}))
    assert run.status == "completed" and of(events, "ap", "completed")


#   START ──> AP ─approve─> YES
#     └─────> SLOW ──> AFTER
async def test_other_branches_keep_running_while_paused():
    graph = approval_graph(["ap.approve -> yes.in", "start.out -> slow.in", "slow.out -> after.in"],
                           ("yes", "pass"), ("slow", "slow", {"delay": 0.05}), ("after", "pass"))
    run = start_run(graph, registry(), payload=ORDER)
    events = await drain(run.events())
    kinds = [(e.node_id, e.event_type) for e in events]
    assert kinds.index(("ap", "paused")) < kinds.index(("slow", "completed")) < kinds.index(("after", "completed"))
    assert run.status == "paused"
    assert run.records["after"].outputs == {"out": ORDER}
    assert run.records["yes"].status == "pending"
    await drain(run.resume("ap", {"decision": "approve"}))
    assert run.status == "completed" and run.records["yes"].status == "completed"


#   START ──> AP ─approve─> YES      (the process restarts while AP waits)
async def test_a_paused_approval_survives_a_restart():
    reg, saved = registry(), {}
    graph = approval_graph(*BRANCHES)
    hooks = RunHooks(on_node=lambda run, node_id, record: saved.__setitem__(node_id, record))
    first = start_run(graph, reg, payload=ORDER, hooks=hooks)
    await drain(first.events())
    plan = compile_plan(normalize_or_raise(graph, reg), reg)
    again = Run.restore(plan, "start", ORDER, dict(saved), run_id=first.run_id, status="paused")
    await drain(again.resume("ap", {"decision": "reject"}))
    assert again.status == "completed"
    assert again.records["no"].outputs == {"out": {**ORDER, "approval": {
        "decision": "reject", "note": None, "by": None, "at": None}}}


def test_never_reuses_a_cached_answer():
    assert definition.side_effects is True
