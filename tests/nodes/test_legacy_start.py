"""nodes/trigger/legacy_start: the run's payload, else the Initial input, becomes `{text}`."""

import pytest

from nodeflow_app.contract import FlowContext, NodeError
from nodes.trigger.legacy_start.definition import definition
from nodes.trigger.legacy_start.executor import executor


async def output(payload, initial_input=""):
    ctx = FlowContext(node_id="start", node_type="legacy-start", run_id="run-1", runtime=None, payload=payload)
    result = await executor.execute({**definition.defaults(), "initial_input": initial_input}, {}, ctx)
    return result.outputs["output"]


def test_is_a_trigger_with_one_output():
    assert definition.trigger and definition.inputs == ()
    assert list(definition.output_sockets()) == ["output"]


async def test_without_a_payload_the_initial_input_is_the_text():
    assert await output(None, "Bonjour") == {"text": "Bonjour"}
    assert await output(None) == {"text": ""}  # the older runtime's `initialInput || ''`


async def test_a_payload_replaces_the_initial_input():
    assert await output("Salut", "Bonjour") == {"text": "Salut"}
    assert await output({"text": "Hi"}, "Bonjour") == {"text": "Hi"}
    assert await output(42) == {"text": "42"}


@pytest.mark.parametrize(("payload", "message"), [
    ({"message": "x"}, "an object with a text, got keys ['message']"),
    ([1, 2], "got a list"),
])
async def test_other_payloads_are_refused(payload, message):
    with pytest.raises(NodeError, match=message.replace("[", r"\[").replace("]", r"\]")):
        await output(payload)
