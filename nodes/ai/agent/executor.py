"""Agent: an Agno Agent (a Team when agents are wired into its tools) run on its Message or the input's primary text.

Output `{response, model, tokens_used}`; on `tools-out` it materializes itself for a parent agent.
A tool that needs confirmation pauses the node until a person approves or rejects the call.
"""

from typing import Any, AsyncIterator

from nodeflow_app.llm.events import RunOutcome, stream_run
from nodeflow_app.llm.models import model_ref
from nodes._helpers import primary_text, to_text
from nodeflow_app.contract import ExecutionResult, FlowContext, NodeError, NodeEvent

from .build import build_agent
from .confirmation import answer_problem, ask, continue_run, start_run


class AgentExecutor:
    node_type = "agent"

    def answer_problem(self, payload: Any) -> str | None:
        return answer_problem(payload)

    async def execute(self, data: dict[str, Any], inputs: dict[str, Any],
                      ctx: FlowContext) -> AsyncIterator[NodeEvent | ExecutionResult]:
        # An empty Message means the input's primary text (SPEC 5).
        message = to_text(data.get("prompt")) or primary_text(inputs.get("input"))
        if not message.strip():
            raise NodeError("nothing to send to the agent: the input has no text")
        ref = await model_ref(data, ctx)
        agent = await build_agent(data, ctx, ref, history=data.get("history") is not False)
        run = start_run(agent, message, ctx) if ctx.resume_payload is None else await continue_run(agent, ctx)
        outcome = RunOutcome()
        async for item in stream_run(run, message, ctx, ref):
            if isinstance(item, RunOutcome):
                outcome = item
            else:
                yield item
        if outcome.cancelled:
            raise NodeError(f"the agent run was cancelled by {ref.ref}")
        if run.paused:
            yield ExecutionResult(wait=ask(agent, run.output, ctx))
            return
        yield ExecutionResult(outputs={"output": {
            "response": outcome.content, "model": ref.ref, "tokens_used": outcome.usage.get("total_tokens", 0)}})

    async def materialize(self, data: dict[str, Any], output_handle: str, ctx: FlowContext) -> Any:
        if output_handle != "tools-out":
            raise NodeError(f"Agent has no link output {output_handle!r} (it provides 'tools-out')")
        # A member's conversation belongs to its team's session, not to a session of its own.
        return await build_agent(data, ctx, await model_ref(data, ctx), history=False)


executor = AgentExecutor()
