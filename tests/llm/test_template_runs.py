"""Templates run as shipped, against the fake OpenAI server: only their models are pointed at it.

Each test draws the template's graph; the model replies are scripted per request.
"""

from __future__ import annotations

from typing import Any

from nodeflow_app.contract import CONVERSATION
from nodeflow_app.templates import get_template
from nodes._registry import default_registry
from tests.llm.fake_openai import last_user_text, text, tool_call
from tests.llm.graphs import MODEL, run_graph


def template_graph(template_id: str) -> dict[str, Any]:
    """The template's graph with every model parameter on the fake server (the files use the default model)."""
    graph = get_template(template_id).new_graph()
    registry = default_registry()
    for node in graph["nodes"]:
        if registry.get(node["type"]).definition.parameter("model") is not None:
            node["data"]["model"] = MODEL
    return {"id": template_id, "name": template_id, **graph}


#  Chat Start --> Assistant (agent) <== Tools (calculator, current_datetime)
async def test_chat_with_an_agent_and_tools(fake_llm):
    fake_llm.script(tool_call("calculator", {"expression": "6*7"}), text(["It", " is", " 42."]))
    run, _ = await run_graph(template_graph("chat_agent_tools"), payload="what is 6*7?", context={CONVERSATION: "c1"})
    assert run.status == "completed", run.error
    assert run.outputs_by_name()["Assistant"]["output"]["response"] == "It is 42."
    tool_names = {tool["function"]["name"] for tool in fake_llm.requests[0]["tools"]}
    assert {"calculator", "current_datetime"} <= tool_names


#  Chat Start --> Draft (agent) --> Approve the draft --approve--> Send
#                                                     --reject---> Hold
async def test_approval_before_replying(fake_llm):
    fake_llm.script(text(["Sorry", " for", " the", " delay."]))
    run, _ = await run_graph(template_graph("approval"), payload="where is my order?", context={CONVERSATION: "c2"})
    assert run.status == "paused" and run.paused_nodes() == ["ask"]
    [event async for event in run.resume("ask", {"decision": "approve", "note": "fine"})]
    assert run.status == "completed", run.error
    outputs = run.outputs_by_name()
    assert outputs["Send"]["prompt"] == "Sorry for the delay."
    assert "Hold" not in outputs


#  Chat Start --> Is a refund --true--> Refund reply --> Join
#                             --false-> Answer (LLM) -->
async def test_branching_takes_the_model_only_for_other_messages(fake_llm):
    run, _ = await run_graph(template_graph("branching"), payload="I want a refund", context={CONVERSATION: "c3"})
    assert run.status == "completed", run.error
    assert run.outputs_by_name()["Join"]["output"]["text"] == "Your refund request is noted: I want a refund"
    assert fake_llm.requests == []

    fake_llm.script(text(["Open", " 9", " to", " 5."]))
    run, _ = await run_graph(template_graph("branching"), payload="when are you open?", context={CONVERSATION: "c4"})
    assert run.status == "completed", run.error
    assert run.outputs_by_name()["Answer"]["output"]["text"] == "Open 9 to 5."
    assert last_user_text(fake_llm.requests[0]) == "when are you open?"


#  Start {topics: [...]} --> [Each topic: One fact (LLM)] --> Facts
async def test_for_each_asks_once_per_topic_in_order(fake_llm):
    for topic in ("rivers", "volcanoes", "glaciers"):
        fake_llm.script(text([f"A fact about {topic}."], match=lambda body, t=topic: t in last_user_text(body)))
    run, _ = await run_graph(template_graph("for_each"))
    assert run.status == "completed", run.error
    facts = run.outputs_by_name()["Facts"]["output"]["facts"]
    assert [fact["text"] for fact in facts] == ["A fact about rivers.", "A fact about volcanoes.",
                                                "A fact about glaciers."]
    assert len(fake_llm.requests) == 3


#  Chat Start --> Researcher --> Summarize
#                   ^ tools: Calculator, Helper (agent)
async def test_research_then_summarize(fake_llm):
    fake_llm.script(tool_call("calculator", {"expression": "6*7"}), text(["6*7", " is", " 42."]),
                    text(["The", " answer", " is", " 42."],
                         match=lambda body: last_user_text(body).startswith("Summarize")))
    run, _ = await run_graph(template_graph("research_summarize"), payload="what is 6*7?", context={CONVERSATION: "c5"})
    assert run.status == "completed", run.error
    outputs = run.outputs_by_name()
    assert outputs["Researcher"]["output"]["response"] == "6*7 is 42."
    assert outputs["Summarize"]["output"]["text"] == "The answer is 42."


#  Chat Start --> Word stats (Code) --> Reply
async def test_python_on_each_message_needs_no_model(fake_llm):
    run, _ = await run_graph(template_graph("code_step"), payload="a quick brown fox", context={CONVERSATION: "c6"})
    assert run.status == "completed", run.error
    assert run.outputs_by_name()["Word stats"]["output"] == {"words": 4, "longest": "quick"}
    assert run.outputs_by_name()["Reply"]["prompt"] == 'Your message has 4 words; the longest is "quick".'
    assert fake_llm.requests == []
