"""The `graph_runner` service: runs stored graphs for the Execute Graph node (nodes/flow/execute_graph).

How it plugs in: the RunLauncher puts `StoredGraphRunner(launcher, graphs).for_graph(graph_id).services()`
into every run it starts, and child runs start through the same launcher (`started_by="graph"`), so
they are persisted, stoppable and in the history under their own id, which the node reports in its
step (`child_run_id`). The runner remembers the chain of graphs that led to the current run, so a graph
that calls itself, directly or through others, is refused with the path (`A -> B -> A`); every child
run gets a runner one step longer. A called graph starts at its trigger for `graph` calls (the Manual
Trigger's definition lists it), else at its only trigger.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable

from nodeflow_app.contract import NodeError
from nodeflow_app.runtime.graph import GraphInvalid
from nodeflow_app.runtime.run import Run
from nodeflow_app.store.graphs import GraphStore

SERVICE = "graph_runner"  # the key Execute Graph reads from ctx.services
STARTED_BY = "graph"  # child runs are started by a calling graph
MAX_DEPTH = 20


class StoredGraphRunner:
    """Runs graphs of one GraphStore, on behalf of a run whose chain of calling graphs is `path`."""

    def __init__(self, launcher: Any, graphs: GraphStore, path: tuple[tuple[str, str], ...] = ()):
        self.launcher, self.graphs, self.path = launcher, graphs, path  # launcher: nodeflow_app.runs.launcher

    def for_graph(self, graph_id: str, name: str | None = None) -> "StoredGraphRunner":
        """The runner a run of `graph_id` gets (the path one graph longer)."""
        if name is None:
            stored = self.graphs.get(graph_id)
            name = stored.name if stored is not None else graph_id
        return StoredGraphRunner(self.launcher, self.graphs, path=(*self.path, (graph_id, name)))

    def services(self) -> dict[str, Any]:
        return {SERVICE: self}

    async def run_graph(self, graph_id: str, payload: Any, *, parent_run_id: str, parent_node_id: str,
                        on_start: Callable[[str], None] | None = None) -> dict[str, Any]:
        stored = await asyncio.to_thread(self.graphs.get, graph_id)
        if stored is None or not await asyncio.to_thread(self._same_workspace, graph_id):
            raise NodeError(f"there is no graph '{graph_id}' in this workspace")
        if any(graph_id == known for known, _ in self.path):
            names = " -> ".join(name for _, name in (*self.path, (graph_id, stored.name)))
            raise NodeError(f"graph '{stored.name}' would call itself: {names}")
        if len(self.path) >= MAX_DEPTH:
            raise NodeError(f"graphs call each other more than {MAX_DEPTH} levels deep")
        child = self.for_graph(graph_id, stored.name)
        try:
            plan = await asyncio.to_thread(self.launcher.plan, stored.graph)
            called = self.launcher.triggers(plan, STARTED_BY)
            run = self.launcher.start(plan, started_by=STARTED_BY, trigger=called[0] if len(called) == 1 else None,
                                      payload=payload, graph_id=graph_id, services=child.services(),
                                      parent=(parent_run_id, parent_node_id))
        except GraphInvalid as error:
            problems = "; ".join(issue.message for issue in error.issues)
            raise NodeError(f"graph '{stored.name}' cannot run: {problems}") from None
        if on_start is not None:
            on_start(run.run_id)
        await _finish(run)
        if run.status != "completed":
            what = ("asked for input; pausing inside a called graph is not supported" if run.status == "paused"
                    else f"{run.status}: {run.error}")
            raise NodeError(f"graph '{stored.name}' (run {run.run_id}) {what}")
        return {"run_id": run.run_id, "output": final_output(run)}


    def _same_workspace(self, graph_id: str) -> bool:
        """A graph of a workspace calls only graphs of that workspace (another one's id is "not found").
        A graph in none (a file the CLI runs, a graph stored by a script) may call any: its runner has the database."""
        caller = self.graphs.workspace_of(self.path[-1][0]) if self.path else None
        return caller is None or self.graphs.workspace_of(graph_id) == caller


async def _finish(run: Run) -> None:
    """Drive the child run to its end; a cancelled parent cancels it."""
    try:
        async for _ in run.events():
            pass
    except asyncio.CancelledError:
        run.cancel()
        raise


def final_nodes(run: Run) -> list[str]:
    """The completed top-level steps nothing follows: where the run ended."""
    return [node_id for node_id, pn in run.plan.nodes.items()
            if pn.node.parentId is None and not pn.flow_out and run.records.get(node_id)
            and run.records[node_id].status == "completed"]


def final_output(run: Run) -> Any:
    """The value of the step that ends the graph; an object by step name when several steps end it."""
    ends = final_nodes(run)
    if len(ends) == 1:
        return run.output_of(ends[0])
    return {run.plan.nodes[node_id].node.name: run.output_of(node_id) for node_id in ends}
