"""nodes/data/aggregate: all items into one list, or per field sum / count / min / max / average / concatenate / list."""

import pytest

from nodeflow_app.contract import FlowContext, NodeError
from nodes.data.aggregate.definition import definition
from nodes.data.aggregate.executor import executor

LINES = [{"sku": "a", "price": 2.5, "qty": 2, "day": "2024-05-03"},
         {"sku": "b", "price": "4", "qty": 1, "day": "2024-04-30"},
         {"sku": "c", "qty": None, "day": "2024-05-10"}]


async def run(input, *rows, **data):
    ctx = FlowContext(node_id="agg-1", node_type="aggregate", run_id="run-1", runtime=None)
    aggregations = [{"field": f, "operation": o, "name": n} for f, o, n in rows]
    if aggregations:
        data = {"mode": "fields", "aggregations": aggregations, **data}
    return (await executor.execute({**definition.defaults(), **data}, {"input": input}, ctx)).outputs["output"]


async def test_all_items_into_one_list():
    assert await run(LINES) == {"items": LINES}
    assert await run({"results": [1, 2]}, field="results", destination="numbers") == {"numbers": [1, 2]}


async def test_every_operation_leaves_out_missing_and_null_values():
    result = await run(LINES, ("price", "sum", ""), ("qty", "count", ""), ("qty", "min", "least"),
                       ("price", "max", ""), ("price", "average", ""), ("sku", "concatenate", "skus"),
                       ("qty", "list", ""), ("day", "min", "first_day"), ("", "count", ""))
    assert result == {"sum_price": 6.5, "count_qty": 2, "least": 1, "max_price": 4.0, "average_price": 3.25,
                      "skus": "a, b, c", "list_qty": [2, 1], "first_day": "2024-04-30", "count": 3}


async def test_empty_lists_and_the_separator():
    assert await run([], ("x", "sum", ""), ("x", "average", ""), ("x", "max", ""), ("x", "concatenate", "")) == \
        {"sum_x": 0, "average_x": None, "max_x": None, "concatenate_x": ""}
    assert await run(LINES, ("sku", "concatenate", ""), separator="|") == {"concatenate_sku": "a|b|c"}


async def test_errors_name_the_row_and_the_item():
    with pytest.raises(NodeError, match=r"fields row 0 \(average of field 'n'\): the average is too large"):
        await run([{"n": 10**400}, {"n": 1}], ("n", "average", ""))
    with pytest.raises(NodeError, match=r"fields row 0 \(sum of field 'sku'\): item 0 holds 'a', not a number"):
        await run(LINES, ("sku", "sum", ""))
    with pytest.raises(NodeError, match=r"fields row 1 \(median of field 'qty'\): unknown operation 'median'"):
        await run(LINES, ("qty", "sum", ""), ("qty", "median", ""))
    with pytest.raises(NodeError, match=r"fields row 0 \(sum of whole items\): item 1 holds '\{\}', not a number"):
        await run([1, {}], ("", "sum", ""))
    with pytest.raises(NodeError, match="fields must be a list of at least one"):
        await run(LINES, mode="fields", aggregations=[])
    with pytest.raises(NodeError, match="aggregate must be 'all_items' or 'fields'"):
        await run(LINES, mode="group")
