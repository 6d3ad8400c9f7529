"""Remove Duplicates: keep the first item of each distinct key (chosen fields, or the whole item)."""

import json
from typing import Any, Callable

from nodes._helpers import MISSING, items_at, path_getter
from nodeflow_app.contract import ExecutionResult, FlowContext, NodeError


class RemoveDuplicatesExecutor:
    node_type = "remove-duplicates"

    async def execute(self, data: dict[str, Any], inputs: dict[str, Any], ctx: FlowContext) -> ExecutionResult:
        items = items_at(inputs.get("input"), data.get("field") or "")
        getters = _getters(data.get("fields"))
        seen: set[tuple[str, ...]] = set()
        kept: list[Any] = []
        for index, item in enumerate(items):
            try:
                key = tuple(_canonical(get(item)) for get in getters) if getters else (_canonical(item),)
            except (TypeError, ValueError) as error:
                raise NodeError(f"item {index} cannot be compared: {error}") from None
            if key not in seen:
                seen.add(key)
                kept.append(item)
        return ExecutionResult(outputs={"output": kept})


def _getters(rows: Any) -> list[Callable[[Any], Any]]:
    if rows in (None, ""):
        return []
    if not isinstance(rows, list):
        raise NodeError(f"compare fields must be a list of {{field}} rows, got {type(rows).__name__}")
    getters = []
    for index, row in enumerate(rows):
        field = row.get("field") if isinstance(row, dict) else row
        if not isinstance(field, str):
            raise NodeError(f"compare fields row {index} must name a field")
        if not field.strip():
            continue  # a blank row left in the editor
        try:
            getters.append(path_getter(field))
        except NodeError as error:
            raise NodeError(f"compare fields row {index}: {error}") from None
    return getters


def _canonical(value: Any) -> str:
    """One text per distinct value (objects compared regardless of key order); a missing field differs from null."""
    if value is MISSING:
        return "\0missing"
    if isinstance(value, str):
        return "s" + value
    return json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=False)


executor = RemoveDuplicatesExecutor()
