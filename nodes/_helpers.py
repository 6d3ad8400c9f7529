"""Small pure helpers shared by node executors: paths into JSON values, text, numbers, comparisons,
regular expressions with a time limit.

Stdlib and the `regex` package only, so any executor (or a plugin) can import it without an SDK.
"""

from __future__ import annotations

import asyncio
import json
import math
import operator as operator_module
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, TypeVar

import regex

from nodeflow_app.contract import NodeError
from nodeflow_app.value_helpers import MISSING, to_number  # noqa: F401 - node folders import them from here



# 1. Paths ---------------------------------------------------------------------------------------

# One step of a path: `.name`, `name` at the start, `[0]`, `[-1]`, `["any key"]` or `['any key']`.
_STEP = re.compile(r"""\.?([^.\[\]]+)|\[\s*(-?\d+)\s*\]|\[\s*"([^"]*)"\s*\]|\[\s*'([^']*)'\s*\]""")


def parse_path(path: str) -> list[str | int]:
    """Split `a.b[0]["c d"]` into `["a", "b", 0, "c d"]`; an empty path is `[]` (the whole value).

    An expression that is a path's whole value keeps its type: a whole number is read as its text (`3`), null as
    an empty path, anything else is refused by name."""
    steps: list[str | int] = []
    if not isinstance(path, str):
        if path is not None and (type(path) is not int):
            raise NodeError(f"a path must be text, not {type(path).__name__} {to_text(path)[:80]!r}")
        path = "" if path is None else str(path)
    text = path.strip()
    if "." not in text and "[" not in text and "]" not in text:  # one plain name (most fields): its own step
        return [text] if text else []
    position = 0
    while position < len(text):
        match = _STEP.match(text, position)
        if match is None or (match.group(1) is not None and position > 0 and text[position] != "."):
            raise NodeError(f"invalid path {path!r} at position {position}: expected .name, [index] or [\"key\"]")
        name, index, double, single = match.groups()
        if name is not None:
            steps.append(name.strip())
        elif index is not None:
            steps.append(int(index))
        else:
            steps.append(double if double is not None else single)
        position = match.end()
    return steps


def get_path(value: Any, path: str | list[str | int], default: Any = MISSING) -> Any:
    """The value at `path` inside `value`, or `default` (the `MISSING` sentinel unless given)."""
    steps = path if isinstance(path, list) else parse_path(path)
    current = value
    for step in steps:
        if isinstance(current, dict):
            key = step if step in current else str(step)
            if key not in current:
                return default
            current = current[key]
        elif isinstance(current, (list, tuple)):
            index = step if isinstance(step, int) else _int_or_none(step)
            if index is None or not -len(current) <= index < len(current):
                return default
            current = current[index]
        else:
            return default
    return current


def path_getter(path: str) -> Callable[[Any], Any]:
    """`get_path(value, path)` as a function, the path parsed once (list nodes call it per item).

    A one-name path into an object, the common case, is a plain dict lookup.
    """
    steps = parse_path(path)
    if not steps:
        return lambda value: value
    if len(steps) == 1 and isinstance(steps[0], str):
        key = steps[0]
        return lambda value: value.get(key, MISSING) if type(value) is dict else get_path(value, steps)
    return lambda value: get_path(value, steps)


def require_path(value: Any, path: str) -> Any:
    """Like `get_path`, but a missing path is a NodeError naming it."""
    found = get_path(value, path)
    if found is MISSING:
        raise NodeError(f"nothing at path {path!r}")
    return found


def set_path(target: dict[str, Any], path: str, value: Any) -> None:
    """Set `value` at `path` inside `target`, creating objects for missing steps (`user.name`)."""
    steps = parse_path(path)
    if not steps:
        raise NodeError("a field name cannot be empty")
    current: Any = target
    for depth, step in enumerate(steps):
        last = depth == len(steps) - 1
        if isinstance(current, dict):
            key = str(step)
            if last:
                current[key] = value
            else:
                if not isinstance(current.get(key), (dict, list)):
                    if key in current and current[key] is not None:
                        shown = _shown_path(steps[: depth + 1])
                        raise NodeError(f"cannot set {path!r}: {shown!r} is a {type(current[key]).__name__}, "
                                        "not an object")
                    current[key] = {}
                current = current[key]
        elif isinstance(current, list) and isinstance(step, int) and -len(current) <= step < len(current):
            if last:
                current[step] = value
            else:
                current = current[step]
        else:
            raise NodeError(f"cannot set {path!r}: {_shown_path(steps[:depth])!r} has no item {step!r}")


def _shown_path(steps: list[str | int]) -> str:
    return "".join(f"[{s}]" if isinstance(s, int) else f".{s}" for s in steps).lstrip(".")


def _int_or_none(text: Any) -> int | None:
    try:
        return int(text)
    except (TypeError, ValueError):
        return None


def key_value_pairs(value: Any, label: str) -> list[tuple[str, Any]]:
    """(name, value) pairs of a key_value parameter: an object, or rows of {name (or key), value}.

    Rows with neither a name nor a value (blank rows left in the editor) are skipped.
    """
    if value is None:
        return []
    if isinstance(value, dict):
        return [(str(name), item) for name, item in value.items()]
    if not isinstance(value, list):
        raise NodeError(f"{label} must be a list of name/value rows or an object, got {type(value).__name__}")
    pairs: list[tuple[str, Any]] = []
    for index, row in enumerate(value):
        if not isinstance(row, dict):
            raise NodeError(f"{label} row {index} must be an object with a name and a value")
        name, item = row.get("name", row.get("key")), row.get("value")
        if name in (None, "") and item in (None, ""):
            continue
        pairs.append(("" if name is None else str(name), item))
    return pairs


_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # RFC 9110's token


def header_problem(name: str, value: str) -> str | None:
    """Why HTTP cannot carry the header `name: value`, without quoting the value (it may be a secret), or None."""
    if not _HEADER_NAME.fullmatch(name):
        return "a header name is letters, digits and -, with no spaces or colons"
    if any(character in value for character in "\r\n\x00"):
        return "its value holds a line break, which a header cannot carry"
    if not value.isascii():
        return ("its value holds a character other than ASCII, which headers cannot carry (percent-encode it, or send "
                "it in the body)")
    return None


# 2. Text and numbers ----------------------------------------------------------------------------

def to_text(value: Any) -> str:
    """A value as text: strings stay themselves, `None`/missing is empty, the rest is compact JSON."""
    if isinstance(value, str):
        return value
    if value is None or value is MISSING:
        return ""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


_ESCAPES = re.compile(r"\\([nrt\\])")
_ESCAPED = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\"}


def unescape(text: str) -> str:
    r"""`\n`, `\t`, `\r` and `\\` typed in a one-line field (a separator) become the characters they name."""
    return _ESCAPES.sub(lambda match: _ESCAPED[match.group(1)], text)


def primary_text(value: Any) -> str:
    """SPEC 5 "Primary text": `message`, else `response`, else `text` of an object, else the value as JSON."""
    if isinstance(value, dict):
        for key in ("message", "response", "text"):
            if value.get(key) is not None:
                return to_text(value[key])
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False, default=str)




# 3. Comparisons (Conditional, Switch, Filter) ---------------------------------------------------

OPERATORS: tuple[str, ...] = (
    "equals", "not_equals", "contains", "not_contains", "starts_with", "ends_with",
    "gt", "gte", "lt", "lte", "is_empty", "is_not_empty", "regex",
)
_ORDERING = {"gt": operator_module.gt, "gte": operator_module.ge, "lt": operator_module.lt, "lte": operator_module.le}


def is_empty(value: Any) -> bool:
    """Missing, `None`, `""`, `[]` and `{}` are empty; `0` and `False` are values."""
    return value is MISSING or value is None or (isinstance(value, (str, list, tuple, dict)) and len(value) == 0)


def compare(actual: Any, operator: str, expected: Any, *, case_sensitive: bool = False) -> bool:
    """Whether `actual <operator> expected` holds. A MISSING `actual` is empty and fails every other test.

    Numbers compare numerically (numeric strings count); text compares case-insensitively
    unless `case_sensitive`. Raises NodeError for an unknown operator, a non-numeric side of
    gt/gte/lt/lte, or an invalid or too slow regular expression. In an executor, prefer
    `compare_async`: it keeps a slow regular expression off the event loop.
    """
    return condition(operator, expected, case_sensitive=case_sensitive)(actual)


def condition(operator: str, expected: Any, *, case_sensitive: bool = False) -> Callable[[Any], bool]:
    """The test `actual -> compare(actual, operator, expected)`, its expected side prepared once.

    For nodes that test many items (Filter). The expected side is checked on first use, like
    `compare`: a bad number or regex does not fail a test whose actual value is missing.
    """
    if operator not in OPERATORS:
        raise NodeError(f"unknown operator {operator!r}; use one of: {', '.join(OPERATORS)}")
    if operator == "is_empty":
        return is_empty
    if operator == "is_not_empty":
        return lambda actual: not is_empty(actual)
    if operator in _ORDERING:
        return _ordering_test(operator, expected)
    if operator == "regex":
        pattern = _once(lambda: _compile(to_text(expected), case_sensitive))
        return lambda actual: actual is not MISSING and _search(pattern(), to_text(actual)) is not None
    if operator in ("equals", "not_equals"):
        equals = _equals_test(expected, case_sensitive)
        wanted = operator == "equals"
        return lambda actual: actual is not MISSING and equals(actual) == wanted
    if operator in ("contains", "not_contains"):
        wanted = operator == "contains"
        return lambda actual: actual is not MISSING and _contains(actual, expected, case_sensitive) == wanted
    affix = _fold(to_text(expected), case_sensitive)
    if operator == "starts_with":
        return lambda actual: actual is not MISSING and _fold(to_text(actual), case_sensitive).startswith(affix)
    return lambda actual: actual is not MISSING and _fold(to_text(actual), case_sensitive).endswith(affix)


def _once(make: Callable[[], Any]) -> Callable[[], Any]:
    """`make()` on the first call, the same value after (errors are raised each time, never cached)."""
    made: list[Any] = []

    def value() -> Any:
        if not made:
            made.append(make())
        return made[0]
    return value


def _ordering_test(operator: str, expected: Any) -> Callable[[Any], bool]:
    order = _ORDERING[operator]
    bound: float | None = None

    def ordered(actual: Any) -> bool:
        nonlocal bound
        if actual is MISSING:
            return False
        kind = type(actual)  # plain ints and non-NaN floats skip to_number (Filter runs this per item)
        left = actual if kind is int or (kind is float and actual == actual) else _number_for(operator, actual)
        if bound is None:
            bound = _number_for(operator, expected)
        return order(left, bound)
    return ordered


def _fold(text: str, case_sensitive: bool) -> str:
    return text if case_sensitive else text.casefold()


def _equals_test(expected: Any, case_sensitive: bool) -> Callable[[Any], bool]:
    """Numbers (numeric strings too) equal by value; anything else by its text."""
    right, folded = to_number(expected), _fold(to_text(expected), case_sensitive)

    def equals(actual: Any) -> bool:
        if right is not None:  # only a numeric expected side can make the numeric test apply
            left = to_number(actual)
            if left is not None:
                return left == right
        text = actual if type(actual) is str else to_text(actual)
        return (text if case_sensitive else text.casefold()) == folded
    return equals


def _contains(actual: Any, expected: Any, case_sensitive: bool) -> bool:
    """Lists contain an equal item, objects contain a key, text contains a substring."""
    if isinstance(actual, (list, tuple)):
        equals = _equals_test(expected, case_sensitive)
        return any(equals(item) for item in actual)
    if isinstance(actual, dict):
        wanted = _fold(to_text(expected), case_sensitive)
        return any(_fold(str(key), case_sensitive) == wanted for key in actual)
    return _fold(to_text(expected), case_sensitive) in _fold(to_text(actual), case_sensitive)


def _number_for(operator: str, value: Any) -> float:
    number = to_number(value)
    if number is None:
        raise NodeError(f"operator {operator!r} compares numbers, but {to_text(value)!r} is not a number")
    return number


async def compare_async(actual: Any, operator: str, expected: Any, *, case_sensitive: bool = False) -> bool:
    """`compare`, with a regular expression searched in a worker thread (see `regex_search_async`)."""
    if operator == "regex" and actual is not MISSING:
        return await regex_search_async(to_text(expected), to_text(actual), case_sensitive=case_sensitive) is not None
    return compare(actual, operator, expected, case_sensitive=case_sensitive)


# 4. Regular expressions with a time limit -------------------------------------------------------
#
# A pattern like (a|a)*$ backtracks exponentially: Python's `re` can block the process for minutes and
# nothing can interrupt it. The `regex` package stops a search after a time limit, and releases the GIL
# while it searches, so in a worker thread it leaves the event loop free and the node's timeout can end
# the wait (the search itself then stops at its own limit).

REGEX_TIME_LIMIT = 1.0  # seconds one search may take on one text
_REGEX_THREADS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="nodeflow-regex")  # never starves to_thread


def regex_search(pattern: str, text: str, *, case_sensitive: bool = True,
                 time_limit: float = REGEX_TIME_LIMIT) -> regex.Match[str] | None:
    """The first match of `pattern` in `text`, or None; a NodeError if the pattern is invalid or too slow."""
    return _search(_compile(pattern, case_sensitive), text, time_limit)


def _search(compiled: regex.Pattern[str], text: str, time_limit: float = REGEX_TIME_LIMIT) -> regex.Match[str] | None:
    try:
        return compiled.search(text, timeout=time_limit, concurrent=True)
    except TimeoutError:
        raise NodeError(f"regular expression {_shown(compiled.pattern)} took longer than {time_limit:g} s on a "
                        f"text of {len(text):,} characters; simplify it (nested repeats such as (a+)+ can take "
                        "forever)") from None


async def regex_search_async(pattern: str, text: str, *, case_sensitive: bool = True,
                             time_limit: float = REGEX_TIME_LIMIT) -> regex.Match[str] | None:
    """`regex_search` in a worker thread: the event loop goes on, and cancelling (a node's timeout) returns at once."""
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(
        _REGEX_THREADS, lambda: regex_search(pattern, text, case_sensitive=case_sensitive, time_limit=time_limit))


T = TypeVar("T")


async def in_regex_thread(work: Callable[[threading.Event], T]) -> T:
    """`work(stopped)`, which searches regular expressions (many items, say), in a regex worker thread, so the
    event loop goes on meanwhile. Cancelling (the node's timeout) returns at once and sets `stopped`, which
    `work` should check between searches (each search already stops at its own time limit)."""
    stopped = threading.Event()
    try:
        return await asyncio.get_running_loop().run_in_executor(_REGEX_THREADS, work, stopped)
    except asyncio.CancelledError:
        stopped.set()
        raise


def _compile(pattern: str, case_sensitive: bool) -> regex.Pattern[str]:
    try:  # regex keeps its own cache of compiled patterns
        return regex.compile(pattern, regex.VERSION0 | (0 if case_sensitive else regex.IGNORECASE))
    except (regex.error, ValueError, OverflowError) as error:
        raise NodeError(f"invalid regular expression {_shown(pattern)}: {error}") from None


def _shown(pattern: str) -> str:
    return repr(pattern if len(pattern) <= 80 else pattern[:79] + "…")


# 5. Lists (the items list nodes work on) ---------------------------------------------------------

def items_at(value: Any, field: str) -> list[Any]:
    """The list a node works on: the value at path `field` of the input, or the input itself when `field` is empty.

    The list itself is returned (not a copy): callers never mutate it.
    """
    found = get_path(value, field) if field else value
    if isinstance(found, list):
        return found
    if isinstance(found, tuple):
        return list(found)
    where = f"field {field!r}" if field else "the input (List field is empty)"
    if found is MISSING:
        keys = ", ".join(map(str, value)) if isinstance(value, dict) else type(value).__name__
        raise NodeError(f"nothing at {where}; the input has: {keys or 'no keys'}")
    raise NodeError(f"{where} holds {type(found).__name__} {to_text(found)[:80]!r}, not a list")


# 6. Containers (For Each, Loop) -----------------------------------------------------------------

def container_sinks(runtime: Any, children: list[str]) -> dict[str, str]:
    """Children whose flow edges lead to no other child (the ends of the inner chain), by id -> name."""
    inside = set(children)
    return {child: runtime.get_node(child)["name"] for child in children
            if not any(edge["target"] in inside for edge in runtime.outgoing_edges(child, channel="flow"))}


def sink_result(outputs: dict[str, dict[str, Any]], sinks: dict[str, str]) -> Any:
    """One pass's result. One sink: its main value (first port with a value); several: those that ran, by name."""
    values = {name: next(iter(outputs[node_id].values()), None)
              for node_id, name in sinks.items() if outputs.get(node_id)}
    if len(sinks) == 1:
        return next(iter(values.values()), None)
    return values
