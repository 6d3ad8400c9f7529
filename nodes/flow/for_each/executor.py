"""For Each: run the container's children once per list item (a window of `concurrency` workers), results in
item order.

Finished items are checkpointed (at most every CHECKPOINT_EVERY_S): when the run goes on after its process
died, finished items are not run again.
"""

import asyncio
import math
import time
from typing import Any, Callable

from nodes._helpers import container_sinks, items_at, sink_result, to_number
from nodeflow_app.contract import ExecutionResult, FlowContext, NodeError

MAX_CONCURRENCY = 32
CHECKPOINT_EVERY_S = 0.05  # the run store writes every 50 ms anyway


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
        done = len(finished)
        checkpoints = _Checkpoints(lambda value: runtime.checkpoint(ctx.node_id, value), len(items), finished)

        async def run_item(index: int, item: Any) -> None:
            nonlocal done
            try:
                outputs = await runtime.run_subgraph(children, item if isinstance(item, dict)
                                                     else {"value": item, "index": index})
                results[index] = sink_result(outputs, sinks)
            except NodeError as error:
                if not keep_going:
                    raise NodeError(f"item {index}: {error}") from None
                results[index] = {"error": str(error)}
            done += 1
            checkpoints.add(index, results[index])
            runtime.emit(ctx.event("progress", done=done, total=len(items)))

        # A window of `concurrency` workers takes the items in turn: a task per item made them all at once
        # (60,000 items: 96 MiB traced at peak, 43 MiB with the window).
        waiting = ((index, item) for index, item in enumerate(items) if index not in finished)

        async def worker() -> None:
            for index, item in waiting:
                await run_item(index, item)

        tasks = [asyncio.ensure_future(worker()) for _ in range(min(concurrency, len(items) - len(finished)))]
        try:
            await asyncio.gather(*tasks)
        except BaseException:  # fail fast: the first failing item (or a cancel) stops the others
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        finally:
            checkpoints.close()
        return ExecutionResult(outputs={"output": {"results": results, "count": len(results)}})


class _Checkpoints:
    """Saves the finished items' results at most every CHECKPOINT_EVERY_S, and once more after the last change.
    Each save copies them (the store may write them from another thread): saving after every item made a long
    list quadratic (20,000 items spent over a minute copying)."""

    def __init__(self, save: Callable[[Any], None], count: int, finished: dict[int, Any]) -> None:
        self._save, self._count = save, count
        self._finished = {str(index): result for index, result in finished.items()}
        self._last = -math.inf  # time.monotonic() of the last save
        self._pending: asyncio.TimerHandle | None = None

    def add(self, index: int, result: Any) -> None:
        self._finished[str(index)] = result
        if self._pending is not None:
            return
        wait = self._last + CHECKPOINT_EVERY_S - time.monotonic()
        if wait <= 0:
            self._write()
        else:
            self._pending = asyncio.get_running_loop().call_later(wait, self._write)

    def close(self) -> None:
        """Save what is not saved yet (a cancelled node keeps its finished items too)."""
        if self._pending is not None:
            self._pending.cancel()
            self._write()

    def _write(self) -> None:
        self._pending = None
        self._last = time.monotonic()
        self._save({"count": self._count, "finished": dict(self._finished)})


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
