"""Run events: what a node (or the kernel) reports while a run goes on."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Literal

EventType = Literal[
    "started", "token", "reasoning", "tool_call_started", "tool_call_completed",
    "member_event", "progress", "completed", "error", "skipped", "paused",
    "resumed", "cancelled",
]


@dataclass(slots=True)
class NodeEvent:
    """One thing that happened in a run, in order of occurrence."""

    run_id: str
    node_id: str
    node_type: str
    event_type: EventType
    data: dict[str, Any] = field(default_factory=dict)
    timestamp: float = field(default_factory=time.time)

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id, "node_id": self.node_id, "node_type": self.node_type,
            "event_type": self.event_type, "data": self.data, "timestamp": self.timestamp,
        }
