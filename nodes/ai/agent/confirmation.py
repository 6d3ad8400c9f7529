"""Tools that need approval: an Agno run paused on them becomes the kernel's pause; the answer continues it.

The paused Agno run must outlive the node's call. It is read back from the agent's session db (build.py
gives the agent one whenever a tool needs confirmation), found by the NodeFlow run id stored in its
metadata; an agent without a db (a member's tool paused its team) keeps it in this process instead.
"""

from __future__ import annotations

import json
from typing import Any, AsyncIterator, Callable

from nodeflow_app.contract import FlowContext, NodeError, WaitForInput

DECISIONS = ("approve", "reject")
RUN_KEY = "nodeflow_run_id"

# (NodeFlow run id, node id) -> the paused Agno run output, for agents without a session db.
_paused_in_memory: dict[tuple[str, str], Any] = {}


def needs_confirmation(tools: list[Any]) -> bool:
    """Whether any of these Agno tools (Functions, Toolkits) asks for confirmation before it runs."""
    from agno.tools.function import Function
    from agno.tools.toolkit import Toolkit

    for tool in tools:
        if isinstance(tool, Function) and tool.requires_confirmation:
            return True
        if isinstance(tool, Toolkit) and (tool.requires_confirmation_tools or any(
                f.requires_confirmation for f in tool.functions.values())):
            return True
    return False


class PausableRun:
    """What `stream_run` drives: an Agno run or its continuation; keeps the final run output to see a pause."""

    def __init__(self, start: Callable[..., AsyncIterator[Any]]):
        self._start = start
        self.output: Any = None

    def arun(self, _message: str, **options: Any) -> AsyncIterator[Any]:
        return self._tap(self._start(yield_run_output=True, **options))

    async def _tap(self, stream: Any) -> AsyncIterator[Any]:
        from agno.run.agent import RunOutput
        from agno.run.team import TeamRunOutput

        try:
            async for event in stream:
                if isinstance(event, (RunOutput, TeamRunOutput)):
                    self.output = event
                else:
                    yield event
        finally:
            await stream.aclose()

    @property
    def paused(self) -> bool:
        return self.output is not None and bool(getattr(self.output, "is_paused", False))


def start_run(agent: Any, message: str, ctx: FlowContext) -> PausableRun:
    return PausableRun(lambda **options: agent.arun(message, metadata={RUN_KEY: ctx.run_id}, **options))


def ask(agent: Any, output: Any, ctx: FlowContext) -> WaitForInput:
    """The kernel pause for a run that stopped before tools needing confirmation: "Allow tool X with args …?"."""
    waiting = [r for r in output.requirements or [] if not r.is_resolved()]
    for requirement in waiting:
        if not requirement.needs_confirmation:
            name = requirement.tool_execution.tool_name if requirement.tool_execution else "?"
            raise NodeError(f"tool {name} asks for {requirement.pause_type.replace('_', ' ')}; the Agent node "
                            f"only supports tools that ask for confirmation")
    if not waiting:
        raise NodeError("the agent run paused without saying what it waits for")
    if agent.db is None:
        _paused_in_memory[(ctx.run_id, ctx.node_id)] = output
    calls = [{"tool": r.tool_execution.tool_name, "args": r.tool_execution.tool_args or {}} for r in waiting]
    asked = "; ".join(f"tool {c['tool']} with args {json.dumps(c['args'], ensure_ascii=False)}" for c in calls)
    return WaitForInput(prompt=f"Allow {asked}?", options=list(DECISIONS),
                        detail={**calls[0], "agno_run_id": output.run_id, "calls": calls})


async def continue_run(agent: Any, ctx: FlowContext) -> PausableRun:
    """The paused Agno run of this node, its tools confirmed or rejected per `ctx.resume_payload`."""
    decision, note = _answer(ctx.resume_payload)
    output = _paused_in_memory.pop((ctx.run_id, ctx.node_id), None)
    if output is None and agent.db is not None:
        output = await _paused_in_session(agent, ctx.run_id)
    if output is None:
        raise NodeError("the paused agent run is gone (the app restarted and this agent keeps no session); "
                        "run the graph again")
    for requirement in output.requirements or []:
        if not requirement.needs_confirmation:
            continue
        if decision == "approve":
            requirement.confirm()
        else:
            requirement.reject(note)
    if agent.db is None:
        return PausableRun(lambda **options: agent.acontinue_run(run_response=output, **options))
    return PausableRun(lambda **options: agent.acontinue_run(
        run_id=output.run_id, requirements=output.requirements, session_id=agent.session_id, **options))


async def _paused_in_session(agent: Any, run_id: str) -> Any:
    session = await agent.aget_session(session_id=agent.session_id)
    for output in reversed(getattr(session, "runs", None) or []):
        if (getattr(output, "is_paused", False) and getattr(output, "parent_run_id", None) is None
                and (output.metadata or {}).get(RUN_KEY) == run_id):
            return output
    return None


def answer_problem(payload: Any) -> str | None:
    """Why `payload` is no answer to a tool confirmation (the kernel then refuses it, the run stays paused)."""
    expected = '{"decision": "approve" | "reject", "note"?: text}'
    if not isinstance(payload, dict) or payload.get("decision") not in DECISIONS:
        return f"the answer to a tool confirmation must be {expected}, got {payload!r:.120}"
    note = payload.get("note")
    if note is not None and not isinstance(note, str):
        return f"the note of a tool confirmation must be text, got {type(note).__name__}"
    return None


def _answer(payload: Any) -> tuple[str, str | None]:
    """(decision, note) of `{"decision": "approve" | "reject", "note"?: text}`."""
    problem = answer_problem(payload)
    if problem:
        raise NodeError(problem)
    return payload["decision"], payload.get("note")
