"""nodes/trigger/mcp_tool: the run's payload is the tool's arguments, checked against the node's schema."""

import json
from pathlib import Path

import pytest

from nodeflow_app.contract import FlowContext, NodeError
from nodes.trigger.mcp_tool.definition import definition
from nodes.trigger.mcp_tool.executor import executor, input_schema, tool_name
from tests.llm.graphs import run_graph


def ctx(payload) -> FlowContext:
    return FlowContext(node_id="tool", node_type="mcp-tool", run_id="run-1", runtime=None, context={},
                       payload=payload)


async def output(payload, **data):
    result = await executor.execute({**definition.defaults(), **data}, {}, ctx(payload))
    return result.outputs["output"]


def test_is_a_trigger_the_mcp_endpoint_starts():
    assert definition.trigger and definition.inputs == () and definition.started_by == ("mcp",)


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
