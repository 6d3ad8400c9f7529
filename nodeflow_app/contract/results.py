"""What a node's `execute` returns: outputs by port, extra events, or a request to wait."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from nodeflow_app.contract.definitions import DataValue
from nodeflow_app.contract.events import NodeEvent


@dataclass(slots=True)
class WaitForInput:
    """Returned in a result to pause the run at this node until `resume(run_id, node_id, payload)`.

    `resume_at` (epoch seconds): the run goes on by itself then, if nobody answered before: the app answers
    `{"decision": options[0], "by": "timer", "at": <time>}` (nodeflow_app/runs/timers.py). The pause is on record,
    so it outlives a restart; the node is executed again with that answer as its `ctx.resume_payload`."""

    prompt: str
    options: list[str] = field(default_factory=list)
    detail: dict[str, Any] = field(default_factory=dict)
    resume_at: float | None = None


@dataclass(slots=True)
class ExecutionResult:
    """A node's outputs by port id. A port left out carries no value: its edges are dead."""

    outputs: dict[str, DataValue] = field(default_factory=dict)
    events: list[NodeEvent] = field(default_factory=list)
    wait: WaitForInput | None = None
