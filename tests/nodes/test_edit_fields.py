"""nodes/data/edit_fields: set fields (dotted names nest) on a copy of the input, or on a new object."""

import pytest

from nodeflow_app.contract import ExecutionResult, FlowContext, NodeError
from nodes.data.edit_fields.definition import definition
from nodes.data.edit_fields.executor import executor


def ctx() -> FlowContext:
    return FlowContext(node_id="edit-1", node_type="edit-fields", run_id="run-1", runtime=None)


async def run(input, **data) -> ExecutionResult:
    return await executor.execute({**definition.defaults(), **data}, {"input": input}, ctx())


def rows(**fields):
    return [{"name": name.replace("__", "."), "value": value} for name, value in fields.items()]


async def test_sets_fields_on_a_copy_of_the_input():
    source = {"user": {"name": "Ada"}, "keep": 1}
    result = await run(source, fields=rows(user__name="Grace", user__role="admin", status="ok"))
    assert result.outputs == {"output": {"user": {"name": "Grace", "role": "admin"}, "keep": 1, "status": "ok"}}
    assert source == {"user": {"name": "Ada"}, "keep": 1}


async def test_without_input_fields_only_the_new_fields_remain():
    result = await run({"secret": 1}, fields=rows(a=1, b__c=[1, 2]), include_input=False)
    assert result.outputs == {"output": {"a": 1, "b": {"c": [1, 2]}}}


async def test_fields_as_an_object():
    result = await run({"a": 0}, fields={"n": 3, "flag": False, "obj": {"x": None}, "a": "over"})
    assert result.outputs == {"output": {"a": "over", "n": 3, "flag": False, "obj": {"x": None}}}


async def test_later_rows_win_and_blank_rows_are_ignored():
    fields = [{"name": "a", "value": 1}, {"name": "", "value": ""}, {"name": "a", "value": 2}, {"key": "b", "value": 3}]
    assert (await run(None, fields=fields)).outputs == {"output": {"a": 2, "b": 3}}


async def test_no_input_and_no_fields():
    assert (await run(None)).outputs == {"output": {}}
    assert (await run({"a": 1})).outputs == {"output": {"a": 1}}


async def test_list_items_in_the_input_can_be_set():
    result = await run({"items": [{"qty": 1}]}, fields=rows(**{"items[0]__qty": 5}))
    assert result.outputs == {"output": {"items": [{"qty": 5}]}}


async def test_a_non_object_input_cannot_be_kept():
    with pytest.raises(NodeError, match="the input is a str, not an object, so its fields cannot be kept; "
                                        "turn off 'Include input fields'"):
        await run("hello", fields=rows(a=1))
    assert (await run("hello", fields=rows(a=1), include_input=False)).outputs == {"output": {"a": 1}}


async def test_errors_name_the_field():
    with pytest.raises(NodeError, match=r"a field has a value \(5\) but no name"):
        await run({}, fields=[{"name": "", "value": 5}])
    with pytest.raises(NodeError, match=r"cannot set 'user\.name\.first': 'user\.name' is a str"):
        await run({"user": {"name": "Ada"}}, fields=rows(user__name__first="A"))
    with pytest.raises(NodeError, match=r"invalid path 'a\.\.b'"):
        await run({}, fields=[{"name": "a..b", "value": 1}])
    with pytest.raises(NodeError, match="fields must be a list of name/value rows or an object, got str"):
        await run({}, fields="a=1")
