"""nodes/ai/agent through the real registry, real Agno and real HTTP against the fake OpenAI server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from nodes._registry import RegisteredNode, Registry, default_registry
from nodeflow_app.contract import NodeDefinition, Socket
from tests.llm.fake_openai import http_error, last_user_text, text, tool_call
from tests.llm.graphs import MODEL, graph, of, run_graph
from nodeflow_app.runtime.engine import start_run


def add_numbers(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b


def divide(a: int, b: int) -> float:
    """Divide a by b."""
    return a / b


class ToolsetExecutor:
    """A test-only tool provider: its `tools` link delivers a list of Python functions."""

    node_type = "test-toolset"

    async def materialize(self, data, output_handle, ctx):
        return [add_numbers, divide]


def registry_with_toolset() -> Registry:
    definition = NodeDefinition(id="test-toolset", name="Test Toolset", description="add_numbers", category="tools",
                                outputs=(Socket(id="tools", label="Tools", type="tools", channel="link",
                                                side="right"),))
    registry = Registry(nodes=dict(default_registry().nodes))
    registry.add(RegisteredNode(definition, ToolsetExecutor(), Path(__file__).parent))
    return registry


def agent(node_id: str, **data) -> tuple[str, str, dict]:
    return (node_id, "agent", {"model": MODEL, **data})


#  Chat Start --> Agent A --> Agent B
async def test_two_agents_chained_on_the_data_spine(fake_llm):
    fake_llm.script(text(["Paris", " is", " lovely"]), text(["Summary", ": ok"]))
    raw = graph([("chat", "chat-start", {}), agent("a", instructions="You are a travel guide."), agent("b")],
                ["chat.output -> a.input", "a.output -> b.input"])
    run, events = await run_graph(raw, payload="Tell me about Paris")
    assert run.status == "completed", run.error
    outputs = run.outputs_by_name()
    assert outputs["A"]["output"]["response"] == "Paris is lovely"
    assert outputs["A"]["output"]["model"] == MODEL and outputs["A"]["output"]["tokens_used"] > 0
    assert outputs["B"]["output"]["response"] == "Summary: ok"
    assert [e.data["text"] for e in of(events, "a", "token")] == ["Paris", " is", " lovely"]
    first, second = fake_llm.requests
    assert last_user_text(first) == "Tell me about Paris"
    assert "You are a travel guide." in first["messages"][0]["content"]
    assert last_user_text(second) == "Paris is lovely"  # B's message is A's response (primary text)


#  Chat Start --> Agent      (Test Toolset ==tools==> Agent)
async def test_agent_calls_a_python_tool(fake_llm):
    fake_llm.script(tool_call("add_numbers", {"a": 2, "b": 40}), text(["It", " is", " 42"]))
    raw = graph([("chat", "chat-start", {}), agent("a", tool_call_limit=3), ("kit", "test-toolset", {})],
                ["chat.output -> a.input", "kit.tools => a.tools"])
    run, events = await run_graph(raw, payload="What is 2 + 40?", registry=registry_with_toolset())
    assert run.status == "completed", run.error
    [started] = of(events, "a", "tool_call_started")
    [completed] = of(events, "a", "tool_call_completed")
    assert (started.data["name"], started.data["arguments"]) == ("add_numbers", {"a": 2, "b": 40})
    assert (completed.data["name"], completed.data["result"], completed.data["error"]) == ("add_numbers", "42", None)
    assert run.outputs_by_name()["A"]["output"]["response"] == "It is 42"
    assert [t["function"]["name"] for t in fake_llm.requests[0]["tools"]] == ["add_numbers", "divide"]
    tool_message = fake_llm.requests[1]["messages"][-1]
    assert (tool_message["role"], tool_message["content"]) == ("tool", "42")


#  Chat Start --> Agent A --> Agent B      (Test Toolset ==tools==> Agent A)
async def test_text_before_and_after_a_tool_call_are_two_paragraphs_of_the_response(fake_llm):
    """Agno joins the texts of the model's turns with nothing between them; the answer (what B is asked,
    what a chat shows) keeps them apart as the chat's step display does."""
    fake_llm.script(tool_call("add_numbers", {"a": 2, "b": 2}, saying=["Let me", " check."]),
                    text(["The answer", " is 4"]), text("Noted"))
    raw = graph([("chat", "chat-start", {}), agent("a"), agent("b"), ("kit", "test-toolset", {})],
                ["chat.output -> a.input", "kit.tools => a.tools", "a.output -> b.input"])
    run, events = await run_graph(raw, payload="What is 2 + 2?", registry=registry_with_toolset())
    assert run.status == "completed", run.error
    assert [e.data["text"] for e in of(events, "a", "token")] == ["Let me", " check.", "The answer", " is 4"]
    assert run.outputs_by_name()["A"]["output"]["response"] == "Let me check.\n\nThe answer is 4"
    assert last_user_text(fake_llm.requests[-1]) == "Let me check.\n\nThe answer is 4"


async def test_a_failing_tool_is_reported_and_the_model_sees_the_error(fake_llm):
    fake_llm.script(tool_call("divide", {"a": 1, "b": 0}), text("Cannot divide by zero"))
    raw = graph([("chat", "chat-start", {}), agent("a"), ("kit", "test-toolset", {})],
                ["chat.output -> a.input", "kit.tools => a.tools"])
    run, events = await run_graph(raw, payload="1/0?", registry=registry_with_toolset())
    assert run.status == "completed", run.error
    [completed] = of(events, "a", "tool_call_completed")
    assert (completed.data["name"], completed.data["result"], completed.data["error"]) == (
        "divide", None, "division by zero")
    assert fake_llm.requests[1]["messages"][-1]["content"] == "division by zero"


async def test_reasoning_deltas_become_reasoning_events(fake_llm):
    fake_llm.script(text(["Yes"], reasoning=["Let me ", "think"]))
    raw = graph([("chat", "chat-start", {}), agent("a", reasoning_effort="high", temperature=0.5)],
                ["chat.output -> a.input"])
    run, events = await run_graph(raw, payload="Sure?")
    assert [e.data["text"] for e in of(events, "a", "reasoning")] == ["Let me ", "think"]
    assert (fake_llm.requests[0]["reasoning_effort"], fake_llm.requests[0]["temperature"]) == ("high", 0.5)


async def test_provider_http_500_is_a_node_error_naming_provider_model_and_status(fake_llm):
    fake_llm.script(http_error(500, "upstream exploded"))
    raw = graph([("chat", "chat-start", {}), agent("a")], ["chat.output -> a.input"])
    run, events = await run_graph(raw, payload="hi")
    assert run.status == "failed"
    assert of(events, "a", "error")[0].data["error"] == (
        "model openai-compatible:fake-model failed (HTTP 500): upstream exploded")
    assert "HTTP 500" in run.error and len(fake_llm.requests) == 1


#  Chat Start --> Lead          (Researcher ==tools-out => tools==> Lead: a team)
async def test_an_agent_wired_into_tools_becomes_a_team_member(fake_llm):
    fake_llm.script(
        tool_call("delegate_task_to_member", {"member_id": "researcher", "task": "Find the boiling point"}),
        text(["100", " C"], match=lambda body: last_user_text(body) == "Find the boiling point"),
        text(["Water", " boils", " at", " 100 C"]),
    )
    raw = graph([("chat", "chat-start", {}), agent("lead", instructions="Coordinate."),
                 ("researcher", "agent", {"model": MODEL, "instructions": "You look things up."})],
                ["chat.output -> lead.input", "researcher.tools-out => lead.tools"])
    raw["nodes"][2]["name"] = "Researcher"
    run, events = await run_graph(raw, payload="When does water boil?")
    assert run.status == "completed", run.error
    assert run.outputs_by_name()["LEAD"]["output"]["response"] == "Water boils at 100 C"
    # The member only materialized: it never ran as a node of its own.
    assert of(events, "researcher", "started") == []
    members = of(events, "lead", "member_event")
    assert {e.data["member"] for e in members} == {"Researcher"}
    inner = [e.data["event"] for e in members]
    assert [i["data"]["text"] for i in inner if i["event_type"] == "token"] == ["100", " C"]
    assert inner[0]["event_type"] == "started"
    assert (inner[-1]["event_type"], inner[-1]["data"]["content"]) == ("completed", "100 C")
    # The leader's own tokens and its delegation call stay the leader's.
    assert "".join(e.data["text"] for e in of(events, "lead", "token")) == "Water boils at 100 C"
    [delegated] = of(events, "lead", "tool_call_completed")
    assert (delegated.data["name"], delegated.data["result"]) == ("delegate_task_to_member", "100 C")
    leader_first, member, leader_second = fake_llm.requests
    assert "Researcher" in leader_first["messages"][0]["content"]
    assert "You look things up." in member["messages"][0]["content"]
    assert leader_second["messages"][-1] == {"role": "tool", "content": "100 C",
                                             "tool_call_id": leader_first_call_id(leader_second)}


#  Chat Start --> Lead          (Researcher ==tools-out => tools==> Lead: a team)
async def test_a_team_leaders_text_around_a_delegation_is_two_paragraphs(fake_llm):
    fake_llm.script(
        tool_call("delegate_task_to_member", {"member_id": "researcher", "task": "Find the boiling point"},
                  saying="I will ask the researcher."),
        text("100 C", match=lambda body: last_user_text(body) == "Find the boiling point"),
        text("Water boils at 100 C"),
    )
    raw = graph([("chat", "chat-start", {}), agent("lead"), ("researcher", "agent", {"model": MODEL})],
                ["chat.output -> lead.input", "researcher.tools-out => lead.tools"])
    run, _ = await run_graph(raw, payload="When does water boil?")
    assert run.status == "completed", run.error
    assert run.outputs_by_name()["LEAD"]["output"]["response"] == (
        "I will ask the researcher.\n\nWater boils at 100 C")


def leader_first_call_id(request: dict) -> str:
    return next(m for m in request["messages"] if m.get("tool_calls"))["tool_calls"][0]["id"]


#  Chat Start --> Lead    (Helper ==tools-out => tools==> Lead, Test Toolset ==tools==> Helper)
async def test_a_member_keeps_its_own_tools(fake_llm):
    fake_llm.script(
        tool_call("delegate_task_to_member", {"member_id": "helper", "task": "add 1 and 2"}),
        tool_call("add_numbers", {"a": 1, "b": 2}),
        text("3"),
        text("The sum is 3"),
    )
    raw = graph([("chat", "chat-start", {}), agent("lead"), agent("helper"), ("kit", "test-toolset", {})],
                ["chat.output -> lead.input", "helper.tools-out => lead.tools", "kit.tools => helper.tools"])
    raw["nodes"][2]["name"] = "Helper"
    run, events = await run_graph(raw, payload="1+2?", registry=registry_with_toolset())
    assert run.status == "completed", run.error
    inner = [(e.data["event"]["event_type"], e.data["event"]["data"].get("name"))
             for e in of(events, "lead", "member_event")]
    assert ("tool_call_started", "add_numbers") in inner and ("tool_call_completed", "add_numbers") in inner
    assert [t["function"]["name"] for t in fake_llm.requests[1]["tools"]] == ["add_numbers", "divide"]


def test_split_tools_sorts_members_from_tools_and_refuses_the_rest():
    import pytest
    from agno.agent import Agent

    from nodeflow_app.contract import NodeError
    from nodes.ai.agent.build import split_tools

    member = Agent(name="M", telemetry=False)
    assert split_tools([[add_numbers, None], member, {"type": "function"}]) == (
        [member], [add_numbers, {"type": "function"}])
    with pytest.raises(NodeError, match="a Tools link delivered a str, which is neither a tool nor an agent"):
        split_tools(["not a tool"])
