"""Agent node helpers: sort what the `tools` links deliver into tools and team members; build the Agno Agent or Team."""

from __future__ import annotations

from typing import Any

from nodeflow_app.llm.history import session_db, session_id
from nodeflow_app.llm.models import node_model, optional_number
from nodeflow_app.llm.providers import ModelRef
from nodes._helpers import to_text
from nodeflow_app.contract import CONVERSATION, FlowContext, NodeError

from .confirmation import needs_confirmation


def split_tools(artifacts: list[Any]) -> tuple[list[Any], list[Any]]:
    """(members, tools): Agno Agents/Teams become members; toolkits, functions, callables and dicts are tools.

    An artifact may be one item or a list of them (a toolset provides a list).
    """
    from agno.agent import Agent
    from agno.team import Team
    from agno.tools.function import Function
    from agno.tools.toolkit import Toolkit

    members: list[Any] = []
    tools: list[Any] = []
    for artifact in artifacts:
        for item in artifact if isinstance(artifact, (list, tuple)) else [artifact]:
            if isinstance(item, (Agent, Team)):
                members.append(item)
            elif isinstance(item, (Toolkit, Function, dict)) or callable(item):
                tools.append(item)
            elif item is not None:
                raise NodeError(f"a Tools link delivered a {type(item).__name__}, which is neither a tool nor an agent")
    return members, tools


async def build_agent(data: dict[str, Any], ctx: FlowContext, ref: ModelRef, *, history: bool) -> Any:
    """The Agno Agent for this node, or a Team led by it when agents are wired into its tools."""
    from agno.agent import Agent
    from agno.team import Team

    members, tools = split_tools(await ctx.runtime.resolve_links(ctx.node_id, "tools"))
    settings: dict[str, Any] = {
        "name": ctx.runtime.get_node(ctx.node_id)["name"],
        "model": node_model(ref, data),
        "instructions": to_text(data.get("instructions")).strip() or None,
        "tools": tools or None,
        "tool_call_limit": optional_number(data, "tool_call_limit", 1, None, whole=True),
        "markdown": bool(data.get("markdown")),
        "telemetry": False,
    }
    conversation = ctx.context.get(CONVERSATION)
    if history and conversation:
        settings.update(db=session_db(), session_id=session_id(conversation, ctx.node_id),
                        add_history_to_context=True)
    elif needs_confirmation(tools):
        # A run paused for a person's approval must be continuable later, also after a restart.
        settings.update(db=session_db(), session_id=f"run:{ctx.run_id}:{ctx.node_id}")
    return Team(members=members, **settings) if members else Agent(**settings)
