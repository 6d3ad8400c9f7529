"""nodes/data/json_transform: JSONata on the input or on each item; errors give the position."""

import asyncio
import datetime
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nodeflow_app.contract import FlowContext, NodeError
from nodes.data.json_transform import evaluators, executor as module
from nodes.data.json_transform.definition import definition
from nodes.data.json_transform.executor import executor

ORDER = {"customer": {"first": "Ada", "last": "Lovelace"},
         "lines": [{"sku": "a", "price": 2.5, "qty": 2}, {"sku": "b", "price": 4, "qty": 1}]}


async def run(input, expression, **data):
    ctx = FlowContext(node_id="jt-1", node_type="json-transform", run_id="run-1", runtime=None)
    result = await executor.execute({**definition.defaults(), "expression": expression, **data}, {"input": input}, ctx)
    return result.outputs["output"]


async def test_reshapes_the_whole_input():
    expression = '{"name": customer.first & " " & customer.last, "total": $sum(lines.(price * qty)), ' \
                 '"skus": lines.sku}'
    assert await run(ORDER, expression) == {"name": "Ada Lovelace", "total": 9, "skus": ["a", "b"]}


async def test_results_are_plain_json_values():
    result = await run(ORDER, "lines[price > 1]")
    assert result == ORDER["lines"] and type(result) is list  # not the port's list subclass
    assert await run(ORDER, "nothing.here") is None
    assert await run([1, 2, 3], "$") == [1, 2, 3]
    assert await run(ORDER, "$") == ORDER


async def test_each_item_with_its_index():
    result = await run(ORDER, '{"sku": sku, "n": $index, "cost": price * qty}', apply_to="each_item", field="lines")
    assert result == [{"sku": "a", "n": 0, "cost": 5}, {"sku": "b", "n": 1, "cost": 4}]
    # Objects of several keys, many items: the port's depth counter drifts here, so it must not be limiting.
    assert len(await run([{"a": i, "b": i} for i in range(1200)], '{"x": a, "y": b}', apply_to="each_item")) == 1200


async def test_syntax_errors_give_the_position():
    with pytest.raises(NodeError, match=r"expression error at position 14 \(S0203\): Expected \] before end of "
                                        r"expression; near: 'lines\[price > ' <- here"):
        await run(ORDER, "lines[price > ")


async def test_runtime_errors_are_clear_and_name_the_item():
    with pytest.raises(NodeError, match=r"expression error at '\*' \(position 15, T2001\): The left side of the \* "
                                        "operator must evaluate to a number"):
        await run(ORDER, "customer.first * 2")
    with pytest.raises(NodeError, match=r"expression error at position 5 \(T1006\): Attempted to invoke a non-function"):
        await run(ORDER, "$foo(1)")
    with pytest.raises(NodeError, match=r"item 1: expression error at '\*'"):
        await run([{"n": 1}, {"n": "x"}], "n * 2", apply_to="each_item")
    with pytest.raises(NodeError, match="the expression returns a .*, not data"):
        await run(ORDER, "function($x) { $x }")
    with pytest.raises(NodeError, match="the expression is empty"):
        await run(ORDER, "  ")


async def test_endless_recursion_and_loops_are_stopped(monkeypatch):
    with pytest.raises(NodeError, match="nests too deeply"):
        await run(ORDER, "($f := function($x) { 1 + $f($x) }; $f(1))")
    monkeypatch.setattr(module, "TIME_LIMIT_MS", 300)
    with pytest.raises(NodeError, match=r"expression ran longer than 0\.3 s and was stopped"):
        await run(ORDER, "($f := function($x) { $f($x) }; $f(1))")  # a tail call: no recursion, a loop


async def test_regex_literals_are_time_limited():
    assert await run(ORDER, '$replace(customer.first, /d/i, "D")') == "ADa"
    with pytest.raises(NodeError, match=r"regular expression '\(a\|aa\)\+\$' ran longer than 1 s"):
        await run({"s": "a" * 60 + "b"}, "$match(s, /(a|aa)+$/)")


def test_importing_the_port_keeps_the_process_recursion_limit():
    # jsonata-python raises sys.setrecursionlimit to 10,000 on import; the evaluation module puts it back.
    probe = "import sys; before = sys.getrecursionlimit(); import nodes.data.json_transform.evaluation; " \
            "print(before, sys.getrecursionlimit())"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[2]).stdout.split()
    assert out[0] == out[1]


# -- limits: the evaluation runs in an evaluator process (evaluators.py), never in the server's ---------------

@pytest.fixture
def small_pool(monkeypatch):
    """The process-wide pool replaced by one of 2 evaluators of 300 MB each."""
    monkeypatch.setattr(evaluators, "_POOL", evaluators.EvaluatorPool(size=2, memory_mb=300))
    yield evaluators.pool()
    evaluators.pool().close()


async def test_an_expression_cannot_take_the_servers_memory(small_pool):
    """`$pad` and ranges build hundreds of MB from a few characters; in the server, [1..100] of these took it down."""
    with pytest.raises(NodeError, match=r"^the expression needed more than its 300 MB of memory and was stopped$"):
        await run(ORDER, '$count([1..6].$pad("", 50000000))')
    assert await run(ORDER, '$count([1..2].$pad("", 50000000))') == 2  # a fresh evaluator took over


async def test_a_result_over_the_limit_is_refused(small_pool, monkeypatch):
    monkeypatch.setattr(evaluators, "RESULT_LIMIT", 1024 * 1024)
    with pytest.raises(NodeError, match=r"^the result is 2 MB of JSON; the limit is 1 MB$"):
        await run(ORDER, '$pad("", 3000000)')


async def test_an_evaluator_that_does_not_answer_in_time_is_killed_and_replaced(small_pool, monkeypatch):
    """A single long step (the time box looks between steps) is stopped too: here, an evaluator that hangs."""
    assert await run(ORDER, "customer.first") == "Ada"
    hung = small_pool._idle[0]
    os.kill(hung.process.pid, signal.SIGSTOP)
    time_limit_ms, grace_s = module.TIME_LIMIT_MS, evaluators.GRACE_S
    monkeypatch.setattr(module, "TIME_LIMIT_MS", 200)
    monkeypatch.setattr(evaluators, "GRACE_S", 0.3)
    started = time.monotonic()
    with pytest.raises(NodeError, match=r"^expression ran longer than 0\.2 s and was stopped$"):
        await run(ORDER, "customer.first")
    assert time.monotonic() - started < 2
    assert hung.process.returncode == -signal.SIGKILL
    # Back to the usual limits: the evaluator taking over starts first (~0.3 s, more on a busy machine).
    monkeypatch.setattr(module, "TIME_LIMIT_MS", time_limit_ms)
    monkeypatch.setattr(evaluators, "GRACE_S", grace_s)
    assert await run(ORDER, "customer.last") == "Lovelace"


async def test_at_most_the_pools_size_of_evaluators_work_at_once(small_pool, monkeypatch):
    started = []
    start = evaluators._Evaluator
    monkeypatch.setattr(evaluators, "_Evaluator", lambda memory_mb: started.append(start(memory_mb)) or started[-1])
    results = await asyncio.gather(*(run(ORDER, "$count([1..30000].($ * 2))") for _ in range(6)))
    assert results == [30000] * 6 and len(started) == 2


async def test_a_value_json_has_no_type_for_reaches_the_expression_as_text():
    assert await run({"when": datetime.date(2026, 7, 1)}, "when") == "2026-07-01"
    looped: dict = {}
    looped["self"] = looped
    with pytest.raises(NodeError, match="the input cannot be given to the expression as JSON: Circular reference"):
        await run(looped, "$")
