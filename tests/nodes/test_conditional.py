"""nodes/flow/conditional: one test on a field; the input leaves unchanged on `true` or `false`."""

import pytest

from nodeflow_app.contract import ExecutionResult, FlowContext, NodeError
from nodes.flow.conditional.definition import definition
from nodes.flow.conditional.executor import executor

USER = {"user": {"name": "Ada", "age": 36, "tags": ["admin"]}, "note": ""}


def ctx() -> FlowContext:
    return FlowContext(node_id="if-1", node_type="conditional", run_id="run-1", runtime=None)


async def run(input, **data) -> ExecutionResult:
    return await executor.execute({**definition.defaults(), **data}, {"input": input}, ctx())


@pytest.mark.parametrize("field, operator, value, port", [
    ("user.name", "equals", "ada", "true"),
    ("user.name", "not_equals", "ada", "false"),
    ("user.name", "contains", "D", "true"),
    ("user.name", "not_contains", "x", "true"),
    ("user.name", "starts_with", "Ad", "true"),
    ("user.name", "ends_with", "z", "false"),
    ("user.age", "gt", "18", "true"),
    ("user.age", "gte", "37", "false"),
    ("user.age", "lt", "40", "true"),
    ("user.age", "lte", "36", "true"),
    ("note", "is_empty", "", "true"),
    ("note", "is_not_empty", "", "false"),
    ("user.name", "regex", "^a.a$", "true"),
    ("user.tags", "contains", "admin", "true"),
    ("user.tags[0]", "equals", "admin", "true"),
])
async def test_every_operator_routes_the_input_unchanged(field, operator, value, port):
    result = await run(USER, field=field, operator=operator, value=value)
    assert result.outputs == {port: USER}
    assert result.outputs[port] is USER


async def test_empty_field_tests_the_whole_input():
    assert (await run("yes please", operator="starts_with", value="yes")).outputs == {"true": "yes please"}
    assert (await run(None, operator="is_empty")).outputs == {"true": None}


@pytest.mark.parametrize("operator, port", [("is_empty", "true"), ("is_not_empty", "false"),
                                            ("equals", "false"), ("not_equals", "false"), ("gt", "false")])
async def test_missing_field_counts_as_empty(operator, port):
    assert (await run(USER, field="user.email", operator=operator, value="x")).outputs == {port: USER}


async def test_case_sensitive():
    assert (await run(USER, field="user.name", value="ada", case_sensitive=True)).outputs == {"false": USER}
    assert (await run(USER, field="user.name", value="Ada", case_sensitive=True)).outputs == {"true": USER}


async def test_value_may_arrive_as_any_type():
    # A wired or single-expression value arrives raw (the kernel puts it into data), e.g. a number.
    assert (await run(USER, field="user.age", operator="equals", value=36)).outputs == {"true": USER}
    assert (await run(USER, field="user.age", operator="gt", value=35.5)).outputs == {"true": USER}


async def test_non_numeric_side_names_the_value_and_field():
    with pytest.raises(NodeError, match=r"field 'user.name': operator 'gt' compares numbers, but 'Ada' is not a number"):
        await run(USER, field="user.name", operator="gt", value="3")
    with pytest.raises(NodeError, match=r"operator 'lt' compares numbers, but 'ten' is not a number"):
        await run(USER, field="user.age", operator="lt", value="ten")


async def test_bad_regex():
    with pytest.raises(NodeError, match=r"invalid regular expression '\[a-'"):
        await run(USER, field="user.name", operator="regex", value="[a-")


async def test_bad_field_path():
    with pytest.raises(NodeError, match=r"invalid path 'user\.\.name'"):
        await run(USER, field="user..name")


async def test_a_catastrophic_regex_honours_the_node_timeout_and_never_blocks_other_runs():
    import asyncio
    import time

    from nodeflow_app.runtime.engine import start_run
    from nodes._registry import default_registry

    def graph(text: str) -> dict:
        #  Start --> Check (regex, timeout 0.3 s)
        return {"id": "g", "name": "g", "nodes": [
            {"id": "t", "type": "manual-trigger", "name": "Start", "data": {"payload": {"text": text}}},
            {"id": "c", "type": "conditional", "name": "Check", "settings": {"timeout": 0.3},
             "data": {"field": "text", "operator": "regex", "value": "^(a|a)*$"}}],
            "edges": [{"id": "e", "source": "t", "sourceHandle": "output", "target": "c", "targetHandle": "input",
                       "data": {"channel": "flow"}}]}

    registry = default_registry()
    started = time.monotonic()
    slow, quick = await asyncio.gather(start_run(graph("a" * 40 + "!"), registry, trigger="t").run(),
                                       start_run(graph("aaa"), registry, trigger="t").run())
    assert time.monotonic() - started < 1.5
    assert slow.status == "failed" and slow.error == "node 'Check' failed: node 'Check' timed out after 0.3 s"
    assert quick.status == "completed" and quick.records["c"].outputs == {"true": {"text": "aaa"}}
    assert quick.records["c"].duration_ms < 200  # not held up by the other run's search
