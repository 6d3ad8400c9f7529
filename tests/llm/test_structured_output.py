"""nodes/ai/structured_output through real Agno and real HTTP against the fake OpenAI server.

    Chat Start --> Structured Output
"""

from __future__ import annotations

import json

import pytest

from nodes.ai.structured_output.json_schema import schema_problem, value_problem
from tests.llm.fake_openai import http_error, text
from tests.llm.graphs import MODEL, graph, of, run_graph

ORDER = {"type": "object", "required": ["customer", "items"], "properties": {
    "customer": {"type": "string"},
    "items": {"type": "array", "items": {"type": "object", "required": ["sku", "quantity"], "properties": {
        "sku": {"type": "string"}, "quantity": {"type": "integer"}}}},
    "priority": {"type": "string", "enum": ["low", "high"]},
}}


def structured_graph(**data) -> dict:
    return graph([("chat", "chat-start", {}), ("so", "structured-output", {"model": MODEL, **data})],
                 ["chat.output -> so.input"])


def error_of(events) -> str:
    [error] = of(events, "so", "error")
    return error.data["error"]


async def test_the_answer_comes_out_parsed_and_the_request_carries_the_schema(fake_llm):
    answer = {"customer": "Ada", "items": [{"sku": "A-1", "quantity": 2}], "priority": "high"}
    fake_llm.script(text(json.dumps(answer)))
    run, events = await run_graph(structured_graph(schema=ORDER, instructions="Extract the order.",
                                                   temperature=0), payload="Ada wants two A-1, quickly")
    assert run.status == "completed", run.error
    assert run.outputs_by_name()["SO"]["output"] == answer
    assert of(events, "so", "token") == []  # one answer, nothing streamed
    [request] = fake_llm.requests
    assert request.get("stream") is not True and request["temperature"] == 0
    assert request["messages"] == [{"role": "system", "content": "Extract the order."},
                                   {"role": "user", "content": "Ada wants two A-1, quickly"}]
    sent = request["response_format"]
    assert sent["type"] == "json_schema"
    schema = sent["json_schema"]["schema"]
    assert schema["properties"]["items"]["items"]["properties"]["quantity"] == {"type": "integer"}
    assert schema["properties"]["priority"]["enum"] == ["low", "high"]


async def test_default_schema_and_a_prompt_expression(fake_llm):
    fake_llm.script(text('```json\n{"answer": "Paris"}\n```'))  # a fenced answer is still JSON
    run, _ = await run_graph(structured_graph(prompt="Capital of {{ $json.message }}?"), payload="France")
    assert run.status == "completed", run.error
    assert run.outputs_by_name()["SO"]["output"] == {"answer": "Paris"}
    assert fake_llm.requests[0]["messages"] == [{"role": "user", "content": "Capital of France?"}]
    assert fake_llm.requests[0]["response_format"]["json_schema"]["schema"]["required"] == ["answer"]


async def test_an_answer_that_is_not_json_is_an_error_quoting_it(fake_llm):
    fake_llm.script(text("Sorry, I cannot help with that."))
    run, events = await run_graph(structured_graph(), payload="hi")
    assert run.status == "failed"
    assert error_of(events) == ('openai-compatible:fake-model did not answer with JSON; its answer starts: '
                                '"Sorry, I cannot help with that."')


@pytest.mark.parametrize("answer, problem", [
    ({"customer": "Ada", "items": [{"sku": "A-1", "quantity": "two"}]},
     "field 'items[0].quantity' should be integer, got a string \"two\""),
    ({"customer": "Ada"}, "field 'items' is required but missing"),
    ({"customer": "Ada", "items": [], "priority": "urgent"},
     "field 'priority' should be one of \"low\", \"high\", got a string \"urgent\""),
])
async def test_json_that_breaks_the_schema_names_the_field(fake_llm, answer, problem):
    fake_llm.script(text(json.dumps(answer)))
    run, events = await run_graph(structured_graph(schema=ORDER), payload="hi")
    assert run.status == "failed"
    message = error_of(events)
    assert message.startswith("openai-compatible:fake-model's answer does not match the schema: ")
    assert problem in message
    assert '; its answer starts: "{\\"customer\\": \\"Ada\\"' in message


async def test_a_long_rejected_answer_is_cut_in_the_message(fake_llm):
    fake_llm.script(text("x" * 1000))
    run, events = await run_graph(structured_graph(), payload="hi")
    assert error_of(events).endswith('"' + "x" * 200 + '…"')


@pytest.mark.parametrize("schema, problem", [
    ("{not json", "parameter 'schema' is not valid JSON"),
    ("[" * 100_000, "parameter 'schema' is nested too deeply to read"),
    ({"type": "object", "properties": {"n": {"type": "int"}}}, "unknown type 'int' at n"),
    ({"type": "object", "required": "answer"}, "'required' must be a list of field names"),
    ({"type": "array", "items": {"type": "string"}}, "parameter 'schema' must describe an object at its root"),
    ({"type": "object", "properties": {"tags": {"type": "array", "items": "string"}}},
     "expected a JSON object at tags[], got a string \"string\""),
])
async def test_an_invalid_schema_parameter_is_named_and_nothing_is_sent(fake_llm, schema, problem):
    run, events = await run_graph(structured_graph(schema=schema), payload="hi")
    assert run.status == "failed"
    assert problem in error_of(events) and "parameter 'schema'" in error_of(events)
    assert fake_llm.requests == []


async def test_provider_http_500_names_provider_model_and_status(fake_llm):
    fake_llm.script(http_error(500, "the GPU caught fire"))
    run, events = await run_graph(structured_graph(), payload="hi")
    assert run.status == "failed"
    assert error_of(events) == "model openai-compatible:fake-model failed (HTTP 500): the GPU caught fire"
    assert len(fake_llm.requests) == 1


async def test_empty_prompt_and_input_is_an_error(fake_llm):
    run, events = await run_graph(structured_graph(), payload="")
    assert "nothing to ask" in error_of(events)
    assert fake_llm.requests == []


# The checker on its own ---------------------------------------------------------------------------

def test_checker_types_and_nesting():
    assert schema_problem(ORDER) is None
    assert value_problem({"customer": "Ada", "items": []}, ORDER) is None
    assert value_problem(1.0, {"type": "integer"}) is None
    assert value_problem(True, {"type": "integer"}) == "the answer should be integer, got a boolean true"
    assert value_problem(None, {"type": ["string", "null"]}) is None
    assert value_problem(1, {"enum": [True]}) == "the answer should be one of true, got an integer 1"
    closed = {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": False}
    assert value_problem({"a": "x", "b": 1}, closed) == (
        "field 'b' is not in the schema (additionalProperties is false)")
    typed_map = {"type": "object", "additionalProperties": {"type": "number"}}
    assert value_problem({"x": 1, "y": "2"}, typed_map) == "field 'y' should be number, got a string \"2\""
