"""nodeflow_app.llm.events on scripted Agno events: where the answer gets its paragraph breaks, and where not.

The real path (Agno against the fake OpenAI server) is tested through the Agent node in test_agent.py.
"""

from __future__ import annotations

from typing import Any

from nodeflow_app.contract import FlowContext
from nodeflow_app.llm.events import RunOutcome, stream_run
from nodeflow_app.llm.providers import ModelRef


class ScriptedRun:
    """Stands in for an Agno Agent: `arun` streams the given events."""

    def __init__(self, *events: Any):
        self.events = events

    async def arun(self, _message: str, **_options: Any):
        for event in self.events:
            yield event


async def outcome_of(*events: Any) -> RunOutcome:
    ctx = FlowContext(node_id="a", node_type="agent", run_id="run-1", runtime=None)
    ref = ModelRef(provider="openai-compatible", model="fake-model")
    items = [item async for item in stream_run(ScriptedRun(*events), "hi", ctx, ref)]
    return items[-1]


def said(text: str) -> Any:
    from agno.run.agent import RunContentEvent

    return RunContentEvent(run_id="r1", content=text)


def tool_call_started() -> Any:
    from agno.models.response import ToolExecution
    from agno.run.agent import ToolCallStartedEvent

    return ToolCallStartedEvent(run_id="r1", tool=ToolExecution(tool_call_id="c1", tool_name="add_numbers"))


def completed(content: Any) -> Any:
    from agno.run.agent import RunCompletedEvent

    return RunCompletedEvent(run_id="r1", content=content)


async def test_a_tool_call_between_texts_is_a_paragraph_break_and_one_before_any_text_is_none():
    outcome = await outcome_of(tool_call_started(), said("Let me"), said(" check."), tool_call_started(),
                               tool_call_started(), said("It is 4."), completed("Let me check.It is 4."))
    assert outcome.content == "Let me check.\n\nIt is 4."


async def test_an_answer_that_is_not_the_streamed_text_is_kept_as_agno_gives_it():
    outcome = await outcome_of(said("Let me check."), tool_call_started(), said("draft"),
                               completed('{"answer": 4}'))
    assert outcome.content == '{"answer": 4}'
