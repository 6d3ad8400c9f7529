"""Type Converter: one explicit conversion of the value at a path, in the input or in each item of a list."""

import copy
from typing import Any, Callable

from nodes._helpers import MISSING, get_path, items_at, set_path, to_text, unescape
from nodes.data.type_converter.conversions import CONVERSIONS, Options
from nodeflow_app.contract import ExecutionResult, FlowContext, NodeError


class TypeConverterExecutor:
    node_type = "type-converter"

    async def execute(self, data: dict[str, Any], inputs: dict[str, Any], ctx: FlowContext) -> ExecutionResult:
        name = data.get("conversion") or "to_integer"
        conversion = CONVERSIONS.get(name)
        if conversion is None:
            raise NodeError(f"unknown conversion {name!r}; use one of: {', '.join(CONVERSIONS)}")
        separator = data.get("separator")
        options = Options(date_format=to_text(data.get("format")),
                          separator=unescape("," if separator is None else to_text(separator)),
                          pretty=bool(data.get("pretty")))
        field = to_text(data.get("field")).strip()
        value = inputs.get("input")
        apply_to = data.get("apply_to") or "input"
        if apply_to == "input":
            return ExecutionResult(outputs={"output": convert(value, field, conversion, options)})
        if apply_to != "each_item":
            raise NodeError(f"apply to must be 'input' or 'each_item', got {apply_to!r}")
        converted = []
        for index, item in enumerate(items_at(value, data.get("list_field") or "")):
            try:
                converted.append(convert(item, field, conversion, options))
            except NodeError as error:
                raise NodeError(f"item {index}: {error}") from None
        return ExecutionResult(outputs={"output": converted})


def convert(value: Any, field: str, conversion: Callable[[Any, Options], Any], options: Options) -> Any:
    """The converted value, or with a field: a copy of `value` holding the converted value there."""
    if not field:
        return conversion(value, options)
    found = get_path(value, field)
    if found is MISSING:
        raise NodeError(f"nothing at field {field!r}")
    try:
        converted = conversion(found, options)
    except NodeError as error:
        raise NodeError(f"field {field!r}: {error}") from None
    result = copy.deepcopy(value)  # upstream outputs are shared; never mutate them
    set_path(result, field, converted)
    return result


executor = TypeConverterExecutor()
