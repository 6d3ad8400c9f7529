"""Split Out: a list field becomes a list of items (NodeFlow passes one value per port, so items travel as a list)."""

from typing import Any

from nodes._helpers import MISSING, get_path, parse_path, to_text
from nodeflow_app.contract import ExecutionResult, FlowContext, NodeError


class SplitOutExecutor:
    node_type = "split-out"

    async def execute(self, data: dict[str, Any], inputs: dict[str, Any], ctx: FlowContext) -> ExecutionResult:
        value = inputs.get("input")
        field = data.get("field") or ""
        include = data.get("include") or "none"
        if include not in ("none", "other_fields"):
            raise NodeError(f"include must be 'none' or 'other_fields', got {include!r}")
        steps = parse_path(field)
        destination = to_text(data.get("destination")).strip() or _last_name(steps)
        if not field:
            return ExecutionResult(outputs={"output": _split(value, None, [], destination, include)})
        if isinstance(value, list):  # a list of items: split each one, keep them in order
            items: list[Any] = []
            for index, source in enumerate(value):
                try:
                    items.extend(_split(source, field, steps, destination, include))
                except NodeError as error:
                    raise NodeError(f"item {index}: {error}") from None
            return ExecutionResult(outputs={"output": items})
        return ExecutionResult(outputs={"output": _split(value, field, steps, destination, include)})


def _split(source: Any, field: str | None, steps: list[str | int], destination: str, include: str) -> list[Any]:
    """The items of one source: its list at `steps` (or itself), each element an object."""
    elements = get_path(source, steps) if steps else source
    if elements is MISSING:
        raise NodeError(f"nothing at field {field!r} to split out")
    if not isinstance(elements, list):
        where = f"field {field!r}" if field else "the input (Field to split out is empty)"
        raise NodeError(f"{where} holds {type(elements).__name__} {to_text(elements)[:80]!r}, not a list")
    others = _without(source, steps) if include == "other_fields" and isinstance(source, dict) else {}
    return [{**others, **element} if isinstance(element, dict) else {**others, destination: element}
            for element in elements]


def _without(source: dict[str, Any], steps: list[str | int]) -> dict[str, Any]:
    """A shallow copy of `source` without the value at `steps` (copying only the objects on the way)."""
    if not steps:
        return dict(source)
    head, rest = str(steps[0]), steps[1:]
    copy = dict(source)
    if not rest:
        copy.pop(head, None)
    elif isinstance(copy.get(head), dict):
        copy[head] = _without(copy[head], rest)
    return copy


def _last_name(steps: list[str | int]) -> str:
    names = [step for step in steps if isinstance(step, str)]
    return names[-1] if names else "value"


executor = SplitOutExecutor()
