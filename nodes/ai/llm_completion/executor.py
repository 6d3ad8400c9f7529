"""LLM Completion: one streamed model call through Agno (an Agent without tools), output `{text, usage}`."""

from typing import Any, AsyncIterator

from nodeflow_app.llm.events import RunOutcome, stream_run
from nodeflow_app.llm.models import model_ref, node_model
from nodes._helpers import primary_text, to_text
from nodeflow_app.contract import ExecutionResult, FlowContext, NodeError, NodeEvent


class LlmCompletionExecutor:
    node_type = "llm-completion"

    async def execute(self, data: dict[str, Any], inputs: dict[str, Any],
                      ctx: FlowContext) -> AsyncIterator[NodeEvent | ExecutionResult]:
        from agno.agent import Agent  # the SDK loads when a node runs, never with the palette

        prompt = to_text(data.get("prompt")).strip() or primary_text(inputs.get("input"))
        if not prompt.strip():
            raise NodeError("nothing to ask: the prompt is empty and the input has no text")
        ref = await model_ref(data, ctx)
        system = to_text(data.get("system_prompt")).strip() or None
        agent = Agent(model=node_model(ref, data), system_message=system, telemetry=False)
        outcome = RunOutcome()
        async for item in stream_run(agent, prompt, ctx, ref):
            if isinstance(item, RunOutcome):
                outcome = item
            else:
                yield item
        yield ExecutionResult(outputs={"output": {"text": outcome.content, "usage": outcome.usage}})


executor = LlmCompletionExecutor()
