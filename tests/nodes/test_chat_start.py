"""nodes/trigger/chat_start: the run's payload becomes `{message, chat_id, attachments}`."""

import pytest

from nodeflow_app.contract import CONVERSATION, FlowContext, NodeError
from nodes.trigger.chat_start.definition import definition
from nodes.trigger.chat_start.executor import executor


def ctx(payload, chat_id=None) -> FlowContext:
    return FlowContext(node_id="chat", node_type="chat-start", run_id="run-1", runtime=None,
                       context={CONVERSATION: chat_id} if chat_id else {}, payload=payload)


async def output(payload, chat_id=None):
    result = await executor.execute(definition.defaults(), {}, ctx(payload, chat_id))
    assert list(result.outputs) == ["output"]
    return result.outputs["output"]


def test_is_a_trigger_without_inputs():
    assert definition.trigger and definition.inputs == ()
    assert list(definition.output_sockets()) == ["output"]


async def test_a_string_payload_is_the_message():
    assert await output("Hello", chat_id="c1") == {"message": "Hello", "chat_id": "c1", "attachments": []}


async def test_an_object_payload():
    payload = {"message": "See file", "attachments": [{"name": "a.pdf"}], "chat_id": "from-payload", "extra": 1}
    assert await output(payload) == {"message": "See file", "chat_id": "from-payload",
                                     "attachments": [{"name": "a.pdf"}]}


async def test_the_context_chat_id_wins():
    assert (await output({"message": "x", "chat_id": "old"}, chat_id="current"))["chat_id"] == "current"


async def test_the_example_payload_is_a_valid_chat_message():
    assert await output(definition.example_payload) == {
        "message": definition.example_payload["message"], "chat_id": None, "attachments": []}
    assert definition.started_by == ("chat", "api")


async def test_no_payload_is_an_empty_message():
    assert await output(None) == {"message": "", "chat_id": None, "attachments": []}
    assert await output({"message": None}) == {"message": "", "chat_id": None, "attachments": []}


@pytest.mark.parametrize("payload, got", [({"order": 42}, "an object with order"), ({}, "an empty object")])
async def test_an_object_without_a_message_says_what_chat_start_needs(payload, got):
    """docs/api.md's `{"input": {"order": 42}}` sent to a chat graph ran with an empty message, silently."""
    with pytest.raises(NodeError) as refused:
        await output(payload)
    assert str(refused.value) == f'Chat Start needs a message: send {{"message": "..."}} or a string (got {got})'


async def test_a_single_attachment_becomes_a_list():
    assert (await output({"message": "x", "attachments": {"name": "a.png"}}))["attachments"] == [{"name": "a.png"}]


async def test_bad_payloads():
    with pytest.raises(NodeError, match="a chat message must be text or an object with a message, got int"):
        await output(42)
    with pytest.raises(NodeError, match="attachments must be a list, got str"):
        await output({"message": "x", "attachments": "a.pdf"})
