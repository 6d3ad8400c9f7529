"""The webhook benchmark runs in --quick mode on SQLite: a server, a separate load generator, floor and webhook
loads in turns, a table row and a JSON line per case, every answer right and every run stored; then the
diagnostic case on a server whose runs write nothing (answers still right, no run stored)."""

from __future__ import annotations

import json

from benchmarks import webhooks
from benchmarks.__main__ import discover


def test_quick_run_on_sqlite_prints_both_cases(capsys):
    assert webhooks.main(["--quick", "--backends", "sqlite", "--requests", "60", "--rounds", "2",
                          "--concurrency", "4"]) == 0
    out = capsys.readouterr().out
    rows = [json.loads(line) for line in out.splitlines() if line.startswith('{"bench": "webhooks"')]
    assert [r["case"] for r in rows] == ["floor", "webhook", "floor*", "unrecorded"]
    floor, hook, _, unrecorded = rows
    assert floor["per_s"] > 0 and hook["per_s"] > 0 and hook["p99_ms"] >= hook["p50_ms"] > 0
    assert floor["rounds"] == hook["rounds"] == 2 and len(hook["per_s_rounds"]) == 2
    assert hook["runs_stored"] == hook["calls"] == 2 * (hook["requests"] + hook["warmup"]) and hook["wrong"] == 0
    assert "sqlite: target >= 250 runs/s" in out
    assert unrecorded["wrong"] == 0 and unrecorded["runs_stored"] == 0 < unrecorded["calls"]
    assert unrecorded["ratio_to_floor"] > 0 and "bound: with nothing written" in out


def test_benchmarks_discovers_webhooks():
    assert "webhooks" in discover()
