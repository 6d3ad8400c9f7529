"""The Code node benchmark runs end to end in --quick mode and prints a row per case; no timing checks."""

from __future__ import annotations

import json

from benchmarks import code_node


def test_code_node_quick_prints_every_case(capsys):
    assert code_node.main(["--quick"]) == 0
    out = capsys.readouterr().out
    rows = [json.loads(line) for line in out.splitlines() if line.startswith('{"bench": "code_node"')]
    assert [r["case"] for r in rows] == [
        "in-process exec (floor)", "fresh interpreter", "cold (no warm worker)", "warm", "burst (back to back)",
        "node (kernel run, warm)"]
    assert all(r["calls"] == 4 and r["median_ms"] > 0 for r in rows)
    assert "warm call" in out and "target < 20 ms" in out


def test_benchmarks_discovers_code_node():
    from benchmarks.__main__ import discover

    assert "code_node" in discover()
