"""Merge: the values delivered to `input` (a list, in arrival order) become one value."""

import json
from typing import Any

from nodes._helpers import MISSING, get_path, to_text
from nodeflow_app.contract import ExecutionResult, FlowContext, NodeError


class MergeExecutor:
    node_type = "merge"

    async def execute(self, data: dict[str, Any], inputs: dict[str, Any], ctx: FlowContext) -> ExecutionResult:
        delivered = inputs.get("input")
        values = [] if delivered is None else delivered if isinstance(delivered, list) else [delivered]
        mode = data.get("mode") or "append"
        if mode == "append":
            merged: Any = append(values)
        elif mode == "combine_by_key":
            merged = combine_by_key(values, to_text(data.get("key")).strip())
        elif mode == "first_arrival":
            merged = values[0] if values else None
        else:
            raise NodeError(f"unknown mode {mode!r}; use append, combine_by_key or first_arrival")
        return ExecutionResult(outputs={"output": merged})


def append(values: list[Any]) -> list[Any]:
    """One flat list: list inputs are concatenated, other values appended."""
    merged: list[Any] = []
    for value in values:
        if isinstance(value, list):
            merged.extend(value)
        else:
            merged.append(value)
    return merged


def combine_by_key(values: list[Any], key: str) -> list[dict[str, Any]]:
    """Objects sharing a key value become one (later fields win), in order of first appearance."""
    if not key:
        raise NodeError("Combine by key needs a key (the field that identifies an object, e.g. id)")
    combined: dict[str, dict[str, Any]] = {}
    for input_index, value in enumerate(values):
        items = value if isinstance(value, list) else [value]
        for item_index, item in enumerate(items):
            where = f"input {input_index}" + (f" item {item_index}" if isinstance(value, list) else "")
            if not isinstance(item, dict):
                raise NodeError(f"{where} is a {type(item).__name__}, not an object; cannot combine by key")
            identity = get_path(item, key)
            if identity is MISSING:
                raise NodeError(f"{where} has no key {key!r}")
            slot = json.dumps(identity, sort_keys=True, default=str)
            combined[slot] = {**combined.get(slot, {}), **item}
    return list(combined.values())


executor = MergeExecutor()
