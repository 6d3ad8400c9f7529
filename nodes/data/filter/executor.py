"""Filter: the items of a list that meet the conditions go to `pass`, the others to `reject`; an empty side is dead."""

import threading
from functools import partial
from typing import Any, Callable

from nodes._helpers import condition, in_regex_thread, items_at, path_getter
from nodeflow_app.contract import ExecutionResult, FlowContext, NodeError

# One condition ready to test: (its index, its field as written, the field's getter, the test).
Condition = tuple[int, str, Callable[[Any], Any], Callable[[Any], bool]]


class FilterExecutor:
    node_type = "filter"

    async def execute(self, data: dict[str, Any], inputs: dict[str, Any], ctx: FlowContext) -> ExecutionResult:
        items = items_at(inputs.get("input"), data.get("field") or "")
        combine = data.get("combine") or "and"
        if combine not in ("and", "or"):
            raise NodeError(f"combine must be 'and' or 'or', got {combine!r}")
        conditions = _conditions(data.get("conditions"), bool(data.get("case_sensitive")))
        split = partial(_split, items, conditions, every=combine == "and")
        searches = any(row.get("operator") == "regex" for row in data["conditions"])
        passed, rejected = await in_regex_thread(split) if searches else split(None)  # a regex per item: off the loop
        outputs = {port: found for port, found in (("pass", passed), ("reject", rejected)) if found}
        return ExecutionResult(outputs=outputs)


def _conditions(raw: Any, case_sensitive: bool) -> list[Condition]:
    """The condition rows, checked once before any item is tested."""
    if not isinstance(raw, list) or not raw:
        raise NodeError("conditions must be a list of at least one {field, operator, value} row")
    conditions: list[Condition] = []
    for index, row in enumerate(raw):
        if not isinstance(row, dict):
            raise NodeError(f"condition {index} must be an object with field, operator and value")
        field = row.get("field") or ""
        try:
            test = condition(row.get("operator") or "equals", row.get("value", ""), case_sensitive=case_sensitive)
            conditions.append((index, field, path_getter(field), test))
        except NodeError as error:
            raise NodeError(f"condition {index}: {error}") from None
    return conditions


def _split(items: list[Any], conditions: list[Condition], stopped: threading.Event | None,
           every: bool) -> tuple[list[Any], list[Any]]:
    """(items that meet all conditions, or any when not `every`; the others). Stops at the first test that decides.
    `stopped` set (the node was cancelled while this ran in a thread): gives up before the next item."""
    passed: list[Any] = []
    rejected: list[Any] = []
    index, prepared = 0, conditions[0]
    try:
        for index, item in enumerate(items):
            if stopped is not None and stopped.is_set():
                raise NodeError("stopped")
            meets = every
            for prepared in conditions:
                if prepared[3](prepared[2](item)) is not every:
                    meets = not every
                    break
            (passed if meets else rejected).append(item)
    except NodeError as error:
        where = f"condition {prepared[0]} (field {prepared[1]!r})" if prepared[1] else f"condition {prepared[0]}"
        raise NodeError(f"item {index}, {where}: {error}") from None
    return passed, rejected


executor = FilterExecutor()
