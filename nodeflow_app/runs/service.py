"""Test runs of a stored graph: re-run and run to here through the graph's output cache, pins, run history.

Runs start from the STORED graph (a caller with unsaved edits saves first), persist through the RunStore
(so they are in the history) and use the graph's process-level cache (`caches.py`): only stale nodes
execute. Pins live in the database and are seeded into the cache before every run, so every worker
process uses the same ones.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Engine

from nodeflow_app.runs.caches import GraphCaches, graph_caches
from nodeflow_app.runtime.cache import OutputCache
from nodeflow_app.runtime.engine import run_to, start_run
from nodeflow_app.runtime.graph import Graph, GraphInvalid, normalize_or_raise
from nodeflow_app.runtime.plan import Plan, compile_plan
from nodeflow_app.runtime.run import Run
from nodeflow_app.store.db import make_engine, process_wide
from nodeflow_app.store.graphs import GraphStore
from nodeflow_app.store.pins import PinStore
from nodeflow_app.store.runs import RunStore
from nodes._registry import default_registry

TEST_MESSAGE = "Hello! This is a test run from the editor."
# A trigger's payload for its first test run (later runs reuse the last one); None: the trigger's own default.
FIRST_PAYLOADS = {"chat-start": lambda: {"message": TEST_MESSAGE, "chat_id": None, "attachments": []}}


class RunRefused(ValueError):
    """A test run, pin or lookup that cannot be done; the message says why (for a toast or an inline error)."""


class RunService:
    """Re-runs, runs to a node, pins and run history of stored graphs."""

    def __init__(self, engine_or_url: Engine | str | None = None, *, registry: Any = None,
                 caches: GraphCaches | None = None):
        self._owns_engine = not isinstance(engine_or_url, Engine)
        self.engine = engine_or_url if isinstance(engine_or_url, Engine) else make_engine(engine_or_url)
        self.graphs, self.pins, self.runs = GraphStore(self.engine), PinStore(self.engine), RunStore(self.engine)
        self.registry = registry if registry is not None else default_registry()
        self.caches = caches if caches is not None else graph_caches()

    def close(self) -> None:
        self.runs.close()
        if self._owns_engine:
            self.engine.dispose()

    # -- runs ------------------------------------------------------------------------------------------

    def rerun(self, graph_id: str, payload: Any = None, *, trigger: str | None = None) -> Run:
        """A (not yet started) run of the whole graph from its trigger; only stale nodes will execute."""
        plan = self._plan(graph_id)
        trigger_id = trigger or self._trigger(graph_id, plan, _triggers(plan))
        payload = payload if payload is not None else self.default_payload(graph_id, plan, trigger_id)
        with _refused():
            return start_run(plan.graph, self.registry, trigger=trigger_id, payload=payload,
                             hooks=self.runs.hooks(self.cache(graph_id)))

    def run_to(self, graph_id: str, node_id: str, payload: Any = None) -> Run:
        """A (not yet started) run of `node_id` and what it depends on; only stale nodes will execute."""
        plan = self._plan(graph_id)
        target = plan.nodes.get(node_id)
        if target is None:
            raise RunRefused(f"there is no node '{node_id}' in the saved graph")
        upstream = plan.ancestors(node_id) | {node_id}
        triggers = [t for t in _triggers(plan) if t in upstream]
        if not triggers:
            raise RunRefused(f"no trigger leads to '{target.node.name}': wire it to a trigger first")
        trigger_id = self._trigger(graph_id, plan, triggers)
        payload = payload if payload is not None else self.default_payload(graph_id, plan, trigger_id)
        with _refused():
            return run_to(plan.graph, self.registry, node_id, self.cache(graph_id), trigger=trigger_id,
                          payload=payload, hooks=self.runs.hooks())

    def default_payload(self, graph_id: str, plan: Plan, trigger_id: str) -> Any:
        """The last run's payload of that trigger, else the trigger type's first payload (else None)."""
        found, payload = self.runs.last_payload(graph_id, trigger_id)
        if found:
            return payload
        first = FIRST_PAYLOADS.get(plan.nodes[trigger_id].node.type)
        return first() if first is not None else None

    def stale(self, graph_id: str) -> set[str]:
        """Nodes a re-run would execute (the rest reuse cached or pinned outputs)."""
        plan = self._plan(graph_id)
        trigger_id = self._trigger(graph_id, plan, _triggers(plan))
        payload = self.default_payload(graph_id, plan, trigger_id)
        return self.cache(graph_id).stale_nodes(plan, trigger_id, payload)

    def cache(self, graph_id: str) -> OutputCache:
        """The graph's output cache with the database's pins."""
        cache = self.caches.get(graph_id)
        cache.pinned = self.pins.pins(graph_id)
        return cache

    # -- history ---------------------------------------------------------------------------------------

    def list_runs(self, graph_id: str, limit: int = 50) -> list[dict[str, Any]]:
        return self.runs.list_runs(graph_id, limit)

    def get_run(self, run_id: str) -> dict[str, Any] | None:
        return self.runs.get_run(run_id)

    # -- pins ------------------------------------------------------------------------------------------

    def pinned(self, graph_id: str) -> dict[str, dict[str, Any]]:
        return self.pins.pins(graph_id)

    def pin(self, graph_id: str, node_id: str, outputs: Any) -> dict[str, Any]:
        """Pin `outputs` ({output port: value}) as the node's test data; refused with a reason if they do not fit."""
        plan = self._plan(graph_id)
        pn = plan.nodes.get(node_id)
        if pn is None:
            raise RunRefused(f"there is no node '{node_id}' in the saved graph")
        ports = ", ".join(pn.outputs) or "none"
        if not isinstance(outputs, dict) or not outputs:
            raise RunRefused(f"pinned data must be a JSON object of output ports, e.g. {{\"{next(iter(pn.outputs), 'output')}\": ...}}")
        unknown = [port for port in outputs if port not in pn.outputs]
        if unknown:
            raise RunRefused(f"'{unknown[0]}' is not an output of '{pn.node.name}' (its outputs: {ports})")
        self.pins.pin(graph_id, node_id, outputs)
        self.caches.get(graph_id).pin(node_id, outputs)
        return outputs

    def pin_text(self, graph_id: str, node_id: str, text: str) -> dict[str, Any]:
        """`pin` from JSON text; invalid JSON is refused naming the line and column."""
        try:
            outputs = json.loads(text)
        except json.JSONDecodeError as error:
            raise RunRefused(f"invalid JSON at line {error.lineno}, column {error.colno}: {error.msg}") from None
        return self.pin(graph_id, node_id, outputs)

    def unpin(self, graph_id: str, node_id: str) -> None:
        self.pins.unpin(graph_id, node_id)
        self.caches.get(graph_id).unpin(node_id)

    # -- internals -------------------------------------------------------------------------------------

    def _plan(self, graph_id: str) -> Plan:
        stored = self.graphs.get(graph_id)
        if stored is None:
            raise RunRefused(f"there is no graph '{graph_id}'")
        with _refused():
            graph: Graph = normalize_or_raise(stored.graph, self.registry)
        return compile_plan(graph, self.registry)

    def _trigger(self, graph_id: str, plan: Plan, candidates: list[str]) -> str:
        """The trigger the latest run started at when it is a candidate, else the first candidate."""
        if not candidates:
            raise RunRefused("add a trigger (e.g. Chat Start or Manual Trigger) to run this graph")
        if len(candidates) > 1:
            latest = self.runs.list_runs(graph_id, limit=1)
            if latest and latest[0]["trigger_id"] in candidates:
                return latest[0]["trigger_id"]
        return candidates[0]


@contextmanager
def _refused() -> Iterator[None]:
    """An invalid graph refuses the run with its issues (the editor shows them too)."""
    try:
        yield
    except GraphInvalid as error:
        raise RunRefused("; ".join(issue.message for issue in error.issues)) from None


def _triggers(plan: Plan) -> list[str]:
    return [node_id for node_id, pn in plan.nodes.items() if pn.definition.trigger]


# The process's RunService on the app database, opened on first use (never at import time).
run_service = process_wide(RunService)
