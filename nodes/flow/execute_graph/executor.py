"""Execute Graph: run another stored graph through the app's graph runner (`ctx.services["graph_runner"]`).

The node knows no store and no launcher: whoever starts a run and wants sub-graphs puts a runner in
the run's services (nodeflow_app/runs/graph_runner.py is the app's). The runner checks for calls in a
circle, starts and records the child run, and returns its final value.
"""

from typing import Any, Callable, Protocol

from nodeflow_app.contract import ExecutionResult, FlowContext, NodeError

GRAPH_RUNNER = "graph_runner"  # the service key


class GraphRunner(Protocol):
    """What this node needs from the app; raises NodeError (refused call, failed child) with a reason."""

    async def run_graph(self, graph_id: str, payload: Any, *, parent_run_id: str, parent_node_id: str,
                        on_start: Callable[[str], None] | None = None) -> dict[str, Any]:
        """Run `graph_id` with `payload`; returns `{run_id, output}` (the child run's id, its final value).

        `on_start(run_id)` is called once the child run exists, before it runs."""
        ...


class ExecuteGraphExecutor:
    node_type = "execute-graph"

    async def execute(self, data: dict[str, Any], inputs: dict[str, Any], ctx: FlowContext) -> ExecutionResult:
        graph_id = str(data.get("graph") or "").strip()
        if not graph_id:
            raise NodeError("parameter 'graph' is empty; give the id of the stored graph to run")
        runner: GraphRunner | None = ctx.services.get(GRAPH_RUNNER)
        if runner is None:
            raise NodeError("this run was started without a graph runner, so it cannot run other graphs "
                            "(start it from the app, or give services['graph_runner'])")
        def started(run_id: str) -> None:  # the step links the child run while it runs, and if it fails
            if ctx.runtime is not None:
                ctx.runtime.emit(ctx.event("progress", message=f"running graph {graph_id} (run {run_id})",
                                           child_run_id=run_id, graph_id=graph_id))

        child = await runner.run_graph(graph_id, inputs.get("input"), parent_run_id=ctx.run_id,
                                       parent_node_id=ctx.node_id, on_start=started)
        event = ctx.event("progress", message=f"ran graph {graph_id} (run {child['run_id']})",
                          child_run_id=child["run_id"], graph_id=graph_id)
        return ExecutionResult(outputs={"output": child["output"]}, events=[event])


executor = ExecuteGraphExecutor()
