"""nodes/flow/wait: a progress event, a (cancellable) sleep, then the input unchanged; over a minute, a timed pause
on record that passes the input on when answered."""

import asyncio
import time

import pytest

from nodeflow_app.contract import ExecutionResult, FlowContext, NodeError, NodeEvent, WaitForInput
from nodes.flow.wait.definition import definition
from nodes.flow.wait import executor as wait_module
from nodes.flow.wait.executor import executor


def ctx(resume_payload=None) -> FlowContext:
    return FlowContext(node_id="wait-1", node_type="wait", run_id="run-1", runtime=None, resume_payload=resume_payload)


async def collect(input, resume_payload=None, **data) -> list:
    return [item async for item in executor.execute({**definition.defaults(), **data}, {"input": input},
                                                    ctx(resume_payload))]


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
    (1, "minutes", 60, "Waiting 1 minute"),  # the longest wait in memory
    (0.01, "hours", 36, "Waiting 0.01 hours"),
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
    with pytest.raises(NodeError, match="unknown unit 'weeks'; use seconds, minutes, hours or days"):
        await collect("x", amount=0, unit="weeks")


@pytest.mark.parametrize("amount, unit, seconds, shown", [
    (61, "seconds", 61, "61 seconds"), (2, "minutes", 120, "2 minutes"), (1.5, "hours", 5400, "1.5 hours"),
    (30, "days", 30 * 86400, "30 days"),
])
async def test_over_a_minute_it_pauses_on_record_until_a_time(monkeypatch, amount, unit, seconds, shown):
    async def no_sleep(_):
        raise AssertionError("a long wait must not sleep in memory")

    monkeypatch.setattr(wait_module.asyncio, "sleep", no_sleep)
    before = time.time()
    [result] = await collect({"a": 1}, amount=amount, unit=unit)
    wait = result.wait
    assert isinstance(wait, WaitForInput) and result.outputs == {}
    assert before + seconds <= wait.resume_at <= time.time() + seconds
    assert wait.options == ["resume now"]
    assert wait.prompt.startswith(f"Waiting {shown}, until ") and wait.prompt.endswith(" UTC")
    assert wait.prompt.endswith(wait.detail["until"])


async def test_answered_it_passes_the_input_on():
    payload = {"a": [1]}
    [result] = await collect(payload, {"decision": "resume now", "by": "timer"}, amount=2, unit="hours")
    assert result.outputs == {"output": payload} and result.outputs["output"] is payload


# --- the maximum wait: 30 days, in any unit ----------------------------------------------------------

def wait_graph(**data) -> dict:
    """Start --> Wait (`data`) on the real registry."""
    return {"name": "t", "nodes": [{"id": "s", "type": "manual-trigger", "name": "Start", "data": {}},
                                   {"id": "w", "type": "wait", "name": "Pause", "data": data}],
            "edges": [{"id": "e0", "source": "s", "sourceHandle": "output", "target": "w", "targetHandle": "input",
                       "data": {"channel": "flow"}}]}


@pytest.mark.parametrize("amount, unit, bound", [(2592001, "seconds", 2592000), (43201, "minutes", 43200),
                                                 (721, "hours", 720), (30.5, "days", 30)])
def test_validate_refuses_a_wait_over_30_days_naming_node_and_parameter(amount, unit, bound):
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
    ({"amount": "{{ $json.n }}", "unit": "days"}, {"n": 90}, "90 is above the maximum 30 when unit is 'days'"),
    ({"amount": 800, "unit": "{{ $json.u }}"}, {"u": "hours"}, "800 is above the maximum 720 when unit is 'hours'"),
])
async def test_a_wait_over_30_days_from_an_expression_fails_before_waiting(data, payload, message):
    from nodeflow_app.runtime.engine import start_run
    from nodes._registry import default_registry

    run = start_run(wait_graph(**data), default_registry(), payload=payload)
    async with asyncio.timeout(5):
        [event async for event in run.events()]
    assert run.error == f"node 'Pause' failed: parameter 'amount': {message}"


async def test_where_nothing_could_resume_a_pause_a_long_wait_sleeps(monkeypatch):
    """A run nothing persists (here), or a step inside a For Each or Loop."""
    from nodeflow_app.runtime.engine import start_run
    from nodes._registry import default_registry

    slept = []

    async def fake_sleep(duration):
        slept.append(duration)

    monkeypatch.setattr(wait_module.asyncio, "sleep", fake_sleep)
    run = start_run(wait_graph(amount=2, unit="hours"), default_registry())
    async with asyncio.timeout(5):
        [event async for event in run.events()]
    assert run.status == "completed" and 7200 in slept  # (the kernel sleeps 0 too: asyncio.sleep is global)


def test_the_maximum_is_documented():
    assert "at most 30 days" in definition.description
