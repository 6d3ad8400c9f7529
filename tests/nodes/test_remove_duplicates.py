"""nodes/data/remove_duplicates: first occurrences by chosen fields, or by whole items."""

import pytest

from nodeflow_app.contract import FlowContext, NodeError
from nodes.data.remove_duplicates.definition import definition
from nodes.data.remove_duplicates.executor import executor

CONTACTS = [
    {"id": 1, "email": "a@x.org", "name": "Ada"},
    {"id": 2, "email": "b@x.org", "name": "Bo"},
    {"id": 3, "email": "a@x.org", "name": "Ada L."},
    {"id": 4, "name": "No mail"},
    {"id": 5, "email": None, "name": "Null mail"},
    {"id": 6, "name": "No mail either"},
]


async def run(input, *fields, **data):
    ctx = FlowContext(node_id="dedupe-1", node_type="remove-duplicates", run_id="run-1", runtime=None)
    rows = {"fields": [{"field": f} for f in fields]} if fields else {}
    return (await executor.execute({**definition.defaults(), **rows, **data}, {"input": input}, ctx)).outputs["output"]


async def test_by_one_field_keeps_first_occurrences_in_order():
    # A missing field is a value of its own (4 and 6 share it), different from null (5).
    assert [c["id"] for c in await run(CONTACTS, "email")] == [1, 2, 4, 5]


async def test_by_several_fields():
    rows = [{"a": 1, "b": 1}, {"a": 1, "b": 2}, {"a": 1, "b": 1, "c": 9}]
    assert await run(rows, "a", "b") == rows[:2]


async def test_whole_items_ignore_key_order_but_not_types():
    rows = [{"a": 1, "b": [1, 2]}, {"b": [1, 2], "a": 1}, {"a": "1", "b": [1, 2]}, "x", "x", 1, "1", True, "true"]
    assert await run(rows) == [{"a": 1, "b": [1, 2]}, {"a": "1", "b": [1, 2]}, "x", 1, "1", True, "true"]


async def test_blank_rows_are_ignored_and_list_field_is_read():
    assert await run({"list": [1, 1, 2]}, "", field="list") == [1, 2]


async def test_bad_input_is_named():
    with pytest.raises(NodeError, match=r"compare fields row 0: invalid path 'a\.\.b'"):
        await run(CONTACTS, "a..b")
    with pytest.raises(NodeError, match=r"item 1 cannot be compared: Out of range float values"):
        await run([1.0, float("nan")])
    with pytest.raises(NodeError, match="compare fields must be a list of {field} rows, got str"):
        await run(CONTACTS, fields="email")
