"""nodes/flow/wait: a progress event, a (cancellable) sleep, then the input unchanged."""

import asyncio
import time

import pytest

from nodeflow_app.contract import ExecutionResult, FlowContext, NodeError, NodeEvent
from nodes.flow.wait.definition import definition
from nodes.flow.wait import executor as wait_module
from nodes.flow.wait.executor import executor


def ctx() -> FlowContext:
    return FlowContext(node_id="wait-1", node_type="wait", run_id="run-1", runtime=None)


async def collect(input, **data) -> list:
    return [item async for item in executor.execute({**definition.defaults(), **data}, {"input": input}, ctx())]


async def test_emits_progress_then_passes_the_input_through():
    payload = {"a": [1]}
    started = time.monotonic()
    event, result = await collect(payload, amount=0.02)
    assert time.monotonic() - started >= 0.015
    assert isinstance(event, NodeEvent)
    assert (event.event_type, event.node_id, event.run_id, event.data) == (
        "progress", "wait-1", "run-1", {"message": "Waiting 0.02 seconds"})
    assert isinstance(result, ExecutionResult)
    assert result.outputs == {"output": payload} and result.outputs["output"] is payload


@pytest.mark.parametrize("amount, unit, seconds, message", [
    (1, "seconds", 1, "Waiting 1 second"),
    (2, "minutes", 120, "Waiting 2 minutes"),
    (1.5, "hours", 5400, "Waiting 1.5 hours"),
    ("3", "seconds", 3, "Waiting 3 seconds"),  # an expression may resolve to text
    (0, "seconds", 0, "Waiting 0 seconds"),
])
async def test_units(monkeypatch, amount, unit, seconds, message):
    slept = []

    async def fake_sleep(duration):
        slept.append(duration)

    monkeypatch.setattr(wait_module.asyncio, "sleep", fake_sleep)
    event, result = await collect("x", amount=amount, unit=unit)
    assert slept == [seconds]
    assert event.data["message"] == message
    assert result.outputs == {"output": "x"}


async def test_cancelling_stops_the_wait():
    async def drain():
        return await collect("x", amount=10)

    task = asyncio.create_task(drain())
    await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


@pytest.mark.parametrize("amount", [-1, "soon", None, float("inf")])
async def test_bad_amount(amount):
    with pytest.raises(NodeError, match="amount must be a number of at least 0"):
        await collect("x", amount=amount)


async def test_bad_unit():
    with pytest.raises(NodeError, match="unknown unit 'days'; use seconds, minutes or hours"):
        await collect("x", amount=0, unit="days")


def test_is_not_a_side_effect():
    assert definition.side_effects is False


# --- the maximum wait: 1 hour, in any unit -----------------------------------------------------------

def wait_graph(**data) -> dict:
    """Start --> Wait (`data`) on the real registry."""
    return {"name": "t", "nodes": [{"id": "s", "type": "manual-trigger", "name": "Start", "data": {}},
                                   {"id": "w", "type": "wait", "name": "Pause", "data": data}],
            "edges": [{"id": "e0", "source": "s", "sourceHandle": "output", "target": "w", "targetHandle": "input",
                       "data": {"channel": "flow"}}]}


@pytest.mark.parametrize("amount, unit, bound", [(3601, "seconds", 3600), (61, "minutes", 60), (1.5, "hours", 1)])
def test_validate_refuses_a_wait_over_an_hour_naming_node_and_parameter(amount, unit, bound):
    from nodeflow_app.validation import node_issues, validate_graph
    from nodes._registry import default_registry

    lines = [issue.line() for issue in validate_graph(wait_graph(amount=amount, unit=unit), default_registry())[1]]
    assert lines == [f"node w 'Pause', parameter 'amount': invalid_parameter: {amount:g} is above the maximum "
                     f"{bound:g} when unit is '{unit}'"]
    assert not validate_graph(wait_graph(amount=bound, unit=unit), default_registry())[1]
    graph, _ = validate_graph(wait_graph(amount=amount, unit=unit), default_registry())
    graph.nodes[1].data["amount"] = amount  # as the inspector shows a node being edited
    assert [issue.message for issue in node_issues(graph, default_registry(), "w")] == [
        f"{amount:g} is above the maximum {bound:g} when unit is '{unit}'"]


@pytest.mark.parametrize("data, payload, message", [
    ({"amount": "{{ $json.n }}", "unit": "minutes"}, {"n": 90}, "90 is above the maximum 60 when unit is 'minutes'"),
    ({"amount": 2, "unit": "{{ $json.u }}"}, {"u": "hours"}, "2 is above the maximum 1 when unit is 'hours'"),
])
async def test_a_wait_over_an_hour_from_an_expression_fails_before_waiting(data, payload, message):
    from nodeflow_app.runtime.engine import start_run
    from nodes._registry import default_registry

    run = start_run(wait_graph(**data), default_registry(), payload=payload)
    async with asyncio.timeout(5):  # it would wait 90 minutes (or 2 hours)
        [event async for event in run.events()]
    assert run.error == f"node 'Pause' failed: parameter 'amount': {message}"


def test_the_maximum_is_documented():
    assert "at most 1 hour" in definition.description
