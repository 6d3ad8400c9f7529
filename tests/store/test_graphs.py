"""The graph store: create, save (a version per save), rename, duplicate, delete, list and search, import."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest
from sqlalchemy import insert, select, text

from alembic import command

from nodeflow_app.store import migrations
from nodeflow_app.store.db import make_engine
from nodeflow_app.store.graphs import LABEL_MAX, NAME_MAX, RUNS, GraphNotFound, GraphStore, VersionNotFound
from nodeflow_app.store.models import GraphVersionRow
from nodes._registry import Registry

from tests.runtime import toys
from tests.store.postgres import POSTGRES_URL, private_schema

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request, tmp_path):
    """A GraphStore on a fresh SQLite file, or in a private schema of the real PostgreSQL."""
    if request.param == "sqlite":
        store = GraphStore(f"sqlite:///{tmp_path / 'nodeflow.db'}")
        yield store
        store.engine.dispose()
        return
    with private_schema() as schema:
        engine = make_engine(POSTGRES_URL)
        yield GraphStore(engine.execution_options(schema_translate_map={None: schema}))
        engine.dispose()


@pytest.fixture(scope="module")
def fixture_registry() -> Registry:
    """The toy node types the JSON fixtures under tests/fixtures/graphs are written for."""
    return Registry.load(roots=[FIXTURES / "nodes"], plugin_roots=[])


def two_nodes() -> dict:
    #  S --> A
    return toys.graph([("s", "start"), ("a", "pass")], ["s.out -> a.in"])


def test_create_makes_an_empty_graph_at_version_1(store):
    created = store.create("  My flow  ")
    assert (created.name, created.node_count, created.version) == ("My flow", 0, 1)
    assert len(created.id) == 12 and created.id.isalnum()

    stored = store.get(created.id)
    assert (stored.id, stored.name, stored.version, stored.updated_at) == (created.id, "My flow", 1, created.updated_at)
    assert stored.graph["nodes"] == [] and stored.graph["edges"] == []
    assert (stored.graph["id"], stored.graph["name"], stored.graph["version"]) == (created.id, "My flow", 1)
    assert [(v.version, v.note) for v in store.versions(created.id)] == [(1, "created")]
    assert store.get("nope") is None
    assert (store.name_of(created.id), store.version_of(created.id)) == ("My flow", 1)
    assert (store.name_of("nope"), store.version_of("nope")) == (None, None)


def test_every_save_is_a_new_version_and_the_row_keeps_id_and_name(store):
    created = store.create("Flow", two_nodes())
    assert created.node_count == 2
    graph = store.get(created.id).graph
    graph["nodes"].append({"id": "b", "type": "toy-pass", "name": "B"})
    graph.update(id="someone-else", name="Renamed inside the JSON")

    assert store.save(created.id, graph) == 2
    assert store.save(created.id, graph, note="autosave") == 3

    stored = store.get(created.id)
    assert (stored.version, stored.name) == (3, "Flow")
    assert (stored.graph["id"], stored.graph["name"], stored.graph["version"]) == (created.id, "Flow", 3)
    assert [n["id"] for n in stored.graph["nodes"]] == ["s", "a", "b"]
    assert stored.updated_at >= created.updated_at
    assert [(v.version, v.node_count, v.note) for v in store.versions(created.id)] == [
        (3, 3, "autosave"), (2, 3, "saved"), (1, 2, "created")]
    assert store.list()[0].node_count == 3


def test_a_save_that_does_not_fit_the_graph_model_changes_nothing(store):
    created = store.create("Flow")
    with pytest.raises(ValueError, match="nodes"):
        store.save(created.id, {"nodes": [{"id": "x"}]})
    assert store.get(created.id).version == 1
    assert len(store.versions(created.id)) == 1


def test_concurrent_saves_get_distinct_versions(store):
    created = store.create("Busy")
    graph = store.get(created.id).graph
    results: list[int] = []
    errors: list[BaseException] = []

    def save_some():
        try:
            for _ in range(10):
                results.append(store.save(created.id, graph))
        except BaseException as error:  # noqa: BLE001 - reported by the assertion below
            errors.append(error)

    threads = [threading.Thread(target=save_some) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert sorted(results) == list(range(2, 42))
    assert store.get(created.id).version == 41


def test_rename_validates_the_name_and_records_a_version(store):
    created = store.create("Old")
    store.rename(created.id, "  New name ")
    stored = store.get(created.id)
    assert (stored.name, stored.graph["name"], stored.version) == ("New name", "New name", 2)
    assert store.versions(created.id)[0].note == "renamed"

    store.rename(created.id, "New name")  # unchanged: no new version
    assert store.get(created.id).version == 2

    with pytest.raises(ValueError, match="needs a name"):
        store.rename(created.id, "   ")
    with pytest.raises(ValueError, match=f"at most {NAME_MAX} characters"):
        store.rename(created.id, "x" * (NAME_MAX + 1))
    with pytest.raises(ValueError, match="one line"):
        store.rename(created.id, "two\nlines")
    store.rename(created.id, "x" * NAME_MAX)
    assert store.get(created.id).name == "x" * NAME_MAX
    with pytest.raises(ValueError, match="needs a name"):
        store.create("")


def test_a_missing_graph_is_graph_not_found_naming_the_id(store):
    for call in (lambda: store.save("ghost1", {}), lambda: store.rename("ghost1", "x"),
                 lambda: store.duplicate("ghost1"), lambda: store.delete("ghost1"),
                 lambda: store.versions("ghost1")):
        with pytest.raises(GraphNotFound, match="ghost1") as caught:
            call()
        assert isinstance(caught.value, KeyError) and "'ghost1'" in str(caught.value)


def test_duplicate_is_a_copy_with_its_own_id_and_history(store):
    original = store.create("Flow", two_nodes())
    store.save(original.id, store.get(original.id).graph)

    copy = store.duplicate(original.id)
    assert copy.id != original.id
    assert (copy.name, copy.node_count, copy.version) == ("Flow (copy)", 2, 1)
    stored = store.get(copy.id)
    assert stored.graph["id"] == copy.id and stored.graph["name"] == "Flow (copy)"
    assert stored.graph["nodes"] == store.get(original.id).graph["nodes"]
    assert [(v.version, v.note) for v in store.versions(copy.id)] == [(1, "duplicated from Flow")]

    longest = store.create("y" * NAME_MAX)
    assert store.duplicate(longest.id).name == "y" * (NAME_MAX - 7) + " (copy)"


def test_delete_removes_the_graph_and_its_versions(store):
    kept, gone = store.create("Kept"), store.create("Gone")
    store.save(gone.id, store.get(gone.id).graph)
    store.delete(gone.id)
    assert store.get(gone.id) is None
    assert [g.id for g in store.list()] == [kept.id]
    with store.engine.connect() as conn:
        assert conn.execute(select(GraphVersionRow.graph_id)).scalars().all() == [kept.id]


def test_list_is_newest_edited_first_and_searches_names_in_any_case(store):
    alpha = store.create("Alpha research")
    beta = store.create("Beta 100%_done")
    gamma = store.create("gamma RESEARCH")
    store.save(alpha.id, store.get(alpha.id).graph)  # alpha is now the last edited

    assert [g.name for g in store.list()] == ["Alpha research", "gamma RESEARCH", "Beta 100%_done"]
    assert [g.id for g in store.list("Research")] == [alpha.id, gamma.id]
    assert [g.id for g in store.list("  research ")] == [alpha.id, gamma.id]
    assert [g.id for g in store.list("%_")] == [beta.id]  # LIKE wildcards are plain characters
    assert [g.id for g in store.list("0%")] == [beta.id]
    assert store.list("_") == [store.list()[2]]
    assert store.list("nothing like it") == []
    listed = store.list()[0]
    assert (listed.version, listed.node_count) == (2, 0) and not hasattr(listed, "graph")


def test_import_stores_a_valid_graph_keeping_its_name_and_a_free_id(store):
    #  S --> A
    text_ = json.dumps({**two_nodes(), "id": "shared-graph", "name": "From a colleague"})
    summary, issues = store.import_json(text_, toys.registry())
    assert issues == []
    assert (summary.id, summary.name, summary.node_count, summary.version) == ("shared-graph", "From a colleague", 2, 1)
    stored = store.get("shared-graph")
    assert stored.graph["nodes"][1]["settings"]["error_mode"] == "stop"  # normalized: defaults filled
    assert store.versions("shared-graph")[0].note == "imported"

    again, issues = store.import_json(text_, toys.registry())  # the id is taken now: a new one, same name
    assert issues == [] and again.id != "shared-graph" and again.name == "From a colleague"
    assert store.get(again.id).graph["id"] == again.id

    odd, _ = store.import_json(json.dumps({**two_nodes(), "id": "has spaces/and_slashes"}), toys.registry())
    assert len(odd.id) == 12 and odd.id.isalnum()


def test_an_import_never_takes_the_id_of_a_deleted_graph_whose_runs_chats_or_pins_are_left(store):
    """A deleted graph's runs, chats, pins and webhooks stay under its id: an import of its export (into any
    workspace) that took the id again took them over too, another team's runs included."""
    from nodeflow_app.store.pins import PINS

    text_ = json.dumps({**two_nodes(), "id": "team-graph", "name": "Orders"})
    first, _ = store.import_json(text_, toys.registry(), workspace_id="team")
    with store.engine.begin() as conn:
        conn.execute(insert(PINS).values(graph_id="team-graph", node_id="a", outputs_json="{}", updated_at=0.0))
    store.delete(first.id)
    again, issues = store.import_json(text_, toys.registry(), workspace_id="someone-else")
    assert issues == [] and again.id != "team-graph"
    fresh, _ = store.import_json(json.dumps({**two_nodes(), "id": "never-seen"}), toys.registry())
    assert fresh.id == "never-seen"  # an id nothing refers to is kept, as before


def test_import_of_an_invalid_graph_stores_nothing_and_says_why(store, fixture_registry):
    text_ = (FIXTURES / "graphs" / "invalid_duplicate_node_name.json").read_text()
    summary, issues = store.import_json(text_, fixture_registry)
    assert summary is None
    assert [i.rule for i in issues] == ["duplicate_node_name"] and issues[0].node_id
    assert store.list() == []


def test_import_lists_every_problem_at_once_also_past_edges_the_schema_refuses(store):
    """An edge without its data (a file edited by hand, or another tool's export) stopped the check at the schema:
    the import listed only the edges, and the unknown node type and the bad parameter came up one import later."""
    #  S --> A --> X(unknown)      S -/-> A (no data)      A --> Z (no such node)
    raw = toys.graph([("s", "start"), ("a", "pass"), ("x", "start")], ["s.out -> a.in", "a.out -> x.in"])
    raw["nodes"][2]["type"] = "toy-from-elsewhere"
    raw["nodes"][1]["data"] = {"no_such_parameter": 1}
    raw["nodes"].append({"id": "broken", "name": "Broken"})  # no type: refused by the schema itself
    del raw["edges"][0]["data"]
    raw["edges"].append({"id": "e9", "source": "a", "sourceHandle": "out", "target": "z", "targetHandle": "in",
                         "data": {"channel": "flow"}})
    raw["edges"].append({"id": "e10", "source": "a", "sourceHandle": "out", "target": "broken",
                         "targetHandle": "in", "data": {"channel": "flow"}})
    summary, issues = store.import_json(json.dumps(raw), toys.registry())
    assert summary is None and store.list() == []
    found = {(i.rule, i.node_id or i.edge_id) for i in issues}
    assert found == {("schema", "e0"), ("schema", "broken"), ("unknown_node_type", "x"),
                     ("unknown_parameter", "a"), ("edge_missing_node", "e9")}, issues
    assert len(issues) == len(found)  # each once; the edge to the refused node is not blamed on the edge


def test_import_of_broken_json_names_line_and_column(store, fixture_registry):
    summary, issues = store.import_json('{\n  "name": "x",\n  "nodes": [,]\n}', fixture_registry)
    assert summary is None and len(issues) == 1
    assert issues[0].rule == "json"
    assert "line 3, column 13" in issues[0].message
    assert store.import_json("[1, 2]", fixture_registry)[1][0].rule == "schema"
    assert store.import_json(json.dumps({"name": "  "}), fixture_registry)[1][0].message == "a graph needs a name"
    assert store.list() == []


def test_import_of_an_example_over_the_built_in_nodes(store):
    from nodes._registry import default_registry

    text_ = (FIXTURES / "graphs" / "examples" / "branching.json").read_text()
    summary, issues = store.import_json(text_, default_registry())
    assert issues == []
    assert (summary.id, summary.name, summary.node_count) == ("example-branching", "Adult or minor", 6)


def test_version_1_names_who_made_the_graph_created_imported_or_duplicated(store, fixture_registry):
    made = store.create("Made", two_nodes(), note="created from Blank", author="u1", author_name="Ada")
    text_ = json.dumps({"name": "Brought", "nodes": [], "edges": []})
    brought, _ = store.import_json(text_, fixture_registry, author="u2", author_name="Bob")
    copied = store.duplicate(made.id, author="u2", author_name="Bob")
    firsts = [store.versions(graph_id)[-1] for graph_id in (made.id, brought.id, copied.id)]
    assert [(v.note, v.author_name) for v in firsts] == [
        ("created from Blank", "Ada"), ("imported", "Bob"), ("duplicated from Made", "Bob")]
    assert store.versions(store.create("Anonymous").id)[-1].author_name == ""


def test_a_new_store_on_the_same_file_sees_everything(tmp_path):
    url = f"sqlite:///{tmp_path / 'nodeflow.db'}"
    first = GraphStore(url)
    created = first.create("Persisted", two_nodes())
    first.engine.dispose()
    second = GraphStore(url)
    assert second.get(created.id).graph["nodes"][0]["id"] == "s"
    second.engine.dispose()


def add_runs(store: GraphStore, graph_id: str, versions: list[int]) -> None:
    """Run rows as the run store writes them, reduced to what History counts (graph and version)."""
    with store.engine.begin() as conn:
        for i, version in enumerate(versions):
            conn.execute(insert(RUNS).values(id=f"{graph_id}-run-{i}", graph_id=graph_id, graph_version=version,
                                             graph_json="{}", status="completed", started_at=float(i)))


def check_history(store: GraphStore) -> None:
    """Authors, names, restore and run counts: the same checks on SQLite and PostgreSQL."""
    created = store.create("History", two_nodes())
    graph = store.get(created.id).graph
    graph["nodes"].append({"id": "b", "type": "toy-pass", "name": "B"})
    assert store.save(created.id, graph, note="autosave", author="u1", author_name="Ada") == 2
    store.rename(created.id, "History renamed")
    assert [(v.version, v.note, v.author, v.author_name, v.label) for v in store.versions(created.id)] == [
        (3, "renamed", None, "", ""), (2, "autosave", "u1", "Ada", ""), (1, "created", None, "", "")]

    assert store.label_version(created.id, 1, "  first draft ") == "first draft"
    assert store.versions(created.id)[-1].label == "first draft"
    old = store.get_version(created.id, 1)
    assert (old.version, old.name, [n["id"] for n in old.graph["nodes"]]) == (1, "History", ["s", "a"])
    assert store.get_version(created.id, 9) is None

    assert store.restore(created.id, 1, author="u2", author_name="Grace") == 4
    stored = store.get(created.id)
    assert (stored.version, stored.name, [n["id"] for n in stored.graph["nodes"]]) == (4, "History", ["s", "a"])
    newest = store.versions(created.id)[0]
    assert (newest.version, newest.note, newest.author_name, newest.node_count) == (4, "restored from v1", "Grace", 2)
    assert [v.version for v in store.versions(created.id)] == [4, 3, 2, 1]  # nothing rewritten

    add_runs(store, created.id, [2, 2, 4])
    assert store.run_counts(created.id) == {2: 2, 4: 1}
    assert store.run_counts("nope") == {}


def test_versions_record_author_name_restore_and_runs(store):
    check_history(store)


def test_a_version_name_is_checked_and_can_be_removed(store):
    created = store.create("Named")
    with pytest.raises(ValueError, match="one line"):
        store.label_version(created.id, 1, "a\nb")
    with pytest.raises(ValueError, match=f"at most {LABEL_MAX}"):
        store.label_version(created.id, 1, "x" * (LABEL_MAX + 1))
    store.label_version(created.id, 1, "keep")
    assert store.label_version(created.id, 1, "   ") == ""
    assert store.versions(created.id)[0].label == ""


def test_restore_and_naming_say_which_graph_or_version_is_missing(store):
    created = store.create("Missing")
    with pytest.raises(VersionNotFound, match=f"graph '{created.id}' has no version 7"):
        store.restore(created.id, 7)
    with pytest.raises(VersionNotFound, match="no version 7"):
        store.label_version(created.id, 7, "x")
    with pytest.raises(GraphNotFound, match="no graph 'nope'"):
        store.restore("nope", 1)
    assert store.get(created.id).version == 1


@pytest.fixture
def postgres_store():
    """A GraphStore in a private schema of the shared `test` database, dropped afterwards."""
    with private_schema() as schema:
        engine = make_engine(POSTGRES_URL)
        yield GraphStore(engine.execution_options(schema_translate_map={None: schema}))
        engine.dispose()


def test_create_save_list_delete_on_postgresql(postgres_store):
    store = postgres_store
    created = store.create("On Postgres", two_nodes())
    other = store.create("Other")
    assert store.save(created.id, store.get(created.id).graph) == 2
    assert [g.id for g in store.list()] == [created.id, other.id]
    assert [g.id for g in store.list("POSTGRES")] == [created.id]
    assert [(v.version, v.note) for v in store.versions(created.id)] == [(2, "saved"), (1, "created")]
    store.rename(created.id, "Renamed")
    assert store.get(created.id).name == "Renamed"
    store.delete(created.id)
    assert store.get(created.id) is None and [g.id for g in store.list()] == [other.id]
    with pytest.raises(GraphNotFound):
        store.delete(created.id)


def test_history_on_postgresql(postgres_store):
    check_history(postgres_store)


def test_a_database_from_before_version_authors_and_names_gains_them_in_place(tmp_path):
    url = f"sqlite:///{tmp_path / 'old.db'}"
    engine = make_engine(url)
    with engine.begin() as conn:  # the tables as main made them before migrations (and History)
        command.upgrade(migrations._config(conn), migrations.BASELINE)
        conn.execute(text("DROP TABLE alembic_version"))
        document = json.dumps({"id": "old", "name": "Old", "version": 1, "nodes": [], "edges": []})
        conn.execute(text("INSERT INTO graph VALUES ('old', 'Old', :g, 0, 1, 1.0, 1.0)"), {"g": document})
        conn.execute(text("INSERT INTO graph_version (graph_id, version, graph_json, node_count, created_at, note) "
                          "VALUES ('old', 1, :g, 0, 1.0, 'created')"), {"g": document})
    engine.dispose()

    store = GraphStore(url)
    assert [(v.version, v.author, v.author_name, v.label) for v in store.versions("old")] == [(1, None, "", "")]
    assert store.save("old", store.get("old").graph, author="u1", author_name="Ada") == 2
    store.label_version("old", 1, "from before")
    assert [(v.version, v.author_name, v.label) for v in store.versions("old")] == [(2, "Ada", ""),
                                                                                     (1, "", "from before")]
    store.engine.dispose()
