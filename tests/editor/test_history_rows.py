"""What the History panel shows: entry rows (bursts, authors, runs) and the diff list, as display strings."""

from __future__ import annotations

from nodeflow_app.editor.diff import FieldChange, diff_graphs
from nodeflow_app.editor.timeline import group_versions
from nodeflow_app.secret_values import seal
from nodeflow_app.state.history_state import change_line, diff_rows, entry_row
from nodeflow_app.store.graphs import VersionSummary

from tests.editor.test_diff import NEW, OLD


def test_entry_rows_show_a_burst_its_runs_and_a_missing_author_as_a_dash():
    versions = [VersionSummary(3, 2, 990.0, "autosave", "u1", "Ada"),
                VersionSummary(2, 2, 960.0, "autosave", "u1", "Ada"),
                VersionSummary(1, 1, 0.0, "created", label="start")]
    burst, first = (entry_row(e, {1: 1, 2: 2, 3: 1}, now=1000.0) for e in group_versions(versions))
    assert (burst["version"], burst["title"], burst["note"], burst["author"], burst["runs"]) == (
        "3", "v2–v3", "2 autosaves", "Ada", "3 runs")
    assert burst["when"] == "40 s ago – 10 s ago"
    assert (first["title"], first["label"], first["author"], first["runs"], first["note"]) == (
        "v1", "start", "—", "1 run", "created")


def test_diff_rows_list_each_node_then_its_changes_then_edges_and_moves():
    rows = diff_rows(diff_graphs(OLD, NEW))
    assert [(r["kind"], r["name"], r["text"]) for r in rows] == [
        ("node", "Bee", "changed"),
        ("change", "Bee", 'name: "B" -> "Bee"'),
        ("change", "Bee", 'prompt: "one" -> "two"'),
        ("change", "Bee", "extra: — -> 1"),
        ("node", "D", "added"),
        ("node", "C", "removed"),
        ("note", "", "Edges: 1 added"),
        ("note", "", "Only moved (not counted as changes): A"),
    ]
    assert [r["text"] for r in diff_rows(diff_graphs(OLD, OLD))] == ["No differences"]


def test_a_changed_secret_parameter_never_shows_its_value(tmp_path, monkeypatch):
    monkeypatch.setenv("NODEFLOW_DATA_DIR", str(tmp_path))  # a key of its own, made in the test's folder
    monkeypatch.delenv("NODEFLOW_SECRET_KEY", raising=False)
    old, new = seal("sk-old-value"), seal("sk-new-value")
    assert change_line(FieldChange("headers", old, new)) == "headers: secret changed"
    assert change_line(FieldChange("headers", None, new)) == "headers: secret changed"
    assert change_line(FieldChange("url", "a", "b")) == 'url: "a" -> "b"'


def test_comparing_versions_shows_a_changed_secret_row_never_its_ciphertext_or_an_old_plain_value(tmp_path, monkeypatch):
    """A secret inside a key_value list (MCP headers) or in clear in a version stored before sealing: the diff
    sees that it changed, and shows neither the value, its ciphertext nor a digest that works elsewhere."""
    import secrets as random

    from nodeflow_app.secret_values import fingerprint_graph
    from nodes._registry import default_registry
    from tests.test_secret_values import mcp_graph as graph

    monkeypatch.setenv("NODEFLOW_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("NODEFLOW_SECRET_KEY", raising=False)

    sealed = seal("Bearer sk-new")
    old = graph([{"name": "Authorization", "value": "Bearer sk-old-in-clear"}])  # a version from before sealing
    new = graph([{"name": "Authorization", "value": sealed}])
    key = random.token_bytes(16)
    rows = diff_rows(diff_graphs(*(fingerprint_graph(g, default_registry(), key) for g in (old, new))))
    assert [r["text"] for r in rows if r["kind"] == "change"] == ["headers: secret changed"]
    shown = repr(fingerprint_graph(new, default_registry(), key)) + repr(rows)
    assert "sk-" not in shown and sealed["$secret"][:20] not in shown
    same = [fingerprint_graph(g, default_registry(), key) for g in (new, graph([{"name": "Authorization",
                                                                                   "value": sealed}]))]
    assert diff_rows(diff_graphs(*same))[-1]["text"] == "No differences"
    assert fingerprint_graph(new, default_registry(), random.token_bytes(16)) != same[0]  # a key per comparison
