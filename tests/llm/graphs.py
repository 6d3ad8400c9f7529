"""Tiny graph builder for LLM tests: nodes as (id, type, data), wires as "a.output -> b.input" (flow)
or "m.model => a.model" (link)."""

from __future__ import annotations

from typing import Any

from nodeflow_app.runtime.engine import start_run
from nodes._registry import default_registry

MODEL = "openai-compatible:fake-model"


def graph(nodes: list[tuple[str, str, dict[str, Any]]], wires: list[str]) -> dict[str, Any]:
    """Node names are the ids upper-cased; `=>` makes a link edge, `->` a flow edge."""
    edges = []
    for index, text in enumerate(wires):
        channel = "link" if "=>" in text else "flow"
        left, right = (part.strip() for part in text.replace("=>", "->").split("->"))
        (source, source_handle), (target, target_handle) = left.split("."), right.split(".")
        edges.append({"id": f"e{index}", "source": source, "sourceHandle": source_handle, "target": target,
                      "targetHandle": target_handle, "data": {"channel": channel}})
    return {"id": "g", "name": "llm test graph", "edges": edges,
            "nodes": [{"id": node_id, "type": node_type, "name": node_id.upper(), "data": data,
                       "position": {"x": 0, "y": 0}} for node_id, node_type, data in nodes]}


def refund_desk() -> dict[str, Any]:
    """Chat Start -> Agent (calculator tool) -> Approval: approve -> LLM Completion, reject -> Prompt Template."""
    return graph([("chat", "chat-start", {}), ("agent", "agent", {"model": MODEL, "tool_call_limit": 3}),
                  ("calc", "toolset", {"tool_names": ["calculator"]}),
                  ("ok", "approval", {"prompt": "Send '{{ $json.response }}'?"}),
                  ("llm", "llm-completion", {"model": MODEL}),
                  ("no", "prompt-template", {"template": "Rejected ({approval.note})"})],
                 ["chat.output -> agent.input", "calc.tools => agent.tools", "agent.output -> ok.input",
                  "ok.approve -> llm.input", "ok.reject -> no.input"])


async def run_graph(raw: dict[str, Any], payload: Any = None, registry: Any = None, **options: Any):
    run = start_run(raw, registry or default_registry(), payload=payload, **options)
    events = [event async for event in run.events()]
    return run, events


def of(events: list, node_id: str, event_type: str) -> list:
    return [e for e in events if e.node_id == node_id and e.event_type == event_type]
