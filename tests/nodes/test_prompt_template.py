"""nodes/ai/prompt_template: `{name}` / `{a.b[0]}` placeholders from variables, then input fields."""

import pytest

from nodeflow_app.contract import ExecutionResult, FlowContext, NodeError
from nodes.ai.prompt_template.definition import definition
from nodes.ai.prompt_template.executor import executor


def ctx() -> FlowContext:
    return FlowContext(node_id="prompt-1", node_type="prompt-template", run_id="run-1", runtime=None)


async def run(input, template, **data) -> ExecutionResult:
    return await executor.execute({**definition.defaults(), "template": template, **data}, {"input": input}, ctx())


def test_prompt_output_is_a_text_flow_socket():
    prompt = definition.output_sockets()["prompt"]
    assert (prompt.type, prompt.channel, prompt.side) == ("text", "flow", "right")


async def test_default_template_uses_the_chat_message():
    result = await executor.execute(definition.defaults(), {"input": {"message": "Why?"}}, ctx())
    assert result.outputs == {"output": {"text": "Answer the question: Why?"}, "prompt": "Answer the question: Why?"}


async def test_variables_then_input_fields():
    source = {"topic": "from input", "user": {"name": "Ada", "langs": ["fr", "en"]}}
    template = "Write about {topic} for {user.name} in {user.langs[-1]} ({ tone })."
    result = await run(source, template, variables=[{"name": "topic", "value": "owls"}, {"name": "tone", "value": "dry"}])
    assert result.outputs["prompt"] == "Write about owls for Ada in en (dry)."
    assert result.outputs["output"] == {"text": "Write about owls for Ada in en (dry)."}


async def test_variables_as_an_object_and_values_of_any_type():
    variables = {"n": 3, "ok": True, "none": None, "obj": {"a": [1]}}
    result = await run(None, "{n}|{ok}|{none}|{obj}|{obj.a[0]}", variables=variables)
    assert result.outputs["prompt"] == '3|true||{"a":[1]}|1'


async def test_other_braces_are_left_alone():
    template = 'Reply as JSON like {"answer": "..."} or {} or {0} about {q}.'
    result = await run({"q": "cats"}, template)
    assert result.outputs["prompt"] == 'Reply as JSON like {"answer": "..."} or {} or {0} about cats.'


async def test_a_template_without_placeholders_is_returned_as_is():
    assert (await run("ignored", "Just text.")).outputs["prompt"] == "Just text."
    assert (await run(None, "")).outputs == {"output": {"text": ""}, "prompt": ""}


async def test_unknown_variable_lists_the_available_ones():
    with pytest.raises(NodeError, match=r"unknown variable \{language\}; available: message, style"):
        await run({"message": "hi"}, "Say {message} in {language}", variables={"style": "terse"})
    with pytest.raises(NodeError, match=r"unknown variable \{user\.email\}; available: user"):
        await run({"user": {"name": "Ada"}}, "{user.email}")
    with pytest.raises(NodeError, match=r"unknown variable \{x\}; available: none \(add variables"):
        await run("a string input has no fields", "{x}")


async def test_the_prompt_stops_at_its_limit(monkeypatch):
    """Each placeholder copies its value: a short template repeating one over a large input asked for gigabytes."""
    from nodes.ai.prompt_template import executor as module

    monkeypatch.setattr(module, "MAX_TEXT_CHARS", 1_000, raising=False)
    source = {"a": "x" * 300}
    assert (await run(source, "{a}-{a}-{a}")).outputs["prompt"] == "-".join(["x" * 300] * 3)
    with pytest.raises(NodeError, match=r"^the prompt would be over 1,000 characters \(at \{a\}\); use each large "
                                        r"value once$"):
        await run(source, "{a}" * 4)
