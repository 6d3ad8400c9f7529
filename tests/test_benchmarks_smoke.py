"""The kernel benchmark runs end to end in --quick mode and prints a row per (workload, system); no timing checks."""

from __future__ import annotations

import json

from benchmarks import kernel


def test_kernel_quick_prints_every_workload_row(capsys):
    assert kernel.main(["--quick"]) == 0
    out = capsys.readouterr().out
    rows = [json.loads(line) for line in out.splitlines() if line.startswith('{"bench": "kernel"')]
    seen = {(r["workload"], r["system"]) for r in rows}
    for workload in ("W1", "W2", "W3", "W4", "W5"):
        for system in ("asyncio", "minimal", "nodeflow"):
            assert (workload, system) in seen
        assert any(line.startswith(f"{workload} ") for line in out.splitlines()), f"no table row for {workload}"
    systems = {r["system"] for r in rows}
    assert "langgraph" in systems or "langgraph: not available" in out
    assert "nodeflow+sqlite" in systems or "nodeflow+sqlite: not available" in out
    w4 = [r for r in rows if r["workload"] == "W4"]
    assert all(r["runs_per_s"] > 0 for r in w4)
    assert all(r["median_ms"] > 0 for r in rows)


def test_benchmarks_discovers_kernel():
    from benchmarks.__main__ import discover

    assert "kernel" in discover()
