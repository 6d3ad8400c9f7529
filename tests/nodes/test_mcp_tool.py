"""nodes/trigger/mcp_tool: the run's payload is the tool's arguments, checked against the node's schema."""

import asyncio
import json
import time
from pathlib import Path

import pytest

from nodeflow_app.contract import FlowContext, NodeError
from nodes.trigger.mcp_tool.definition import definition
from nodes.trigger.mcp_tool.executor import executor, input_schema, tool_name
from tests.llm.graphs import run_graph
from tests.nodes.loop_ticks import loop_ticks


def ctx(payload) -> FlowContext:
    return FlowContext(node_id="tool", node_type="mcp-tool", run_id="run-1", runtime=None, context={},
                       payload=payload)


async def output(payload, **data):
    result = await executor.execute({**definition.defaults(), **data}, {}, ctx(payload))
    return result.outputs["output"]


def test_is_a_trigger_the_mcp_endpoint_starts():
    assert definition.trigger and definition.inputs == () and definition.started_by == ("mcp", "api")


async def test_the_arguments_are_the_output():
    assert await output({"city": "Paris"}) == {"city": "Paris"}
    assert await output(definition.example_payload) == definition.example_payload


async def test_arguments_the_schema_refuses_are_an_error_naming_where():
    with pytest.raises(NodeError, match="at arguments: 'city' is a required property"):
        await output({})
    with pytest.raises(NodeError, match="at city: 7 is not of type 'string'"):
        await output({"city": 7})


async def test_no_schema_accepts_any_object_and_no_arguments():
    assert await output(None, input_schema={}) == {}
    with pytest.raises(NodeError, match="is not of type 'object'"):
        await output([1], input_schema={})


@pytest.mark.parametrize("schema, message", [({"type": "string"}, "must be a JSON Schema of an object"),
                                             ({"type": "object", "properties": 3}, "not valid JSON Schema")])
def test_a_bad_schema_says_why(schema, message):
    with pytest.raises(NodeError, match=message):
        input_schema({"input_schema": schema})


@pytest.mark.parametrize("reference", ["file:///etc/passwd", "http://127.0.0.1:9/schema.json", "other.json#/a"])
def test_a_ref_outside_the_schema_is_refused_rather_than_fetched(reference):
    """jsonschema fetched any URL or file a $ref named (past the SSRF guard), and its content showed in errors."""
    schema = {"type": "object", "properties": {"a": {"$ref": reference}}}
    with pytest.raises(NodeError, match="points outside the schema; refer to its own parts only"):
        input_schema({"input_schema": schema})
    nested = {"type": "object", "properties": {"a": {"anyOf": [{"type": "integer"}, {"$dynamicRef": reference}]}}}
    with pytest.raises(NodeError, match="points outside the schema"):
        input_schema({"input_schema": nested})


async def test_refs_inside_the_schema_resolve_and_one_to_nothing_says_so():
    defined = {"type": "object", "$id": "http://127.0.0.1:9/root.json", "$defs": {"n": {"type": "integer"}},
               "properties": {"a": {"$ref": "#/$defs/n"}}}
    assert await output({"a": 3}, input_schema=defined) == {"a": 3}
    with pytest.raises(NodeError, match="at a: 'x' is not of type 'integer'"):
        await output({"a": "x"}, input_schema=defined)
    with pytest.raises(NodeError, match=r"the input schema's \$ref '/\$defs/nope' points to nothing in the schema"):
        await output({"a": 1}, input_schema={"type": "object", "properties": {"a": {"$ref": "#/$defs/nope"}}})


async def test_the_schemas_regular_expressions_stop_at_their_time_limit():
    """Python's re held the event loop for as long as a backtracking pattern took (an MCP client picks the text)."""
    slow = {"type": "object", "properties": {"a": {"type": "string", "pattern": "^(a|a)*$"}}}
    with pytest.raises(NodeError, match=r"took longer than 1 s"):
        await output({"a": "a" * 40 + "!"}, input_schema=slow)
    keyed = {"type": "object", "patternProperties": {"^(a|a)*$": {"type": "integer"}}}
    with pytest.raises(NodeError, match=r"took longer than 1 s"):
        await output({"a" * 40 + "!": 1}, input_schema=keyed)
    closed = {"type": "object", "patternProperties": {"^x": {"type": "integer"}}, "additionalProperties": False}
    assert await output({"xa": 1}, input_schema=closed) == {"xa": 1}
    with pytest.raises(NodeError, match="at xa: 'one' is not of type 'integer'"):
        await output({"xa": "one"}, input_schema=closed)
    with pytest.raises(NodeError, match="unexpected properties: 'b'"):
        await output({"xa": 1, "b": 2}, input_schema=closed)
    assert await output({"a": "abc"}, input_schema={"type": "object", "properties": {
        "a": {"type": "string", "pattern": "^ab"}}}) == {"a": "abc"}
    unevaluated = {"type": "object", "patternProperties": {"^x": {}}, "unevaluatedProperties": False}
    with pytest.raises(NodeError, match="uses both patternProperties and unevaluatedProperties"):  # read with re
        await output({"xa": 1}, input_schema=unevaluated)


async def test_the_arguments_are_checked_off_the_event_loop_and_stop_when_cancelled():
    """Each search stays under its 1 s limit, but 40 values of them held the event loop for 15 s."""
    many = {"type": "object", "properties": {"items": {"type": "array", "items": {"pattern": "^(a|aa)+$"}}}}
    started = time.monotonic()
    async with loop_ticks() as ticks:
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.5):  # what the kernel does for a node's timeout
                await output({"items": ["a" * 22 + "!"] * 400}, input_schema=many)
    assert time.monotonic() - started < 1.0 and ticks[0] >= 10, ticks
    await asyncio.sleep(0.2)  # the search under way when the timeout came finishes
    cpu = time.process_time()
    await asyncio.sleep(0.5)
    assert time.process_time() - cpu < 0.2  # the thread stopped too


@pytest.mark.parametrize("name", ["", "has space", "x" * 65, "émoji"])
def test_a_bad_tool_name_says_why(name):
    with pytest.raises(NodeError, match="must be 1-64 letters"):
        tool_name({"tool_name": name})
    assert tool_name({"tool_name": " get_weather "}) == "get_weather"


async def test_the_example_graph_answers_a_tool_call():
    example = json.loads((Path(__file__).parents[1] / "fixtures/graphs/examples/mcp_tool.json").read_text())
    run, _events = await run_graph(example, {"order_id": 42})
    assert run.status == "completed"
    assert run.outputs_by_name()["Status"] == {"output": {"order": 42, "status": "shipped"}}
    failed, _events = await run_graph(example, {"order_id": 0})
    assert failed.status == "failed" and "0 is less than the minimum of 1" in failed.error
