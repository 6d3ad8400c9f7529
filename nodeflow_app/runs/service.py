"""Test runs of a stored graph: re-run and run to here through the graph's output cache, pins, run history.

Runs start from the STORED graph (a caller with unsaved edits saves first) through the RunLauncher with
the `reuse` cache policy: they are persisted (so they are in the history), attributed to `test`, and only
stale nodes execute. Pins live in the database and are seeded into the cache before every run, so every
worker process uses the same ones.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Engine

from nodeflow_app import routes
from nodeflow_app.contract import CONVERSATION
from nodeflow_app.runs.launcher import RunBusy, RunLauncher, run_launcher
from nodeflow_app.runtime.cache import OutputCache
from nodeflow_app.runtime.graph import GraphInvalid
from nodeflow_app.runtime.plan import Plan
from nodeflow_app.runtime.run import Run
from nodeflow_app.store.db import process_wide
from nodeflow_app.store.graphs import GraphStore


class RunRefused(ValueError):
    """A test run, pin or lookup that cannot be done; the message says why (for a toast or an inline error)."""


class RunService:
    """Re-runs, runs to a node, pins and run history of stored graphs."""

    def __init__(self, engine_or_url: Engine | str | None = None, *, launcher: RunLauncher | None = None,
                 **launcher_options: Any):
        self._owns_launcher = launcher is None
        self.launcher = launcher if launcher is not None else RunLauncher(engine_or_url, **launcher_options)
        self.engine = self.launcher.engine
        self.graphs, self.pins, self.runs = GraphStore(self.engine), self.launcher.pins, self.launcher.store
        self.registry, self.caches = self.launcher.registry, self.launcher.caches

    def close(self) -> None:
        if self._owns_launcher:
            self.launcher.close()

    # -- runs ------------------------------------------------------------------------------------------

    def rerun(self, graph_id: str, payload: Any = None, *, trigger: str | None = None) -> Run:
        """A (not yet started) run of the whole graph from its trigger; only stale nodes will execute."""
        plan = self._plan(graph_id)
        trigger_id = trigger or self._trigger(graph_id, plan, self.launcher.triggers(plan))
        payload = payload if payload is not None else self.default_payload(graph_id, plan, trigger_id)
        with _refused():
            return self.launcher.start(plan, started_by="test", trigger=trigger_id, payload=payload, cache="reuse",
                                       graph_id=graph_id)

    def run_to(self, graph_id: str, node_id: str, payload: Any = None) -> Run:
        """A (not yet started) run of `node_id` and what it depends on; only stale nodes will execute."""
        plan = self._plan(graph_id)
        target = plan.nodes.get(node_id)
        if target is None:
            raise RunRefused(f"there is no node '{node_id}' in the saved graph")
        upstream = plan.ancestors(node_id) | {node_id}
        triggers = [t for t in self.launcher.triggers(plan) if t in upstream]
        if not triggers:
            raise RunRefused(f"no trigger leads to '{target.node.name}': wire it to a trigger first")
        trigger_id = self._trigger(graph_id, plan, triggers)
        payload = payload if payload is not None else self.default_payload(graph_id, plan, trigger_id)
        with _refused():
            return self.launcher.start(plan, started_by="test", trigger=trigger_id, payload=payload, cache="reuse",
                                       graph_id=graph_id, to_node=node_id)

    def default_payload(self, graph_id: str, plan: Plan, trigger_id: str) -> Any:
        """The last run's payload of that trigger, else the trigger's example payload (else None)."""
        found, payload = self.runs.last_payload(graph_id, trigger_id)
        if found:
            return payload
        return self.launcher.example_payload(plan, trigger_id)

    def stale(self, graph_id: str) -> set[str]:
        """Nodes a re-run would execute (the rest reuse cached or pinned outputs)."""
        plan = self._plan(graph_id)
        trigger_id = self._trigger(graph_id, plan, self.launcher.triggers(plan))
        payload = self.default_payload(graph_id, plan, trigger_id)
        return self.cache(graph_id).stale_nodes(plan, trigger_id, payload)

    def cache(self, graph_id: str) -> OutputCache:
        """The graph's output cache with the database's pins (what a test run reuses)."""
        return self.launcher.cache("reuse", graph_id)

    # -- history ---------------------------------------------------------------------------------------

    def list_runs(self, graph_id: str, limit: int = 50) -> list[dict[str, Any]]:
        return self.runs.list_runs(graph_id, limit)

    def get_run(self, run_id: str) -> dict[str, Any] | None:
        return self.runs.get_run(run_id)

    def parent_link(self, run: dict[str, Any]) -> dict[str, str]:
        """For a run an Execute Graph node started: {label: "started by <graph> run ab12cd", url}; else {}."""
        parent_id = run.get("parent_run_id")
        parent = self.runs.get_run(parent_id) if parent_id else None
        if parent is None:
            return {}
        stored = self.graphs.get(parent["graph_id"])
        name = stored.name if stored is not None else parent["graph_id"]
        return {"label": f"started by {name} run {parent_id[:6]}", "url": routes.run_url(parent["graph_id"], parent_id)}

    def child_links(self, run_id: str) -> dict[str, dict[str, str]]:
        """Per node of `run_id` that called a graph: its latest child run {url, count} (a loop may call it often)."""
        links: dict[str, dict[str, str]] = {}
        for child in self.runs.child_runs(run_id):
            count = int(links.get(child["parent_node_id"], {}).get("count", "0")) + 1
            links[child["parent_node_id"]] = {"url": routes.run_url(child["graph_id"], child["id"]), "count": str(count)}
        return links

    # -- controls (any run, wherever it executes) ------------------------------------------------------

    def stop(self, run_id: str) -> bool:
        """Stop a run executing here or in another process; a paused one is cancelled."""
        return self.launcher.stop(run_id)

    def delete_graph(self, graph_id: str) -> None:
        """Delete a graph (its versions, chats and live addresses go with it) and stop its runs that are not over:
        a paused one would otherwise go on when its Wait is due, or stay answerable, for a graph that is gone.
        GraphNotFound when there is no such graph."""
        for run_id in self.runs.open_runs(graph_id):
            self.launcher.stop(run_id)
        self.graphs.delete(graph_id)

    def answer(self, run_id: str, node_id: str, decision: str, note: str | None = None,
               who: str | None = None) -> Run | None:
        """Answer a paused node's approval card: None when a live run took the answer, else the restored
        run to drive with `run.resume(node_id, payload)` (see `approval_payload`)."""
        stored = self.runs.get_run(run_id)
        if stored is None:
            raise RunRefused(f"there is no run '{run_id}'")
        if CONVERSATION in (stored.get("context") or {}):  # answered here, the chat's message stayed paused
            raise RunRefused(f"run {run_id[:8]} answers a chat message: answer its card in the chat")
        node = next((n for n in stored["nodes"] if n["node_id"] == node_id and n["status"] == "paused"), None)
        if node is None or not node.get("wait"):
            raise RunRefused(f"node '{node_id}' of run {run_id[:8]} is not waiting for an answer")
        options = node["wait"].get("options") or []
        if options and decision not in options:
            raise RunRefused(f"answer one of {', '.join(options)}, not {decision!r}")
        try:
            return self.launcher.answer(run_id, node_id, approval_payload(decision, note, who))
        except (RunBusy, LookupError) as error:
            raise RunRefused(str(error)) from None

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
            return self.launcher.plan(stored.graph)

    def _trigger(self, graph_id: str, plan: Plan, candidates: list[str]) -> str:
        """The trigger the latest run started at when it is a candidate, else the first candidate."""
        if not candidates:
            raise RunRefused("add a trigger (e.g. Chat Start or Manual Trigger) to run this graph")
        if len(candidates) > 1:
            latest = self.runs.list_runs(graph_id, limit=1)
            if latest and latest[0]["trigger_id"] in candidates:
                return latest[0]["trigger_id"]
        return candidates[0]


def approval_payload(decision: str, note: str | None, who: str | None) -> dict[str, Any]:
    """What a person's answer to a paused node carries (the chat's approval cards send the same)."""
    return {"decision": decision, "note": note, "by": who, "at": time.time()}


@contextmanager
def _refused() -> Iterator[None]:
    """An invalid graph refuses the run with its issues (the editor shows them too)."""
    try:
        yield
    except GraphInvalid as error:
        raise RunRefused("; ".join(issue.message for issue in error.issues)) from None


def _process_run_service() -> RunService:
    return RunService(launcher=run_launcher())


# The process's RunService (on the process's launcher), opened on first use (never at import time).
run_service = process_wide(_process_run_service)
