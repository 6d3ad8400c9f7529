"""Aggregate: a list of items becomes one object, `{destination: items}` or one calculated value per field row."""

from typing import Any, Callable

from nodes._helpers import MISSING, items_at, parse_path, path_getter, to_number, to_text
from nodeflow_app.contract import ExecutionResult, FlowContext, NodeError

OPERATIONS = ("sum", "count", "min", "max", "average", "concatenate", "list")


class AggregateExecutor:
    node_type = "aggregate"

    async def execute(self, data: dict[str, Any], inputs: dict[str, Any], ctx: FlowContext) -> ExecutionResult:
        items = items_at(inputs.get("input"), data.get("field") or "")
        mode = data.get("mode") or "all_items"
        if mode == "all_items":
            destination = to_text(data.get("destination")).strip() or "items"
            return ExecutionResult(outputs={"output": {destination: list(items)}})
        if mode != "fields":
            raise NodeError(f"aggregate must be 'all_items' or 'fields', got {mode!r}")
        rows = data.get("aggregations")
        if not isinstance(rows, list) or not rows:
            raise NodeError("fields must be a list of at least one {field, operation, name} row")
        separator = to_text(data.get("separator"))
        result: dict[str, Any] = {}
        for index, row in enumerate(rows):
            if not isinstance(row, dict):
                raise NodeError(f"fields row {index} must be an object with field, operation and name")
            try:
                name, value = _aggregate(items, row, separator)
            except NodeError as error:
                what = f"field {row['field']!r}" if row.get("field") else "whole items"
                raise NodeError(f"fields row {index} ({row.get('operation')} of {what}): {error}") from None
            result[name] = value
        return ExecutionResult(outputs={"output": result})


def _aggregate(items: list[Any], row: dict[str, Any], separator: str) -> tuple[str, Any]:
    """(output field name, value) of one row."""
    field, operation = row.get("field") or "", row.get("operation") or "sum"
    if operation not in OPERATIONS:
        raise NodeError(f"unknown operation {operation!r}; use one of: {', '.join(OPERATIONS)}")
    name = to_text(row.get("name")).strip() or _default_name(operation, field)
    values = _values(items, path_getter(field))
    return name, CALCULATIONS[operation](values, separator)


def _values(items: list[Any], get: Callable[[Any], Any]) -> list[tuple[int, Any]]:
    """(item index, value) of the items that have a non-null value."""
    found = ((index, get(item)) for index, item in enumerate(items))
    return [(index, value) for index, value in found if value is not MISSING and value is not None]


def _numbers(values: list[tuple[int, Any]]) -> list[float | int]:
    numbers = []
    for index, value in values:
        number = value if type(value) is int else to_number(value)
        if number is None:
            raise NodeError(f"item {index} holds {to_text(value)[:80]!r}, not a number")
        numbers.append(number)
    return numbers


def _total(values: list[tuple[int, Any]], _: str) -> float | int:
    return sum(_numbers(values))


def _average(values: list[tuple[int, Any]], _: str) -> float | None:
    numbers = _numbers(values)
    try:
        return sum(numbers) / len(numbers) if numbers else None
    except OverflowError:  # whole numbers past ~1.8e308
        raise NodeError("the average is too large for a number with a fraction") from None


def _extreme(pick: Callable[..., Any]) -> Callable[[list[tuple[int, Any]], str], Any]:
    """min or max: numbers (numeric text too) by value, else texts alphabetically (ISO dates sort right)."""
    def calculate(values: list[tuple[int, Any]], _: str) -> Any:
        if not values:
            return None
        if all(isinstance(v, str) for _, v in values) and any(to_number(v) is None for _, v in values):
            return pick(v for _, v in values)
        return pick(_numbers(values))
    return calculate


CALCULATIONS: dict[str, Callable[[list[tuple[int, Any]], str], Any]] = {
    "sum": _total,
    "count": lambda values, _: len(values),
    "min": _extreme(min),
    "max": _extreme(max),
    "average": _average,
    "concatenate": lambda values, separator: separator.join(to_text(v) for _, v in values),
    "list": lambda values, _: [v for _, v in values],
}


def _default_name(operation: str, field: str) -> str:
    names = [step for step in parse_path(field) if isinstance(step, str)]
    return f"{operation}_{names[-1]}" if names else operation


executor = AggregateExecutor()
