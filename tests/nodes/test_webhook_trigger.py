"""nodes/trigger/webhook_trigger: the HTTP call becomes `{body, headers, query}`; the example graph runs."""

import json
from pathlib import Path

import pytest

from nodeflow_app.contract import FlowContext, NodeError
from nodeflow_app.runs.launcher import RunLauncher
from nodes.trigger.webhook_trigger.definition import definition
from nodes.trigger.webhook_trigger.executor import executor

EXAMPLE = Path(__file__).parent.parent / "fixtures" / "graphs" / "examples" / "webhook.json"


def ctx(payload) -> FlowContext:
    return FlowContext(node_id="hook", node_type="webhook-trigger", run_id="run-1", runtime=None, context={}, payload=payload)


async def output(payload):
    return (await executor.execute(definition.defaults(), {}, ctx(payload))).outputs["output"]


def test_is_a_trigger_started_by_webhooks():
    assert definition.trigger and definition.inputs == () and definition.started_by == ("webhook",)
    assert definition.parameter("auth_secret").secret


async def test_the_payload_shape_with_lower_case_header_names():
    got = await output({"body": {"a": 1}, "headers": {"X-Token": "t"}, "query": {"q": "1"}})
    assert got == {"body": {"a": 1}, "headers": {"x-token": "t"}, "query": {"q": "1"}}


async def test_missing_parts_are_empty_and_a_bare_value_is_the_body():
    assert await output(None) == {"body": None, "headers": {}, "query": {}}
    assert await output("plain text") == {"body": "plain text", "headers": {}, "query": {}}


async def test_headers_that_are_not_an_object_are_a_clear_error():
    with pytest.raises(NodeError, match="headers must be an object"):
        await output({"headers": ["x"]})


async def test_the_example_graph_answers_with_its_last_node(tmp_path):
    launcher = RunLauncher(f"sqlite:///{tmp_path / 'db.sqlite'}")
    try:
        payload = {"body": {"sku": "pen", "qty": 3}, "headers": {}, "query": {"source": "shop"}}
        run = await launcher.start(json.loads(EXAMPLE.read_text()), started_by="webhook", payload=payload).run()
        assert run.status == "completed"
        assert run.outputs_by_name()["Answer"]["output"] == {"sku": "pen", "qty": 3, "source": "shop",
                                                            "status": "accepted"}
    finally:
        launcher.close()
