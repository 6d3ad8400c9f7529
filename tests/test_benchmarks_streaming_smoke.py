"""The streaming benchmark runs end to end in --quick mode and prints a row per (scenario, system); no timing checks."""

from __future__ import annotations

import json

from benchmarks import streaming


def test_streaming_quick_prints_every_system_row(capsys):
    assert streaming.main(["--quick"]) == 0
    out = capsys.readouterr().out
    rows = [json.loads(line) for line in out.splitlines() if line.startswith('{"bench": "streaming"')]
    assert {(r["scenario"], r["system"]) for r in rows} == {
        (scenario, system) for scenario in ("throughput", "first-token") for system in ("httpx", "agno", "nodeflow")}
    table = [line.split() for line in out.splitlines()]
    for scenario in ("throughput", "first-token"):
        for system in ("httpx", "agno", "nodeflow"):
            assert [scenario, system] in [cells[:2] for cells in table], f"no table row for {scenario} {system}"
    assert all(r["tokens_per_s"] > 0 and r["tokens"] > 0 for r in rows)
    nodeflow = [r for r in rows if r["system"] == "nodeflow"]
    assert all("target_first_token_met" in r and "first_token_emitted_ms" in r for r in nodeflow)
    assert "targets: " in out


def test_benchmarks_discovers_streaming():
    from benchmarks.__main__ import discover

    assert "streaming" in discover()
