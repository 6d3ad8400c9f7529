"""Tools that need confirmation pause the Agent node through the kernel's pause; resume approves or rejects.

    Chat Start --> Agent      (Guarded Tools ==tools==> Agent: delete_file needs confirmation)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from nodes._registry import RegisteredNode, Registry, default_registry
from nodeflow_app.contract import CONVERSATION, NodeDefinition, Socket
from nodes.ai.agent import build, confirmation
from tests.llm.fake_openai import text, tool_call
from tests.llm.graphs import MODEL, graph, of

from nodeflow_app.runtime.engine import start_run
from nodeflow_app.runtime.run import Run, RunError

deleted: list[str] = []


def guarded_tools() -> list:
    from agno.tools import tool

    @tool(requires_confirmation=True)
    def delete_file(path: str) -> str:
        """Delete the file at `path`."""
        deleted.append(path)
        return f"deleted {path}"

    return [delete_file]


class GuardedToolsExecutor:
    """A test-only tool provider whose one tool asks for confirmation."""

    node_type = "test-guarded-tools"

    async def materialize(self, data, output_handle, ctx):
        return guarded_tools()


def registry_with_guarded_tools() -> Registry:
    definition = NodeDefinition(id="test-guarded-tools", name="Guarded Tools", description="delete_file",
                                category="tools", outputs=(Socket(id="tools", label="Tools", type="tools",
                                                                  channel="link", side="right"),))
    registry = Registry(nodes=dict(default_registry().nodes))
    registry.add(RegisteredNode(definition, GuardedToolsExecutor(), Path(__file__).parent))
    return registry


@pytest.fixture(autouse=True)
def _clean():
    deleted.clear()
    yield
    deleted.clear()


def start(**agent_data):
    raw = graph([("chat", "chat-start", {}), ("a", "agent", {"model": MODEL, **agent_data}),
                 ("kit", "test-guarded-tools", {})],
                ["chat.output -> a.input", "kit.tools => a.tools"])
    return start_run(raw, registry_with_guarded_tools(), payload="Delete /tmp/old.log", context={CONVERSATION: "chat-1"})


async def paused_run(fake_llm, **agent_data):
    fake_llm.script(tool_call("delete_file", {"path": "/tmp/old.log"}))
    run = start(**agent_data)
    events = [event async for event in run.events()]
    return run, events


async def test_a_tool_that_needs_confirmation_pauses_the_run(fake_llm):
    run, events = await paused_run(fake_llm)
    assert run.status == "paused" and run.paused_nodes() == ["a"]
    [paused] = of(events, "a", "paused")
    assert paused.data["prompt"] == 'Allow tool delete_file with args {"path": "/tmp/old.log"}?'
    assert paused.data["options"] == ["approve", "reject"]
    detail = paused.data["detail"]
    assert (detail["tool"], detail["args"]) == ("delete_file", {"path": "/tmp/old.log"})
    assert detail["agno_run_id"]
    assert deleted == [] and of(events, "a", "tool_call_completed") == []
    assert "nodeflow_run_id" not in str(fake_llm.requests[0]), "the run id stays out of the prompt"


@pytest.mark.parametrize("history", [True, False], ids=["chat-session", "run-session"])
async def test_approve_runs_the_tool_and_the_answer_arrives(fake_llm, history):
    run, _ = await paused_run(fake_llm, history=history)
    fake_llm.script(text(["Deleted", " it"]))
    events = [event async for event in run.resume("a", {"decision": "approve"})]
    assert run.status == "completed", run.error
    assert deleted == ["/tmp/old.log"]
    [completed] = of(events, "a", "tool_call_completed")
    assert (completed.data["name"], completed.data["result"]) == ("delete_file", "deleted /tmp/old.log")
    assert [e.data["text"] for e in of(events, "a", "token")] == ["Deleted", " it"]
    assert run.outputs_by_name()["A"]["output"]["response"] == "Deleted it"
    tool_message = fake_llm.requests[-1]["messages"][-1]
    assert (tool_message["role"], tool_message["content"]) == ("tool", "deleted /tmp/old.log")


async def test_reject_does_not_run_the_tool_and_the_model_hears_why(fake_llm):
    run, _ = await paused_run(fake_llm)
    fake_llm.script(text("Understood, I kept the file."))
    events = [event async for event in run.resume("a", {"decision": "reject", "note": "keep the logs"})]
    assert run.status == "completed", run.error
    assert deleted == []
    assert run.outputs_by_name()["A"]["output"]["response"] == "Understood, I kept the file."
    tool_message = fake_llm.requests[-1]["messages"][-1]
    assert tool_message["role"] == "tool" and "keep the logs" in tool_message["content"]
    assert of(events, "a", "error") == []


@pytest.mark.parametrize("history", [True, False], ids=["chat-session", "run-session"])
async def test_a_restarted_app_continues_the_paused_agno_run_from_the_session_db(fake_llm, history):
    """A restart leaves no agent object and no link cache: the kernel restores the run from its records."""
    run, _ = await paused_run(fake_llm, history=history)
    restored = Run.restore(run.plan, run.trigger_id, run.payload, run.records, run_id=run.run_id,
                           status=run.status, context=run.context)
    fake_llm.script(text("Done"))
    [event async for event in restored.resume("a", {"decision": "approve"})]
    assert restored.status == "completed", restored.error
    assert deleted == ["/tmp/old.log"]
    assert restored.outputs_by_name()["A"]["output"]["response"] == "Done"


async def test_an_agent_without_a_session_db_keeps_its_paused_run_in_memory(fake_llm, monkeypatch):
    monkeypatch.setattr(build, "needs_confirmation", lambda tools: False)  # so no db is attached
    run, _ = await paused_run(fake_llm, history=False)
    assert list(confirmation._paused_in_memory) == [(run.run_id, "a")]
    fake_llm.script(text("Done"))
    [event async for event in run.resume("a", {"decision": "approve"})]
    assert run.status == "completed", run.error
    assert deleted == ["/tmp/old.log"] and confirmation._paused_in_memory == {}


async def test_a_malformed_answer_is_refused_clearly_and_the_run_stays_paused(fake_llm):
    run, _ = await paused_run(fake_llm)
    with pytest.raises(RunError) as refused:
        run.answer("a", {"decision": "maybe"})
    assert str(refused.value).startswith("node 'A' does not take this answer: the answer to a tool confirmation "
                                         'must be {"decision": "approve" | "reject", "note"?: text}')
    assert run.status == "paused" and run.paused_nodes() == ["a"]
    assert deleted == []
