"""The `graph_runner` service: runs stored graphs for the Execute Graph node (nodes/flow/execute_graph).

How it plugs in: a launcher that wants its runs to call other graphs passes
`services=StoredGraphRunner(graphs, registry, hooks=...).for_graph(graph_id).services()` to
`start_run`. The runner remembers the chain of graphs that led to the current run, so a graph that
calls itself, directly or through others, is refused with the path (`A -> B -> A`); every child run
gets a runner one step longer. With `hooks` (e.g. `RunStore.hooks`), child runs are persisted like any
run, so they are in the history under their own id, which the node reports in its step (`child_run_id`).
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable

from nodeflow_app.contract import NodeError
from nodeflow_app.runtime.engine import start_run
from nodeflow_app.runtime.graph import GraphInvalid
from nodeflow_app.runtime.run import Run, RunHooks
from nodeflow_app.store.graphs import GraphStore

SERVICE = "graph_runner"  # the key Execute Graph reads from ctx.services
PREFERRED_TRIGGER = "manual-trigger"  # the trigger a called graph starts at when it has several
MAX_DEPTH = 20


class StoredGraphRunner:
    """Runs graphs of one GraphStore, on behalf of a run whose chain of calling graphs is `path`."""

    def __init__(self, graphs: GraphStore, registry: Any, *, hooks: Callable[[], RunHooks | None] | None = None,
                 path: tuple[tuple[str, str], ...] = ()):
        self.graphs, self.registry, self.hooks, self.path = graphs, registry, hooks, path

    def for_graph(self, graph_id: str, name: str | None = None) -> "StoredGraphRunner":
        """The runner a run of `graph_id` gets (the path one graph longer)."""
        if name is None:
            stored = self.graphs.get(graph_id)
            name = stored.name if stored is not None else graph_id
        return StoredGraphRunner(self.graphs, self.registry, hooks=self.hooks, path=(*self.path, (graph_id, name)))

    def services(self) -> dict[str, Any]:
        return {SERVICE: self}

    async def run_graph(self, graph_id: str, payload: Any, *, parent_run_id: str,
                        parent_node_id: str) -> dict[str, Any]:
        stored = await asyncio.to_thread(self.graphs.get, graph_id)
        if stored is None:
            raise NodeError(f"there is no graph '{graph_id}' in this workspace")
        if any(graph_id == known for known, _ in self.path):
            names = " -> ".join(name for _, name in (*self.path, (graph_id, stored.name)))
            raise NodeError(f"graph '{stored.name}' would call itself: {names}")
        if len(self.path) >= MAX_DEPTH:
            raise NodeError(f"graphs call each other more than {MAX_DEPTH} levels deep")
        child = self.for_graph(graph_id, stored.name)
        try:
            run = start_run(stored.graph, self.registry, trigger=_trigger(stored.graph), payload=payload,
                            hooks=self.hooks() if self.hooks else None, services=child.services())
        except GraphInvalid as error:
            problems = "; ".join(issue.message for issue in error.issues)
            raise NodeError(f"graph '{stored.name}' cannot run: {problems}") from None
        await _finish(run)
        if run.status != "completed":
            what = ("asked for input; pausing inside a called graph is not supported" if run.status == "paused"
                    else f"{run.status}: {run.error}")
            raise NodeError(f"graph '{stored.name}' (run {run.run_id}) {what}")
        return {"run_id": run.run_id, "output": final_output(run)}


async def _finish(run: Run) -> None:
    """Drive the child run to its end; a cancelled parent cancels it."""
    try:
        async for _ in run.events():
            pass
    except asyncio.CancelledError:
        run.cancel()
        raise


def _trigger(graph: dict[str, Any]) -> str | None:
    """The Manual Trigger when the graph has one (else None: start_run takes the only trigger)."""
    found = [n.get("id") for n in graph.get("nodes") or () if n.get("type") == PREFERRED_TRIGGER]
    return found[0] if len(found) == 1 else None


def final_output(run: Run) -> Any:
    """The value of the step that ends the graph; an object by step name when several steps end it."""
    ends = [node_id for node_id, pn in run.plan.nodes.items()
            if pn.node.parentId is None and not pn.flow_out and run.records.get(node_id)
            and run.records[node_id].status == "completed"]
    if len(ends) == 1:
        return run.output_of(ends[0])
    return {run.plan.nodes[node_id].node.name: run.output_of(node_id) for node_id in ends}
