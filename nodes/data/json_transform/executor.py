"""JSON Transform: a JSONata expression (the `jsonata-python` port) on the input, or on each item of a list.

The evaluation runs in a worker thread so a large input does not stall the other branches' events;
JSONata's own time box and depth limit stop a runaway expression, and its regex literals are time-limited.
"""

import asyncio
import sys
from typing import Any

_RECURSION_LIMIT = sys.getrecursionlimit()
import jsonata  # noqa: E402 - sets the process-wide recursion limit to 10,000 when imported
from jsonata.jexception import JException  # noqa: E402

sys.setrecursionlimit(_RECURSION_LIMIT)  # the process's own limit stays (other code relies on it)

from nodes._helpers import items_at
from nodes.data._timed_regex import compile_pattern
from nodeflow_app.contract import ExecutionResult, FlowContext, NodeError

# The port's time box; its depth limit is left off: its counter drifts on objects of several keys
# (jsonata-python 0.7.1 leaves `is_parallel_call` set), while Python's recursion limit stops deep nesting.
TIME_LIMIT_MS = 10_000


class JsonTransformExecutor:
    node_type = "json-transform"

    async def execute(self, data: dict[str, Any], inputs: dict[str, Any], ctx: FlowContext) -> ExecutionResult:
        expression = data.get("expression")
        if not isinstance(expression, str) or not expression.strip():
            raise NodeError("the expression is empty; `$` outputs the input unchanged")
        value = inputs.get("input")
        apply_to = data.get("apply_to") or "input"
        if apply_to == "input":
            result = await asyncio.to_thread(transform, expression, value)
        elif apply_to == "each_item":
            items = items_at(value, data.get("field") or "")
            result = await asyncio.to_thread(transform_each, expression, items)
        else:
            raise NodeError(f"apply to must be 'input' or 'each_item', got {apply_to!r}")
        return ExecutionResult(outputs={"output": result})


def transform(expression: str, value: Any) -> Any:
    """The expression's result on `value` (JSONata's undefined is None)."""
    compiled = _compile(expression)
    return _plain(_evaluate(compiled, expression, value, None))


def transform_each(expression: str, items: list[Any]) -> list[Any]:
    """The expression's result per item, `$index` bound to the item's position."""
    compiled = _compile(expression)
    results = []
    for index, item in enumerate(items):
        try:
            results.append(_plain(_evaluate(compiled, expression, item, {"index": index})))
        except NodeError as error:
            raise NodeError(f"item {index}: {error}") from None
    return results


def _compile(expression: str) -> jsonata.Jsonata:
    """Parse once; the time box starts here and covers every evaluation of this node's call."""
    try:
        return jsonata.Jsonata(expression, regex_engine=_timed_engine, timeout=TIME_LIMIT_MS)
    except JException as error:
        raise NodeError(_describe(error, expression)) from None


def _evaluate(compiled: jsonata.Jsonata, expression: str, value: Any, bindings: dict[str, Any] | None) -> Any:
    try:
        return compiled.evaluate(value, bindings)
    except NodeError:
        raise
    except JException as error:
        raise NodeError(_describe(error, expression)) from None
    except RecursionError:
        raise NodeError("expression error: it nests too deeply (endless recursion?)") from None
    except Exception as error:  # noqa: BLE001 - the port raises plain Python errors for some bad arguments
        raise NodeError(f"expression error: {type(error).__name__}: {error}") from None


def _describe(error: JException, expression: str) -> str:
    """`expression error at position 14 (S0203): Expected ] ...; near: '...' <- here`.

    Some runtime errors of the port carry no position (-1); then the token they are about is named.
    """
    if error.error == "D1012":
        return f"expression ran longer than {TIME_LIMIT_MS / 1000:g} s and was stopped"
    message, position, token = str(error), getattr(error, "location", -1), getattr(error, "current", None)
    if isinstance(position, int) and position >= 0:
        before = expression[max(0, position - 30):position]
        return f"expression error at position {position} ({error.error}): {message}; near: {before!r} <- here"
    if isinstance(token, str) and token and token in expression:
        return f"expression error at {token!r} (position {expression.index(token)}, {error.error}): {message}"
    return f"expression error ({error.error}): {message}"


def _timed_engine(pattern: str, flags: Any) -> Any:
    """JSONata's regex literals (/.../i) compiled with a time limit."""
    return compile_pattern(pattern, ignore_case=flags.case_insensitive, multiline=flags.multiline)


def _plain(value: Any) -> Any:
    """JSONata's result as plain JSON values (its sequences are list subclasses; a function is not data)."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, list):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    raise NodeError(f"the expression returns a {type(value).__name__}, not data (a function left uncalled?)")


executor = JsonTransformExecutor()
