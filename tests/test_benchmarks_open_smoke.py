"""The open benchmark's browserless parts: the graphs it seeds are valid and listed; the table shows the target."""

from __future__ import annotations

from benchmarks import open as bench
from nodeflow_app.runtime.graph import normalize
from nodeflow_app.store.graphs import GraphStore
from nodes._registry import default_registry


def test_the_chain_graph_validates():
    graph, issues = normalize({"id": "g", "name": "chain", **bench.chain_graph(50)}, default_registry())
    assert graph is not None and issues == [] and len(graph.nodes) == 50 and len(graph.edges) == 49


def test_seed_stores_the_graphs_the_pages_wait_for(tmp_path):
    store = GraphStore(f"sqlite:///{tmp_path / 'bench.db'}")
    pages = bench.seed(store)
    graphs = {g.id: g for g in store.list()}
    assert len(graphs) == bench.LIST_GRAPHS
    assert pages[0].path == "/" and f"=== {bench.LIST_GRAPHS}" in pages[0].ready
    for page in pages[1:]:
        graph_id = page.path.rsplit("/", 1)[1]
        assert page.ready.endswith(f"=== {graphs[graph_id].node_count}")
    assert graphs[pages[2].path.rsplit("/", 1)[1]].node_count == bench.BIG_NODES


def test_the_table_shows_medians_and_whether_the_target_is_met():
    fast = [bench.Sample(0.5, 10, 2048), bench.Sample(0.7, 10, 2048), bench.Sample(0.6, 12, 4096)]
    slow = [bench.Sample(2.5, 50, 1024), bench.Sample(3.0, 50, 1024)]
    lines = bench.report({"graph list": fast, "editor": slow})
    assert "2 round(s)" not in lines[0] and "3 round(s)" in lines[0]
    list_row, editor_row = lines[2], lines[3]
    assert list_row.startswith("graph list") and "0.60s" in list_row and list_row.endswith("yes")
    assert editor_row.startswith("editor") and "2.75s" in editor_row and editor_row.endswith("NO")
    assert "< 2 s" in list_row
