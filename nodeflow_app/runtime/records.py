"""What a run remembers and tells its embedder: node records, run hooks, run errors, node statuses.

The store persists these records and hands them back (as plain rows) for `Run.restore`; the kernel
never reads the store, and the store never builds a run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Awaitable, Callable

from nodeflow_app.contract import WaitForInput

# A node is `interrupted` when the process running it died; resuming the run executes it again.
RERUN_ON_RESUME = frozenset({"running", "interrupted", "cancelled"})
# A node in one of these states will not change again in this run.
SETTLED = frozenset({"completed", "skipped", "failed"})


class RunError(Exception):
    """A problem of the run itself (bad resume, unknown node), not of one node."""


@dataclass(slots=True)
class NodeRecord:
    """What happened to one node in this run; persisted as it changes."""

    status: str = "pending"  # running | completed | failed | skipped | paused | cancelled | interrupted
    inputs: dict[str, Any] | None = None
    outputs: dict[str, Any] | None = None
    error: str | None = None
    duration_ms: float | None = None
    cached: bool = False
    wait: WaitForInput | None = None
    checkpoint: Any = None  # what the node saved of its progress (ctx.runtime.checkpoint), given back on a re-run
    sequence: int = 0  # order of the last status change, for replay after a restart


@dataclass
class RunHooks:
    """Optional collaborators: persistence and the reactive output cache."""

    on_node: Callable[[Any, str, NodeRecord], None] | None = None
    on_run: Callable[[Any], None] | None = None
    cache: Any = None  # nodeflow_app.runtime.cache.OutputCache
    # Awaited as a run's stream starts (before its first node) and before it ends (finished or paused):
    # persistence that writes a moment later (many runs in one transaction) makes the run's state durable here.
    settle: Callable[[Any], Awaitable[None]] | None = None


def record_from_row(row: dict[str, Any]) -> NodeRecord:
    """A NodeRecord from a stored node row: {status, inputs, outputs, error, duration_ms, cached, wait, sequence}."""
    wait = row.get("wait")
    return NodeRecord(status=row["status"], inputs=row.get("inputs"), outputs=row.get("outputs"),
                      error=row.get("error"), duration_ms=row.get("duration_ms"), cached=bool(row.get("cached")),
                      wait=WaitForInput(**wait) if wait is not None else None, sequence=row.get("sequence") or 0,
                      checkpoint=row.get("checkpoint"))
