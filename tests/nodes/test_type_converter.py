"""nodes/data/type_converter: explicit conversions, in the input, at a field, or in each item; clear failures."""

import pytest

from nodeflow_app.contract import FlowContext, NodeError
from nodes.data.type_converter.definition import definition
from nodes.data.type_converter.executor import executor


async def run(input, conversion, **data):
    ctx = FlowContext(node_id="tc-1", node_type="type-converter", run_id="run-1", runtime=None)
    result = await executor.execute({**definition.defaults(), "conversion": conversion, **data}, {"input": input}, ctx)
    return result.outputs["output"]


@pytest.mark.parametrize("conversion, value, expected", [
    ("to_integer", " 42 ", 42), ("to_integer", "4.0", 4), ("to_integer", "1_000", 1000), ("to_integer", 7.0, 7),
    ("to_integer", True, 1), ("to_integer", "1790000000000000001", 1790000000000000001),  # exact, not via float
    ("to_integer", "12345678901234567890", 12345678901234567890), ("to_integer", "1e3", 1000),
    ("to_float", "2.5", 2.5), ("to_float", "-1e3", -1000.0), ("to_float", 3, 3.0),
    ("to_boolean", "Yes", True), ("to_boolean", "off", False), ("to_boolean", "0", False), ("to_boolean", 1, True),
    ("parse_json", '{"a": [1, null]}', {"a": [1, None]}), ("parse_json", "3", 3),
    ("to_json_text", {"a": [1, "é"]}, '{"a":[1,"é"]}'),
    ("join_list", ["a", 2, None], "a,2,"),
    ("split_text", "a, b ,c", ["a", "b", "c"]), ("split_text", "  ", []),
    ("parse_date", "2024-05-31T14:30:00Z", "2024-05-31T14:30:00+00:00"),
    ("parse_date", "2024-05-31", "2024-05-31T00:00:00"),
    ("format_date", "2024-05-31T14:30:00", "2024-05-31T14:30:00"),
    ("format_date", 0, "1970-01-01T00:00:00+00:00"),
])
async def test_each_conversion(conversion, value, expected):
    assert await run(value, conversion) == expected


async def test_options():
    assert await run({"a": 1}, "to_json_text", pretty=True) == '{\n  "a": 1\n}'
    assert await run(["a", "b"], "join_list", separator=r"\n") == "a\nb"
    assert await run("a|b", "split_text", separator="|") == ["a", "b"]
    assert await run("31/05/2024 14:30", "parse_date", format="%d/%m/%Y %H:%M") == "2024-05-31T14:30:00"
    assert await run("2024-05-31T14:30:00", "format_date", format="%d %b %Y") == "31 May 2024"


async def test_a_field_is_converted_in_a_copy_of_the_input():
    source = {"order": {"total": "12.50", "id": 1}}
    assert await run(source, "to_float", field="order.total") == {"order": {"total": 12.5, "id": 1}}
    assert source == {"order": {"total": "12.50", "id": 1}}


async def test_each_item():
    rows = {"rows": [{"qty": "1"}, {"qty": "2"}]}
    assert await run(rows, "to_integer", field="qty", apply_to="each_item", list_field="rows") == \
        [{"qty": 1}, {"qty": 2}]
    assert await run(["1", "2"], "to_integer", apply_to="each_item") == [1, 2]


@pytest.mark.parametrize("conversion, value, message", [
    ("to_integer", "4.5", r"'4\.5' is not a whole number"),
    ("to_integer", "abc", r"cannot convert 'abc' to an integer"),
    ("to_integer", None, r"cannot convert null to an integer: it is a null, not text"),
    ("to_integer", "1e5000", r"'1e5000' has more than 4,300 digits"),
    ("to_integer", "inf", r"'inf' is not a whole number"),
    ("to_float", "nan", r"'nan' is not a finite number"),
    pytest.param("to_float", 10**400, r"1000+ is not a finite number", id="to_float-10**400"),
    ("parse_json", "[" * 100_000, r"the JSON is nested too deeply to read"),
    ("parse_json", "1" * 5_000, r"cannot read the JSON: a number in it has more than 4,300 digits"),
    ("to_float", [1], r"cannot convert \[1\] to a number: it is a list, not text"),
    ("to_boolean", "maybe", r"cannot convert 'maybe' to a boolean: use true/false"),
    ("parse_json", '{"a": }', r"invalid JSON at line 1 column 7 \(position 6\): Expecting value"),
    ("to_json_text", float("inf"), r"cannot write float as JSON"),
    ("join_list", "abc", r"cannot join 'abc': it is a str, not a list"),
    ("parse_date", "31/05/2024", r"cannot read '31/05/2024' as a date in ISO 8601"),
    ("format_date", "yesterday", r"'yesterday' is not an ISO 8601 date"),
])
async def test_failures_say_why(conversion, value, message):
    with pytest.raises(NodeError, match=message):
        await run(value, conversion)


async def test_failures_name_the_field_and_the_item():
    with pytest.raises(NodeError, match=r"field 'when': cannot read '2024' as a date in the format '%d/%m/%Y'"):
        await run({"when": "2024"}, "parse_date", field="when", format="%d/%m/%Y")
    with pytest.raises(NodeError, match=r"item 1: field 'qty': cannot convert 'two' to an integer"):
        await run([{"qty": "1"}, {"qty": "two"}], "to_integer", field="qty", apply_to="each_item")
    with pytest.raises(NodeError, match=r"nothing at field 'qty'"):
        await run({}, "to_integer", field="qty")
    with pytest.raises(NodeError, match=r"unknown conversion 'to_roman'"):
        await run("1", "to_roman")
