"""The co-editing benchmark's browserless parts: its graph validates, percentiles, and the table's verdicts."""

from __future__ import annotations

from benchmarks import coedit as bench
from benchmarks.__main__ import discover
from nodeflow_app.runtime.graph import normalize
from nodes._registry import default_registry


def test_the_graph_validates_and_make_bench_runs_the_module():
    graph, issues = normalize({"id": "g", "name": "co-edit", **bench.graph()}, default_registry())
    assert graph is not None and issues == [] and len(graph.nodes) == bench.NODES
    assert "coedit" in discover()


def test_percentiles_are_nearest_rank():
    values = [float(v) for v in range(1, 101)]
    assert bench.percentile(values, 50) == 50.0 and bench.percentile(values, 95) == 95.0
    assert bench.percentile([7.0], 95) == 7.0


def test_the_table_says_whether_latency_and_bytes_meet_the_targets():
    fast = {"editors": 2, "edits": 3, "latencies_ms": [10.0, 20.0, 30.0], "bytes": [700, 700, 710]}
    slow = {"editors": 10, "edits": 3, "latencies_ms": [50.0, 90.0, 150.0], "bytes": [700, 700, 700]}
    heavy = {"editors": 2, "edits": 1, "latencies_ms": [10.0], "bytes": [4096]}
    lines = bench.report([fast, slow, heavy])
    assert "p95 < 100 ms" in lines[1]
    assert lines[2].split()[:4] == ["2", "3", "20.0", "30.0"] and lines[2].endswith("yes")
    assert lines[3].split()[3] == "150.0" and lines[3].endswith("NO")
    assert lines[4].endswith("NO")
