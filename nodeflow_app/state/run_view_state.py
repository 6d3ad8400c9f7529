"""What the canvas shows of a run (SPEC 8): each node's status, the output ports data left by, and why nodes failed.

Its own state class, apart from the graph and the chat: a streaming chat flushes the small `statuses`
and `ports` dicts here, never the graph or the chat history. The canvas marks an edge taken when its
source completed and its source handle is among that node's `ports`.
"""

from __future__ import annotations

from typing import Any

import reflex as rx

from nodeflow_app.chat.patch import step_errors, step_ports, step_statuses
from nodeflow_app.state.access import requires

# Of a failed node's error, what the canvas gets: a line on the node and the whole of this in its tooltip.
ERROR_CHARS = 300


class RunViewState(rx.State):
    """The run shown on the canvas: the live one (chat or test run) or a past one opened from the history.

    Filled by the chat and the Runs panel through the private methods below (never events: the browser cannot
    call them); the browser may only `clear` it."""

    run_id: str = ""
    label: str = ""  # e.g. "Live run" or "Run 3f2a… · completed"; empty when no run is shown
    statuses: dict[str, str] = {}
    ports: dict[str, list[str]] = {}
    errors: dict[str, str] = {}  # failed node id -> its error (n8n shows it on the node)

    def _start_live(self, run_id: str, label: str = "Live run") -> None:
        """A new run begins: the canvas forgets the previous one."""
        self.run_id, self.label, self.statuses, self.ports, self.errors = run_id, label, {}, {}, {}

    def _apply_steps(self, ops: list[dict[str, Any]]) -> None:
        """Take the flow_step cards of a chat patch (chat.patch ops); only touches the vars when a step changed."""
        statuses = step_statuses(ops)
        if not statuses:
            return
        self.statuses = {**self.statuses, **statuses}
        self.ports = {**self.ports, **step_ports(ops)}
        errors = step_errors(ops)
        if errors:
            self.errors = {**self.errors, **_clipped(errors)}

    def _show_blocks(self, run_id: str, blocks: list[dict[str, Any]], label: str) -> None:
        """A whole message's steps (a stored answer, a resumed run) at once."""
        ops = [{"op": "set", "path": [i], "block": b} for i, b in enumerate(blocks)]
        self.run_id, self.label = run_id, label
        self.statuses, self.ports, self.errors = step_statuses(ops), step_ports(ops), _clipped(step_errors(ops))

    def _show_nodes(self, run_id: str, nodes: list[dict[str, Any]], label: str) -> None:
        """A stored run's node records (RunStore.get_run()["nodes"]): statuses, ports from their outputs, errors."""
        self.run_id, self.label = run_id, label
        self.statuses = {n["node_id"]: n["status"] for n in nodes}
        self.ports = {n["node_id"]: [p for p, v in (n.get("outputs") or {}).items() if v is not None]
                      for n in nodes if n["status"] == "completed"}
        self.errors = _clipped({n["node_id"]: n.get("error") or "failed" for n in nodes if n["status"] == "failed"})

    @rx.event
    @requires("view")
    def clear(self):
        self.run_id, self.label, self.statuses, self.ports, self.errors = "", "", {}, {}, {}


def _clipped(errors: dict[str, str]) -> dict[str, str]:
    return {node_id: text if len(text) <= ERROR_CHARS else text[:ERROR_CHARS - 1] + "…"
            for node_id, text in errors.items()}
