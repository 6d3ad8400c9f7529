"""nodes/data/split_out: a list field becomes a list of items (objects as is, other elements wrapped)."""

import pytest

from nodeflow_app.contract import FlowContext, NodeError
from nodes.data.split_out.definition import definition
from nodes.data.split_out.executor import executor

ORDER = {"id": 7, "customer": {"name": "Ada", "tags": ["vip", "eu"]},
         "lines": [{"sku": "a", "qty": 1}, {"sku": "b", "qty": 2}]}


async def run(input, **data):
    ctx = FlowContext(node_id="split-1", node_type="split-out", run_id="run-1", runtime=None)
    return (await executor.execute({**definition.defaults(), **data}, {"input": input}, ctx)).outputs["output"]


async def test_object_elements_become_the_items():
    assert await run(ORDER, field="lines") == ORDER["lines"]


async def test_other_elements_go_to_the_destination_field():
    assert await run(ORDER, field="customer.tags") == [{"tags": "vip"}, {"tags": "eu"}]
    assert await run(ORDER, field="customer.tags", destination="tag") == [{"tag": "vip"}, {"tag": "eu"}]
    assert await run([1, {"a": 2}]) == [{"value": 1}, {"a": 2}]


async def test_other_fields_of_the_input_can_come_along():
    items = await run(ORDER, field="lines", include="other_fields")
    assert items == [{"id": 7, "customer": ORDER["customer"], "sku": "a", "qty": 1},
                     {"id": 7, "customer": ORDER["customer"], "sku": "b", "qty": 2}]
    nested = await run(ORDER, field="customer.tags", include="other_fields")
    assert nested[0] == {"id": 7, "customer": {"name": "Ada"}, "lines": ORDER["lines"], "tags": "vip"}
    assert ORDER["customer"]["tags"] == ["vip", "eu"]  # the input is not changed


async def test_a_list_input_is_split_item_by_item():
    orders = [{"id": 1, "lines": [{"sku": "a"}]}, {"id": 2, "lines": []}, {"id": 3, "lines": [{"sku": "c"}]}]
    assert await run(orders, field="lines", include="other_fields") == [{"id": 1, "sku": "a"}, {"id": 3, "sku": "c"}]


async def test_errors_name_the_field_and_the_item():
    with pytest.raises(NodeError, match=r"nothing at field 'items' to split out"):
        await run(ORDER, field="items")
    with pytest.raises(NodeError, match=r"item 1: field 'lines' holds str 'none', not a list"):
        await run([{"lines": []}, {"lines": "none"}], field="lines")
    with pytest.raises(NodeError, match=r"the input \(Field to split out is empty\) holds dict"):
        await run(ORDER)
    with pytest.raises(NodeError, match="include must be 'none' or 'other_fields'"):
        await run(ORDER, field="lines", include="all")
