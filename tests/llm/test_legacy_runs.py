"""Graphs of the older runtime, migrated, run with their old meaning (real Agno against the fake OpenAI server).

Each test migrates a fixture of tests/fixtures/graphs/legacy/ with bare model names pointed at the fake
server (`provider="openai-compatible"`). With nothing scripted the fake answers "echo: <last user text>",
which shows exactly what each agent was sent.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nodeflow_app.legacy import migrate_graph
from nodes._registry import default_registry
from tests.llm.fake_openai import last_user_text, text, tool_call
from tests.llm.graphs import of, run_graph

LEGACY = Path(__file__).resolve().parents[1] / "fixtures" / "graphs" / "legacy"


def migrated(name: str) -> dict:
    migration = migrate_graph(json.loads((LEGACY / name).read_text()), default_registry(),
                              provider="openai-compatible")
    assert migration.graph is not None, migration.report.text()
    return migration.graph


def sent(fake, prefix: str) -> list[str]:
    """The user texts of the requests that start with `prefix`."""
    return [last_user_text(body) for body in fake.requests if last_user_text(body).startswith(prefix)]


def ran(events: list) -> set[str]:
    return {e.node_id for e in events if e.event_type == "completed"}


#  Start ("Bonjour le monde") --> Translator ("Translate to English: {{PREVIOUS_OUTPUT}}") --> Shouter (empty)
async def test_previous_output_becomes_the_input_and_an_empty_prompt_sends_the_previous_output(fake_llm):
    run, events = await run_graph(migrated("previous_output.json"))
    assert run.status == "completed", run.error
    translator, shouter = fake_llm.requests
    assert last_user_text(translator) == "Translate to English: Bonjour le monde"
    assert "You translate French to English." in translator["messages"][0]["content"]
    assert translator["reasoning_effort"] == "medium"
    # An empty userPrompt: the previous node's output, as it was.
    assert last_user_text(shouter) == "echo: Translate to English: Bonjour le monde"
    assert "Repeat the text in capitals." in shouter["messages"][0]["content"]


async def test_a_run_payload_replaces_the_initial_input(fake_llm):
    run, _ = await run_graph(migrated("previous_output.json"), payload="Salut")
    assert run.status == "completed", run.error
    assert last_user_text(fake_llm.requests[0]) == "Translate to English: Salut"


#  Start --> Triage --> If: 0 contains "urgent" | 1 contains "refund" | 2 equal "billing" | false
#                        |-> Urgent desk   |-> Refund desk   |-> Billing desk   |-> Front desk
@pytest.mark.parametrize(("triage_says", "desk"), [
    ("URGENT refund needed", "urgent"),   # conditions 0 and 1 both match: the first wins
    ("a Refund, please", "refunds"),      # case does not matter
    ("Billing", "billing"),               # equal: the whole text, any case (the old value " billing " is trimmed)
    ("billing issue", "other"),           # equal does not match a longer text -> the false fallback
    ("hello", "other"),                   # nothing matches -> false
])
async def test_conditions_first_match_wins_and_false_is_the_fallback(fake_llm, triage_says, desk):
    fake_llm.script(text(triage_says))
    run, events = await run_graph(migrated("conditions.json"))
    assert run.status == "completed", run.error
    desks = {"urgent", "refunds", "billing", "other"}
    assert ran(events) & desks == {desk}
    assert {e.node_id for e in events if e.event_type == "skipped"} >= desks - {desk}
    [request] = [body for body in fake_llm.requests[1:]]
    assert last_user_text(request).endswith(f": {triage_says}")


#  Start --> If (legacy `condition` "YES"): true --> Yes branch, false --> No branch
@pytest.mark.parametrize(("payload", "branch"), [(None, "yes"), ("No way", "no")])
async def test_the_legacy_true_handle_is_condition_0(fake_llm, payload, branch):
    run, events = await run_graph(migrated("legacy_condition.json"), payload=payload)
    assert run.status == "completed", run.error
    assert ran(events) & {"yes", "no"} == {branch}
    [request] = fake_llm.requests
    expected = "Yes, please" if payload is None else payload
    assert last_user_text(request) == f"The answer was {branch}: {expected}"


#  Start --> Drafter --> input (approval): approve --> Sender, reject --> Rewriter (empty prompt)
@pytest.mark.parametrize(("decision", "branch", "message"), [
    ("approve", "send", "Send this approved reply: echo: Draft a reply: Refund order 42"),
    ("reject", "rewrite", "echo: Draft a reply: Refund order 42"),
])
async def test_approval_pauses_then_follows_the_decision(fake_llm, decision, branch, message):
    run, events = await run_graph(migrated("approval.json"))
    assert run.status == "paused" and run.paused_nodes() == ["check"]
    resumed = [event async for event in run.resume("check", {"decision": decision, "note": "checked"})]
    assert run.status == "completed", run.error
    assert ran(resumed) & {"send", "rewrite"} == {branch}
    assert last_user_text(fake_llm.requests[-1]) == message
    approval = run.outputs_by_name()["Approval"][decision]["approval"]
    assert (approval["decision"], approval["note"]) == (decision, "checked")


#  Start --> Lead      (Researcher ==subagent==> Lead, Checker ==subagent==> Researcher: nested teams)
async def test_sub_agents_become_team_members(fake_llm):
    fake_llm.script(
        tool_call("delegate_task_to_member", {"member_id": "researcher", "task": "Capital of France?"}),
        text("Paris", match=lambda body: last_user_text(body) == "Capital of France?"),
        text("The capital is Paris."),
    )
    run, events = await run_graph(migrated("subagents.json"))
    assert run.status == "completed", run.error
    assert run.outputs_by_name()["Lead"]["output"]["response"] == "The capital is Paris."
    assert of(events, "researcher", "started") == [] and of(events, "checker", "started") == []
    assert {e.data["member"] for e in of(events, "lead", "member_event")} == {"Researcher"}
    lead_first = fake_llm.requests[0]
    assert "Researcher" in lead_first["messages"][0]["content"]
    assert "Checker" in json.dumps(fake_llm.requests[1])  # the Researcher leads its own member


#  Start --> Writer --> Critic
#                   \-> Translator      (both after one node, at the same time)
async def test_two_branches_after_one_node_run_concurrently(fake_llm):
    slow = 0.3
    fake_llm.script(text("a poem"),
                    text(["fine", "."], delay=slow, match=lambda b: last_user_text(b).startswith("Critique")),
                    text(["un", " poème"], delay=slow, match=lambda b: last_user_text(b).startswith("Translate")))
    run, events = await run_graph(migrated("concurrent.json"))
    assert run.status == "completed", run.error
    order = [(e.node_id, e.event_type) for e in events if e.event_type in ("started", "completed")]
    first_done = min(order.index(("left", "completed")), order.index(("right", "completed")))
    # Both branches started before either finished: each waited `slow` for its model while the other ran.
    assert order.index(("left", "started")) < first_done and order.index(("right", "started")) < first_done
    outputs = run.outputs_by_name()
    assert outputs["Critic"]["output"]["response"] == "fine."
    assert outputs["Translator"]["output"]["response"] == "un poème"
    assert sent(fake_llm, "Critique") == ["Critique: a poem"] and sent(fake_llm, "Translate") == ["Translate: a poem"]
