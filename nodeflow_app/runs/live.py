"""A run's node statuses as batches of patch ops, at most one batch per interval, for a live canvas (no reflex).

The ops have the shape of the chat's flow_step patches (`{"op": "set", "path": [i], "block": {"type":
"flow_step", "node_id", "status", "ports"}}`, and a failed step's error in `detail`), so the canvas's run view applies test runs and chat answers
alike; this module itself knows nothing of the chat.
"""

from __future__ import annotations

from contextlib import aclosing
from typing import Any, AsyncIterator

from nodeflow_app.contract import NodeEvent
from nodeflow_app.runs.pump import Pump
from nodeflow_app.runtime.run import Run

INTERVAL = 0.04
# What each event makes of a node's step; `error` counts only when the node's error mode did not handle it.
_STATUS = {"started": "running", "resumed": "running", "completed": "completed", "skipped": "skipped",
           "paused": "paused", "cancelled": "cancelled", "error": "failed"}


class StepBuilder:
    """Each node's status and the output ports its data left by, as flow_step set ops of what changed."""

    def __init__(self) -> None:
        self.steps: dict[str, dict[str, Any]] = {}
        self._order: dict[str, int] = {}
        self._changed: set[str] = set()

    @property
    def dirty(self) -> bool:
        return bool(self._changed)

    def consume(self, event: NodeEvent) -> None:
        status = _STATUS.get(event.event_type)
        if status is None or (event.event_type == "error" and event.data.get("handled")):
            return
        step = self.steps.get(event.node_id)
        if step is None:
            self._order[event.node_id] = len(self._order)
            step = self.steps[event.node_id] = {"type": "flow_step", "node_id": event.node_id, "ports": []}
        step["status"] = status
        if status == "failed":
            step["detail"] = str(event.data.get("error") or "failed")
        if status == "completed":
            outputs = event.data.get("outputs")
            step["ports"] = [p for p, v in outputs.items() if v is not None] if isinstance(outputs, dict) else []
        self._changed.add(event.node_id)

    def finish(self, run_status: str) -> None:
        """The run is over (or paused): whatever still says running was cut off."""
        if run_status == "paused":
            return
        for node_id, step in self.steps.items():
            if step["status"] == "running":
                step["status"] = "cancelled"
                self._changed.add(node_id)

    def flush(self) -> list[dict[str, Any]]:
        ops = [{"op": "set", "path": [self._order[n]], "block": dict(self.steps[n])} for n in sorted(self._changed)]
        self._changed.clear()
        return ops


async def step_batches(run: Run, events: AsyncIterator[NodeEvent] | None = None,
                       interval: float = INTERVAL) -> AsyncIterator[list[dict[str, Any]]]:
    """Drive `run` (its `events()`, or `events` such as `run.resume(...)`) from a task of its own; yield
    flow_step patch ops. The run goes on while the consumer applies a batch; a consumer that leaves early
    stops the run."""
    builder = StepBuilder()
    pump = Pump(run, events if events is not None else run.events(), builder)
    try:
        async with aclosing(pump.batches(interval)) as batches:
            async for ops in batches:
                yield ops
    finally:
        await pump.stop()
    builder.finish(run.status)
    if builder.dirty:
        yield builder.flush()
