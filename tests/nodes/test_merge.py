"""nodes/flow/merge: several branches' values (a list in arrival order) become one value."""

import pytest

from nodeflow_app.contract import ExecutionResult, FlowContext, NodeError
from nodes.flow.merge.definition import definition
from nodes.flow.merge.executor import executor


def ctx() -> FlowContext:
    return FlowContext(node_id="merge-1", node_type="merge", run_id="run-1", runtime=None)


async def run(delivered, **data) -> ExecutionResult:
    inputs = {} if delivered is None else {"input": delivered}
    return await executor.execute({**definition.defaults(), **data}, inputs, ctx())


def test_input_takes_many_values():
    assert definition.input_sockets()["input"].multiple is True


async def test_append_flattens_lists_and_appends_other_values():
    delivered = [[1, 2], {"a": 1}, "x", [[3]], None]
    assert (await run(delivered)).outputs == {"output": [1, 2, {"a": 1}, "x", [3], None]}


async def test_append_with_one_branch_dead():
    assert (await run([{"only": True}])).outputs == {"output": [{"only": True}]}
    assert (await run([[1, 2]])).outputs == {"output": [1, 2]}
    assert (await run(None)).outputs == {"output": []}


async def test_append_does_not_mutate_inputs():
    first = [1]
    await run([first, [2]])
    assert first == [1]


async def test_combine_by_key_merges_in_order_of_first_appearance():
    users = [{"id": 1, "name": "Ada"}, {"id": 2, "name": "Bob"}]
    scores = [{"id": 2, "score": 7, "name": "Robert"}, {"id": 3, "score": 9}, {"id": 1, "score": 5}]
    result = await run([users, scores], mode="combine_by_key", key="id")
    assert result.outputs == {"output": [
        {"id": 1, "name": "Ada", "score": 5},
        {"id": 2, "name": "Robert", "score": 7},
        {"id": 3, "score": 9},
    ]}
    assert users == [{"id": 1, "name": "Ada"}, {"id": 2, "name": "Bob"}]


async def test_combine_by_key_accepts_single_objects_nested_keys_and_structured_key_values():
    delivered = [{"user": {"id": "a"}, "x": 1}, [{"user": {"id": "a"}, "y": 2}, {"user": {"id": "b"}}]]
    result = await run(delivered, mode="combine_by_key", key="user.id")
    assert result.outputs == {"output": [{"user": {"id": "a"}, "x": 1, "y": 2}, {"user": {"id": "b"}}]}
    assert (await run([{"k": [1, 2], "a": 1}, {"k": [1, 2], "b": 2}], mode="combine_by_key", key="k")).outputs == {
        "output": [{"k": [1, 2], "a": 1, "b": 2}]}


async def test_combine_by_key_keeps_different_types_apart():
    result = await run([[{"id": 1, "a": 1}], [{"id": "1", "b": 2}]], mode="combine_by_key", key="id")
    assert result.outputs == {"output": [{"id": 1, "a": 1}, {"id": "1", "b": 2}]}


async def test_combine_by_key_errors_name_the_input():
    with pytest.raises(NodeError, match="input 1 item 0 has no key 'id'"):
        await run([[{"id": 1}], [{"name": "x"}]], mode="combine_by_key", key="id")
    with pytest.raises(NodeError, match="input 0 has no key 'id'"):
        await run([{"name": "x"}], mode="combine_by_key", key="id")
    with pytest.raises(NodeError, match="input 1 item 1 is a str, not an object"):
        await run([[], [{"id": 1}, "text"]], mode="combine_by_key", key="id")
    with pytest.raises(NodeError, match="Combine by key needs a key"):
        await run([[{"id": 1}]], mode="combine_by_key", key=" ")


async def test_first_arrival():
    assert (await run([{"fast": 1}, {"slow": 2}], mode="first_arrival")).outputs == {"output": {"fast": 1}}
    assert (await run([[1, 2]], mode="first_arrival")).outputs == {"output": [1, 2]}
    assert (await run(None, mode="first_arrival")).outputs == {"output": None}


async def test_unknown_mode():
    with pytest.raises(NodeError, match="unknown mode 'zip'"):
        await run([1], mode="zip")
