"""The knowledge benchmark runs end to end on a small corpus and prints every row; no timing checks."""

from __future__ import annotations

import json

from benchmarks import knowledge


def test_knowledge_quick_prints_ingest_and_every_search_mode(capsys):
    assert knowledge.main(["--chunks", "300", "--queries", "5"]) == 0
    out = capsys.readouterr().out
    rows = [json.loads(line) for line in out.splitlines() if line.startswith('{"bench": "knowledge"')]
    assert [r["what"] for r in rows] == ["ingest", "search-hybrid", "search-vector", "search-text", "search-filtered"]
    assert rows[0]["chunks"] > 0 and rows[0]["nodeflow_chunks_per_s"] > 0
    assert all(r["nodeflow_p95_ms"] >= r["nodeflow_p50_ms"] > 0 for r in rows[1:])
