"""JSONata evaluation (the `jsonata-python` port), as the evaluator process (worker.py) runs it; errors as NodeError.

The port's time box stops a runaway expression; its depth limit is left off: its counter drifts on objects of
several keys (jsonata-python 0.7.1 leaves `is_parallel_call` set), while Python's recursion limit stops deep
nesting. Regex literals are time-limited.
"""

import sys
from typing import Any

_RECURSION_LIMIT = sys.getrecursionlimit()
import jsonata  # noqa: E402 - sets the process-wide recursion limit to 10,000 when imported
from jsonata.jexception import JException  # noqa: E402

sys.setrecursionlimit(_RECURSION_LIMIT)  # the interpreter's own limit stays: it bounds a recursive expression

from nodes.data._timed_regex import compile_pattern  # noqa: E402
from nodeflow_app.contract import NodeError  # noqa: E402


def transform(expression: str, value: Any, time_limit_ms: int) -> Any:
    """The expression's result on `value` (JSONata's undefined is None)."""
    compiled = _compile(expression, time_limit_ms)
    return _plain(_evaluate(compiled, expression, value, None, time_limit_ms))


def transform_each(expression: str, items: list[Any], time_limit_ms: int) -> list[Any]:
    """The expression's result per item, `$index` bound to the item's position."""
    compiled = _compile(expression, time_limit_ms)
    results = []
    for index, item in enumerate(items):
        try:
            results.append(_plain(_evaluate(compiled, expression, item, {"index": index}, time_limit_ms)))
        except NodeError as error:
            raise NodeError(f"item {index}: {error}") from None
    return results


def _compile(expression: str, time_limit_ms: int) -> jsonata.Jsonata:
    """Parse once; the time box starts here and covers every evaluation of this node's call."""
    try:
        return jsonata.Jsonata(expression, regex_engine=_timed_engine, timeout=time_limit_ms)
    except JException as error:
        raise NodeError(_describe(error, expression, time_limit_ms)) from None


def _evaluate(compiled: jsonata.Jsonata, expression: str, value: Any, bindings: dict[str, Any] | None,
              time_limit_ms: int) -> Any:
    try:
        return compiled.evaluate(value, bindings)
    except (NodeError, MemoryError):
        raise
    except JException as error:
        raise NodeError(_describe(error, expression, time_limit_ms)) from None
    except RecursionError:
        raise NodeError("expression error: it nests too deeply (endless recursion?)") from None
    except Exception as error:  # noqa: BLE001 - the port raises plain Python errors for some bad arguments
        raise NodeError(f"expression error: {type(error).__name__}: {error}") from None


def _describe(error: JException, expression: str, time_limit_ms: int) -> str:
    """`expression error at position 14 (S0203): Expected ] ...; near: '...' <- here`.

    Some runtime errors of the port carry no position (-1); then the token they are about is named.
    """
    if error.error == "D1012":
        return f"expression ran longer than {time_limit_ms / 1000:g} s and was stopped"
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
