"""For Each: run the container's children once per list item (bounded concurrency), results in item order.

Each finished item is checkpointed: when the run goes on after its process died, finished items are not
run again.
"""

import asyncio
from typing import Any

from nodes._helpers import container_sinks, items_at, sink_result, to_number
from nodeflow_app.contract import ExecutionResult, FlowContext, NodeError

MAX_CONCURRENCY = 32


class ForEachExecutor:
    node_type = "for-each"

    async def execute(self, data: dict[str, Any], inputs: dict[str, Any], ctx: FlowContext) -> ExecutionResult:
        items = items_at(inputs.get("input"), data.get("field") or "")
        concurrency = _concurrency(data.get("concurrency", 1))
        keep_going = bool(data.get("continue_on_item_error"))
        runtime = ctx.runtime
        children = runtime.children(ctx.node_id)
        if not children:
            raise NodeError("this For Each has no steps inside it; place the nodes to repeat inside the container")
        sinks = container_sinks(runtime, children)
        results: list[Any] = [None] * len(items)
        finished = _finished(ctx.checkpoint, len(items))
        for index, result in finished.items():
            results[index] = result
        semaphore = asyncio.Semaphore(concurrency)
        done = len(finished)

        async def run_item(index: int, item: Any) -> None:
            nonlocal done
            async with semaphore:
                try:
                    outputs = await runtime.run_subgraph(children, item if isinstance(item, dict)
                                                         else {"value": item, "index": index})
                    results[index] = sink_result(outputs, sinks)
                except NodeError as error:
                    if not keep_going:
                        raise NodeError(f"item {index}: {error}") from None
                    results[index] = {"error": str(error)}
            done += 1
            finished[index] = results[index]
            runtime.checkpoint(ctx.node_id, {"count": len(items), "finished": {str(i): r for i, r in finished.items()}})
            runtime.emit(ctx.event("progress", done=done, total=len(items)))

        tasks = [asyncio.ensure_future(run_item(index, item)) for index, item in enumerate(items)
                 if index not in finished]
        try:
            await asyncio.gather(*tasks)
        except BaseException:  # fail fast: the first failing item (or a cancel) stops the others
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        return ExecutionResult(outputs={"output": {"results": results, "count": len(results)}})


def _finished(checkpoint: Any, count: int) -> dict[int, Any]:
    """Results of items a previous attempt finished (its checkpoint), when it was over the same number of items."""
    if not isinstance(checkpoint, dict) or checkpoint.get("count") != count:
        return {}
    return {int(i): result for i, result in (checkpoint.get("finished") or {}).items()}


def _concurrency(raw: Any) -> int:
    number = to_number(raw)
    if number is None or not 1 <= number <= MAX_CONCURRENCY or number != int(number):
        raise NodeError(f"concurrency must be a whole number from 1 to {MAX_CONCURRENCY}, got {raw!r}")
    return int(number)


executor = ForEachExecutor()
