"""nodes/data/limit: the first or last N items of a list."""

import pytest

from nodeflow_app.contract import FlowContext, NodeError
from nodes.data.limit.definition import definition
from nodes.data.limit.executor import executor

ITEMS = [1, 2, 3, 4, 5]


async def run(input, **data):
    ctx = FlowContext(node_id="limit-1", node_type="limit", run_id="run-1", runtime=None)
    return (await executor.execute({**definition.defaults(), **data}, {"input": input}, ctx)).outputs["output"]


@pytest.mark.parametrize("count, keep, expected", [
    (2, "first", [1, 2]), (2, "last", [4, 5]), (0, "first", []), (0, "last", []),
    (9, "first", ITEMS), (9, "last", ITEMS), ("3", "last", [3, 4, 5]), (3.0, "first", [1, 2, 3]),
])
async def test_first_or_last(count, keep, expected):
    assert await run(ITEMS, count=count, keep=keep) == expected


async def test_default_and_list_field():
    assert await run({"rows": list(range(20))}, field="rows") == list(range(10))


@pytest.mark.parametrize("count", [-1, 2.5, "many", None, "inf", "1e400", pytest.param(10**400, id="10**400")])
async def test_bad_count_is_named(count):
    with pytest.raises(NodeError, match=f"max items must be a whole number of 0 or more, got {count!r}"):
        await run(ITEMS, count=count)


async def test_bad_keep():
    with pytest.raises(NodeError, match="keep must be 'first' or 'last', got 'middle'"):
        await run(ITEMS, keep="middle")
