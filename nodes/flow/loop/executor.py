"""Loop: run the container's children pass after pass, N times or until a condition on the last result holds."""

from typing import Any

from nodes._helpers import compare_async, container_sinks, get_path, sink_result, to_number, to_text
from nodeflow_app.contract import ExecutionResult, FlowContext, NodeError

MAX_PASSES = 10000


class LoopExecutor:
    node_type = "loop"

    async def execute(self, data: dict[str, Any], inputs: dict[str, Any], ctx: FlowContext) -> ExecutionResult:
        until = _mode(data.get("mode") or "times") == "until"
        limit = _whole(data, "max_iterations" if until else "times")
        runtime = ctx.runtime
        children = runtime.children(ctx.node_id)
        if not children:
            raise NodeError("this Loop has no steps inside it; place the nodes to repeat inside the container")
        sinks = container_sinks(runtime, children)
        feed_back = bool(data.get("feed_back", True))
        start = inputs.get("input")
        results: list[Any] = []
        stopped = "max" if until else "times"
        for index in range(limit):
            given = results[-1] if feed_back and results else start
            try:
                result = sink_result(await runtime.run_subgraph(children, given), sinks)
            except NodeError as error:
                raise NodeError(f"pass {index}: {error}") from None
            results.append(result)
            done = until and await _holds(data, result, index)
            runtime.emit(ctx.event("progress", iteration=index, done=index + 1, total=None if until else limit,
                                   message=f"pass {index + 1}" + ("" if until else f" of {limit}")))
            if done:
                stopped = "condition"
                break
        if stopped == "max" and data.get("fail_at_max", True):
            raise NodeError(f"the condition did not hold after {limit} passes (Maximum passes); the last result "
                            f"was {_short(results[-1])}")
        return ExecutionResult(outputs={"output": {"results": results, "count": len(results),
                                                   "last": results[-1] if results else None, "stopped": stopped}})


def _mode(mode: Any) -> str:
    if mode not in ("times", "until"):
        raise NodeError(f"parameter 'mode' must be 'times' or 'until', got {mode!r}")
    return mode


def _whole(data: dict[str, Any], name: str) -> int:
    raw = data.get(name)
    number = to_number(raw)
    if number is None or not 1 <= number <= MAX_PASSES or number != int(number):
        raise NodeError(f"parameter {name!r} must be a whole number from 1 to {MAX_PASSES}, got {raw!r}")
    return int(number)


async def _holds(data: dict[str, Any], result: Any, index: int) -> bool:
    field = data.get("field") or ""
    try:  # a regular expression is searched off the event loop
        return await compare_async(get_path(result, field), data.get("operator") or "equals", data.get("value", ""),
                       case_sensitive=bool(data.get("case_sensitive")))
    except NodeError as error:
        where = f"field {field!r} of " if field else ""
        raise NodeError(f"pass {index}: the condition on {where}the result: {error}") from None


def _short(value: Any) -> str:
    text = to_text(value)
    return repr(text if len(text) <= 80 else text[:79] + "…")


executor = LoopExecutor()
