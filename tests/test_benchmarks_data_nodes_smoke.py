"""The data nodes benchmark runs in --quick mode: every case agrees with its floor and gets a table row and a JSON line."""

from __future__ import annotations

import json

from benchmarks import data_nodes
from benchmarks.__main__ import discover


def test_quick_run_prints_a_row_and_a_json_line_per_case(capsys):
    assert data_nodes.main(["--quick"]) == 0
    out = capsys.readouterr().out
    rows = [json.loads(line) for line in out.splitlines() if line.startswith('{"bench": "data_nodes"')]
    keys = [case.key for case in data_nodes.cases(quick=True)]
    assert [r["case"] for r in rows] == keys
    for row in rows:
        assert row["node_median_ms"] > 0 and row["in_a_run_median_ms"] > 0 and row["floor_median_ms"] > 0
        assert any(line.startswith(row["case"] + " ") for line in out.splitlines()), f"no table row for {row['case']}"


def test_a_node_that_disagrees_with_its_floor_fails_the_benchmark(monkeypatch, capsys):
    wrong = data_nodes.cases(quick=True)[:1]
    wrong[0].floor = lambda items: []
    monkeypatch.setattr(data_nodes, "cases", lambda quick: wrong)
    assert data_nodes.main(["--quick"]) == 1
    assert "differs from the floor" in capsys.readouterr().err


def test_benchmarks_discovers_data_nodes():
    assert "data_nodes" in discover()
