"""Code node benchmark: the per-call overhead of running user Python in a worker process, cold and warm.

Cases, each calling the same tiny job (`return sum(items)` on 100 numbers):
- in-process exec: the floor, what running the code costs without any isolation (never done by NodeFlow);
- fresh interpreter: the naive way, `subprocess.run(python -I -S -c ...)` with JSON on stdin and stdout;
- cold: the Code node's sandbox with no warm worker (each call starts one);
- warm: a worker is waiting (the pool had time to replace the last one): the normal case;
- burst: calls back to back with no pause, so the pool is drained and replacements are still starting;
- node (kernel run): a Start -> Code graph run by the kernel, warm, end to end.
Medians and p90 per case as a table (with the ratio to the floor), then one JSON line per case.
`python -m benchmarks.code_node [--quick]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
from typing import Awaitable, Callable

from nodes.data.code.sandbox import Limits, WorkerPool

CODE = "return sum(items)"
INPUT = list(range(100))
EXPECTED = sum(INPUT)
WARM_TARGET_MS = 20.0
SETTLE_S = 0.08  # pause before a warm call: a replacement worker starts in ~20-30 ms here

Call = Callable[[], Awaitable[None]]


def _check(value: object) -> None:
    if value != EXPECTED:
        raise AssertionError(f"the job returned {value!r}, expected {EXPECTED}")


async def in_process() -> None:
    namespace: dict = {}
    exec(compile("def main(input, items):\n    " + CODE, "<code>", "exec"), namespace)
    _check(namespace["main"](INPUT, INPUT))


async def fresh_interpreter() -> None:
    script = "import json,sys\nitems=json.loads(sys.stdin.read())\nprint(json.dumps(sum(items)))"
    done = subprocess.run([sys.executable, "-I", "-S", "-c", script], input=json.dumps(INPUT), text=True,
                          capture_output=True, env={}, check=True)
    _check(json.loads(done.stdout))


def sandbox_call(pool: WorkerPool) -> Call:
    async def call() -> None:
        _check((await pool.run(CODE, INPUT, Limits())).value)
    return call


def kernel_call() -> Call:
    from nodeflow_app.runtime.engine import start_run
    from nodes._registry import default_registry

    registry = default_registry()
    graph = {"id": "bench", "name": "bench", "nodes": [
        {"id": "start", "type": "manual-trigger", "name": "Start", "data": {}},
        {"id": "code", "type": "code", "name": "Code", "data": {"code": CODE}}],
        "edges": [{"id": "e", "source": "start", "sourceHandle": "output", "target": "code",
                   "targetHandle": "input", "data": {"channel": "flow"}}]}

    async def call() -> None:
        run = start_run(graph, registry, payload=INPUT)
        async for _ in run.events():
            pass
        if run.status != "completed":
            raise AssertionError(f"the run ended {run.status}: {run.error}")
        _check(run.records["code"].outputs["output"])
    return call


async def measure(call: Call, calls: int, settle: float) -> list[float]:
    """Milliseconds per call; `settle` seconds of untimed pause before each (0: back to back)."""
    await call()  # first call outside the figures (imports, page cache)
    times = []
    for _ in range(calls):
        if settle:
            await asyncio.sleep(settle)
        started = time.perf_counter()
        await call()
        times.append((time.perf_counter() - started) * 1000)
    return times


async def run_all(calls: int) -> list[dict]:
    cold_pool, warm_pool = WorkerPool(size=0), WorkerPool(size=2)
    warm_pool.warm()
    cases = [
        ("in-process exec (floor)", in_process, 0.0),
        ("fresh interpreter", fresh_interpreter, 0.0),
        ("cold (no warm worker)", sandbox_call(cold_pool), 0.0),
        ("warm", sandbox_call(warm_pool), SETTLE_S),
        ("burst (back to back)", sandbox_call(warm_pool), 0.0),
        ("node (kernel run, warm)", kernel_call(), SETTLE_S),
    ]
    rows = []
    try:
        for name, call, settle in cases:
            times = await measure(call, calls, settle)
            rows.append({"bench": "code_node", "case": name, "calls": calls,
                         "median_ms": round(statistics.median(times), 3),
                         "p90_ms": round(sorted(times)[max(0, int(len(times) * 0.9) - 1)], 3)})
    finally:
        cold_pool.close()
        warm_pool.close()  # the process-wide pool (the kernel case) is closed at exit
    return rows


def print_table(rows: list[dict]) -> None:
    floor = rows[0]["median_ms"] or 1e-6
    print(f"{'case':<26} {'calls':>5} {'median ms':>10} {'p90 ms':>9} {'x floor':>9}")
    for row in rows:
        print(f"{row['case']:<26} {row['calls']:>5} {row['median_ms']:>10.2f} {row['p90_ms']:>9.2f} "
              f"{row['median_ms'] / floor:>9.0f}")
    warm = next(r for r in rows if r["case"] == "warm")["median_ms"]
    fresh = next(r for r in rows if r["case"] == "fresh interpreter")["median_ms"]
    verdict = "met" if warm < WARM_TARGET_MS else "MISSED"
    print(f"warm call {warm:.2f} ms: target < {WARM_TARGET_MS:g} ms {verdict}; "
          f"{fresh / warm:.1f}x faster than a fresh interpreter per call")
    for row in rows:
        print(json.dumps(row))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="benchmarks.code_node", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few calls per case (smoke test)")
    parser.add_argument("--calls", type=int, default=None, help="timed calls per case (default 40, quick 4)")
    args, _ = parser.parse_known_args(argv or [])
    calls = args.calls or (4 if args.quick else 40)
    print_table(asyncio.run(run_all(calls)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
