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
