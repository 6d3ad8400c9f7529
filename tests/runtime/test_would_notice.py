"""Tests that notice when a quiet mechanism breaks (each was checked by breaking it): the retry backoff,
a wire whose value cannot be coerced at run time, and token batching in the chat pump.

They go through public behaviour (a run, a pump), so moving the code behind them changes nothing here.
"""

from __future__ import annotations

import asyncio
import time

from nodeflow_app.chat.adapter import MessageBuilder
from nodeflow_app.runs.pump import Pump
from nodeflow_app.contract import ExecutionResult, NodeDefinition, Parameter, Socket
from nodeflow_app.runtime.engine import start_run

from tests.runtime import toys


def flaky_registry(attempts: list[float], failures: int):
    async def flaky(data, inputs, ctx):
        attempts.append(time.monotonic())
        if len(attempts) <= failures:
            raise RuntimeError(f"transient failure {len(attempts)}")
        return {"out": "ok"}

    definition = NodeDefinition(id="toy-flaky", name="F", description="d", category="t", inputs=(toys.DATA_IN,),
                                outputs=(toys.DATA_OUT,))
    return toys.registry((definition, toys.Toy("toy-flaky", flaky)))


#  S --> F (fails 4 times; retry: 5 attempts, 0.1 s, x3, at most 0.5 s)
async def test_retries_wait_the_initial_interval_times_the_backoff_factor_up_to_the_maximum():
    attempts: list[float] = []
    retry = {"max_attempts": 5, "initial_interval": 0.1, "backoff_factor": 3, "max_interval": 0.5}
    graph = toys.graph([("s", "start"), ("f", "flaky")], ["s.out -> f.in"], f={"settings": {"retry": retry}})
    run = await start_run(graph, flaky_registry(attempts, failures=4), payload=1).run()
    assert run.status == "completed" and len(attempts) == 5
    waits = [later - earlier for earlier, later in zip(attempts, attempts[1:])]
    for waited, expected in zip(waits, [0.1, 0.3, 0.5, 0.5]):  # 0.1, 0.1*3, min(0.9, 0.5), min(2.7, 0.5)
        assert expected - 0.01 <= waited <= expected + 0.15, (waits, expected)


#  S --> F (always fails; 3 attempts)
async def test_the_last_attempt_fails_the_node_without_a_further_wait():
    attempts: list[float] = []
    retry = {"max_attempts": 3, "initial_interval": 0.2, "backoff_factor": 1, "max_interval": 1}
    graph = toys.graph([("s", "start"), ("f", "flaky")], ["s.out -> f.in"], f={"settings": {"retry": retry}})
    started = time.monotonic()
    run = await start_run(graph, flaky_registry(attempts, failures=99), payload=1).run()
    assert run.status == "failed" and len(attempts) == 3
    assert run.error == "node 'F' failed: RuntimeError: transient failure 3"
    assert time.monotonic() - started < 0.4 + 0.2  # two waits of 0.2 s, none after the last attempt


#  S --> T --value (any)--> C.count (float)
async def test_a_value_that_cannot_be_coerced_at_run_time_fails_the_node_naming_node_and_port():
    calls = []

    async def spy(data, inputs, ctx):
        calls.append(data)
        return {"out": data["count"]}

    text = NodeDefinition(id="toy-text", name="T", description="d", category="t", inputs=(toys.DATA_IN,),
                          outputs=(Socket(id="value", type="any"),))
    counter = NodeDefinition(id="toy-counter", name="C", description="d", category="t", inputs=(toys.DATA_IN,),
                             outputs=(toys.DATA_OUT,),
                             parameters=(Parameter(id="count", label="Count", type="float", mode="hybrid",
                                                   default=1),))

    async def seven(data, inputs, ctx):
        return {"value": inputs["in"]}

    registry = toys.registry((text, toys.Toy("toy-text", seven)), (counter, toys.Toy("toy-counter", spy)))
    graph = toys.graph([("s", "start"), ("t", "text"), ("c", "counter")],
                       ["s.out -> t.in", "s.out -> c.in", "t.value -> c.count"])
    good = await start_run(graph, registry, payload="7.5").run()
    assert good.status == "completed" and calls[-1]["count"] == 7.5  # "7.5" coerced to the float socket
    bad = await start_run(graph, registry, payload="seven").run()
    assert bad.status == "failed" and len(calls) == 1
    assert bad.records["c"].status == "failed"
    assert bad.records["c"].error.startswith("input 'count' of node 'C': "), bad.records["c"].error
    assert "'seven'" in bad.records["c"].error and "float" in bad.records["c"].error


class Talker:
    """A streaming node: `tokens` tokens, one every `gap` seconds."""

    node_type = "toy-talker"

    def __init__(self, tokens: int, gap: float):
        self.tokens, self.gap = tokens, gap

    async def execute(self, data, inputs, ctx):
        for index in range(self.tokens):
            yield ctx.event("token", text=f"w{index} ")
            await asyncio.sleep(self.gap)
        yield ExecutionResult(outputs={"out": "done"})


#  S --> TALK (600 tokens over ~0.6 s)
async def test_the_chat_pump_batches_tokens_one_update_per_interval_not_one_per_token():
    definition = NodeDefinition(id="toy-talker", name="Talk", description="d", category="t",
                                inputs=(toys.DATA_IN,), outputs=(toys.DATA_OUT,))
    registry = toys.registry((definition, Talker(tokens=600, gap=0.001)))
    graph = toys.graph([("s", "start"), ("talk", "talker")], ["s.out -> talk.in"])
    graph["nodes"][1]["type"] = "toy-talker"
    run = start_run(graph, registry, payload=1)
    builder = MessageBuilder({"s": "S", "talk": "Talk"})
    pump = Pump(run, run.events(), builder)
    interval, updates, started = 0.05, 0, time.monotonic()
    async for _ in pump.batches(interval):
        updates += 1
    elapsed = time.monotonic() - started
    await pump.stop()
    assert run.status == "completed"
    text = "".join(block.get("text", "") for block in builder.snapshot() if block.get("type") == "text")
    assert text == "".join(f"w{i} " for i in range(600))  # every token arrived
    assert updates <= elapsed / interval + 3, (updates, elapsed)  # one update per interval at most (+ first, end)
    assert updates < 600 / 10  # far fewer updates than tokens
