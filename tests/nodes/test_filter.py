"""nodes/data/filter: items meeting the conditions (AND / OR) on `pass`, the others on `reject`; an empty side is dead."""

import asyncio
import time

import pytest

from nodeflow_app.contract import ExecutionResult, FlowContext, NodeError
from nodes.data.filter.definition import definition
from nodes.data.filter.executor import executor
from nodes.flow.conditional.definition import OPERATOR_OPTIONS
from tests.nodes.loop_ticks import loop_ticks

ORDERS = [
    {"id": 1, "status": "open", "total": 30, "tags": ["gift"]},
    {"id": 2, "status": "Closed", "total": 120},
    {"id": 3, "status": "open", "total": "250"},
    {"id": 4, "total": 5},
]


def ctx() -> FlowContext:
    return FlowContext(node_id="filter-1", node_type="filter", run_id="run-1", runtime=None)


async def run(input, *conditions, **data) -> ExecutionResult:
    rows = [{"field": f, "operator": o, "value": v} for f, o, v in conditions]
    return await executor.execute({**definition.defaults(), **({"conditions": rows} if rows else {}), **data},
                                  {"input": input}, ctx())


def ids(result: ExecutionResult, port: str) -> list[int]:
    return [item["id"] for item in result.outputs[port]]


async def test_one_condition_splits_the_list_in_order():
    result = await run(ORDERS, ("total", "gt", "100"))
    assert ids(result, "pass") == [2, 3] and ids(result, "reject") == [1, 4]
    assert result.outputs["pass"][0] is ORDERS[1]  # items travel unchanged


async def test_and_needs_every_condition_or_needs_one():
    both = (("status", "equals", "open"), ("total", "gte", "30"))
    assert ids(await run(ORDERS, *both), "pass") == [1, 3]
    assert ids(await run(ORDERS, *both, combine="or"), "pass") == [1, 2, 3]
    assert ids(await run(ORDERS, *both, combine="or"), "reject") == [4]


async def test_an_empty_side_carries_no_value():
    everything = await run(ORDERS, ("id", "gte", "1"))
    assert set(everything.outputs) == {"pass"}
    nothing = await run(ORDERS, ("id", "gt", "99"))
    assert set(nothing.outputs) == {"reject"}
    assert (await run([], ("id", "gt", "1"))).outputs == {}


async def test_uses_the_conditional_operators_and_case_rule():
    assert {o.value for o in definition.parameter("conditions").fields[1].options} == \
        {o.value for o in OPERATOR_OPTIONS}
    assert ids(await run(ORDERS, ("status", "equals", "closed")), "pass") == [2]
    assert "pass" not in (await run(ORDERS, ("status", "equals", "closed"), case_sensitive=True)).outputs
    assert ids(await run(ORDERS, ("tags", "contains", "gift")), "pass") == [1]
    assert ids(await run(ORDERS, ("status", "is_empty", "")), "pass") == [4]
    assert ids(await run(ORDERS, ("status", "regex", "^o")), "pass") == [1, 3]


async def test_list_field_and_whole_items():
    assert ids(await run({"data": {"orders": ORDERS}}, ("id", "lt", "3"), field="data.orders"), "pass") == [1, 2]
    words = await run(["apple", "kiwi", "avocado"], ("", "starts_with", "a"))
    assert words.outputs == {"pass": ["apple", "avocado"], "reject": ["kiwi"]}


async def test_errors_name_the_item_the_condition_and_the_field():
    with pytest.raises(NodeError, match=r"item 1, condition 1 \(field 'status'\): operator 'gt' compares numbers, "
                                        r"but 'Closed' is not a number"):
        await run(ORDERS, ("total", "gt", "100"), ("status", "gt", "1"))
    with pytest.raises(NodeError, match=r"condition 0: unknown operator 'bigger'"):
        await run(ORDERS, ("total", "bigger", "1"))
    with pytest.raises(NodeError, match=r"condition 0: invalid path 'a\.\.b'"):
        await run(ORDERS, ("a..b", "equals", "1"))
    with pytest.raises(NodeError, match=r"item 0, condition 0 \(field 'status'\): invalid regular expression"):
        await run(ORDERS, ("status", "regex", "[a-"))
    with pytest.raises(NodeError, match="conditions must be a list of at least one"):
        await run(ORDERS, conditions=[])
    with pytest.raises(NodeError, match="combine must be 'and' or 'or'"):
        await run(ORDERS, ("id", "gt", "1"), combine="xor")


async def test_the_list_must_be_there():
    with pytest.raises(NodeError, match=r"nothing at field 'orders'; the input has: data"):
        await run({"data": 1}, ("id", "gt", "1"), field="orders")
    with pytest.raises(NodeError, match=r"the input \(List field is empty\) holds dict .*, not a list"):
        await run({"id": 1}, ("id", "gt", "1"))


async def test_a_regex_condition_tests_the_items_off_the_event_loop_and_stops_when_cancelled():
    """Each search stays under its own 1 s limit, but a list of them blocked every run for the sum (33 s for 100)."""
    slow_items = [{"text": "a" * 22 + "!"} for _ in range(400)]  # ~0.01-0.1 s each for this pattern
    started = time.monotonic()
    async with loop_ticks() as ticks:
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.5):  # what the kernel does for a node's timeout
                await run(slow_items, ("text", "regex", "^(a|aa)+$"))
    waited = time.monotonic() - started
    assert waited < 1.0, waited
    assert ticks[0] >= 10, ticks  # the event loop kept running (blocked, it would not have ticked at all)
    await asyncio.sleep(0.2)  # the item being searched when the timeout came finishes
    cpu = time.process_time()
    await asyncio.sleep(0.5)
    assert time.process_time() - cpu < 0.2  # the thread stopped too, rather than testing the other items
    result = await run(ORDERS, ("status", "regex", "^o"))
    assert ids(result, "pass") == [1, 3] and ids(result, "reject") == [2, 4]
