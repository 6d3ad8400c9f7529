"""The graph list page in Chromium: create, rename, duplicate, search, delete, import.

The server's database is fresh per session but shared by every e2e test, so each test finds its
graphs by id (`data-graph-id`) or by a name made unique for the test, never by position.
"""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path

from playwright.sync_api import expect

from nodeflow_app.state.graph_list_state import edited_text, next_untitled

from .server import Server

GRAPHS = Path(__file__).resolve().parents[1] / "fixtures" / "graphs"
EDITOR_URL = re.compile(r"/graph/([A-Za-z0-9-]+)$")


def open_list(page, server: Server) -> None:
    page.goto(server.url + "/")
    page.get_by_test_id("graph-count").wait_for()
    # Loaded: the table or the empty state is shown (the count badge is there before the rows arrive).
    page.get_by_test_id("graph-table").or_(page.get_by_test_id("graph-empty")).wait_for()


def graph_id_of_editor_url(page) -> str:
    page.wait_for_url(EDITOR_URL)
    return EDITOR_URL.search(page.url).group(1)


def row_of(page, graph_id: str):
    return page.locator(f'[data-graph-id="{graph_id}"]')


def menu_action(page, name: str, action: str) -> None:
    page.get_by_test_id(f"graph-menu-{name}").click()
    page.get_by_test_id(f"graph-{action}").click()


def import_file(page, path: Path) -> None:
    page.get_by_test_id("import-upload").locator('input[type="file"]').set_input_files(str(path))


def test_create_rename_duplicate_search_and_delete(page, nodeflow_server: Server) -> None:
    open_list(page, nodeflow_server)
    page.get_by_test_id("new-graph").click()
    page.get_by_test_id("template-blank").click()  # the picker itself: test_templates.py
    graph_id = graph_id_of_editor_url(page)  # the editor page itself is tested elsewhere

    page.go_back()
    row = row_of(page, graph_id)
    row.wait_for()
    untitled = row.locator("a").inner_text()
    assert untitled.startswith("Untitled graph")
    assert row.get_by_test_id("graph-node-count").inner_text() == "1"  # a blank graph's Chat Start
    assert row.get_by_test_id("graph-edited").inner_text() == "just now"
    assert row.get_attribute("data-testid") == f"graph-row-{untitled}"
    assert page.get_by_test_id(f"graph-open-{untitled}").get_attribute("href") == f"/graph/{graph_id}"

    # Rename: a blank name is refused inline; a real one replaces the row's name.
    name = f"Research flow {uuid.uuid4().hex[:6]}"
    menu_action(page, untitled, "rename")
    page.get_by_test_id("rename-input").fill("   ")
    page.get_by_test_id("rename-confirm").click()
    assert "needs a name" in page.get_by_test_id("rename-error").inner_text()
    page.get_by_test_id("rename-input").fill(name)
    page.get_by_test_id("rename-confirm").click()
    page.get_by_test_id(f"graph-row-{name}").wait_for()
    assert page.get_by_test_id(f"graph-row-{untitled}").count() == 0
    page.get_by_test_id("rename-input").wait_for(state="detached")  # the dialog closed

    # Duplicate.
    menu_action(page, name, "duplicate")
    copy = page.get_by_test_id(f"graph-row-{name} (copy)")
    copy.wait_for()
    assert copy.get_by_test_id("graph-node-count").inner_text() == "1"
    assert copy.get_attribute("data-graph-id") != graph_id

    # Search (debounced, case-insensitive) filters the rows and says how many match.
    search = page.get_by_test_id("graph-search")
    search.fill(name.upper())
    page.wait_for_function(
        "() => document.querySelectorAll('[data-testid^=\"graph-row-\"]').length === 2")
    expect(page.get_by_test_id("graph-count")).to_have_text(re.compile(r"2 of \d+ graphs"))
    search.fill(f"{name} (COPY")
    page.wait_for_function(
        "() => document.querySelectorAll('[data-testid^=\"graph-row-\"]').length === 1")
    assert copy.is_visible()
    search.fill("no graph is called this")
    page.get_by_test_id("graph-empty").wait_for()
    assert "No graph matches" in page.get_by_test_id("graph-empty").inner_text()
    search.fill("")
    page.get_by_test_id(f"graph-row-{name}").wait_for()

    # Delete asks first: Cancel keeps the graph, Delete removes it.
    menu_action(page, f"{name} (copy)", "delete")
    page.get_by_test_id("delete-cancel").click()
    page.get_by_test_id("delete-confirm").wait_for(state="detached")
    assert copy.is_visible()
    menu_action(page, f"{name} (copy)", "delete")
    page.get_by_test_id("delete-confirm").click()
    copy.wait_for(state="detached")
    assert page.get_by_test_id(f"graph-row-{name}").is_visible()

    # A reload shows what the database holds.
    page.reload()
    page.get_by_test_id(f"graph-row-{name}").wait_for()
    assert page.get_by_test_id(f"graph-row-{name} (copy)").count() == 0


def test_import_a_graph_file_opens_it_and_lists_it(page, nodeflow_server: Server) -> None:
    open_list(page, nodeflow_server)
    import_file(page, GRAPHS / "examples" / "branching.json")
    graph_id = graph_id_of_editor_url(page)

    open_list(page, nodeflow_server)
    row = row_of(page, graph_id)
    row.wait_for()
    assert row.get_attribute("data-testid") == "graph-row-Adult or minor"
    assert row.get_by_test_id("graph-node-count").inner_text() == "6"


def test_an_import_beside_a_graph_of_the_same_name_is_numbered_and_announced(page, nodeflow_server: Server,
                                                                            tmp_path: Path) -> None:
    """Importing a graph's own export made a second graph of the same name, and the editor's Import swapped the
    canvas for one that looked the same, without a word: the copy is now "<name> 2", a toast says what was
    imported, and History who imported it."""
    name = f"Imported twice {uuid.uuid4().hex[:6]}"
    graph = json.loads((GRAPHS / "examples" / "branching.json").read_text())
    file = tmp_path / "twice.json"
    file.write_text(json.dumps({**graph, "id": f"twice-{uuid.uuid4().hex[:8]}", "name": name}))

    open_list(page, nodeflow_server)
    import_file(page, file)
    first_id = graph_id_of_editor_url(page)
    imported_toast(page, f"Imported “{name}” as a new graph")

    # The editor's Import, with the same file: a new graph, told apart by its name.
    page.get_by_test_id("editor-menu").click()
    with page.expect_file_chooser() as chooser:
        page.get_by_test_id("import-graph").click()
    chooser.value.set_files(str(file))
    page.wait_for_url(lambda url: EDITOR_URL.search(url) is not None and not url.endswith(first_id))
    second_id = EDITOR_URL.search(page.url).group(1)
    expect(page.get_by_test_id("graph-name")).to_have_value(f"{name} 2")
    imported_toast(page, f"Imported “{name} 2” as a new graph")
    # History says who imported it (version 1 of a graph made in the app showed "—").
    page.get_by_test_id("toggle-history").click()
    expect(page.get_by_test_id("history-note")).to_have_text(re.compile(r"^imported · [^—\s]+$"))

    open_list(page, nodeflow_server)
    expect(row_of(page, first_id)).to_have_attribute("data-testid", f"graph-row-{name}")
    expect(row_of(page, second_id)).to_have_attribute("data-testid", f"graph-row-{name} 2")


def imported_toast(page, text: str) -> None:
    page.locator("[data-sonner-toast]").filter(has_text=text).first.wait_for()


def test_import_an_invalid_graph_lists_the_problem_of_each_node(page, nodeflow_server: Server) -> None:
    open_list(page, nodeflow_server)
    import_file(page, GRAPHS / "invalid_unknown_node_type.json")

    dialog = page.get_by_test_id("import-errors")
    dialog.wait_for()
    assert "invalid_unknown_node_type.json" in dialog.inner_text()
    issues = [i.inner_text() for i in dialog.get_by_test_id("import-issue").all()]
    assert len(issues) == 2
    assert "node start" in issues[0] and "'toy-trigger'" in issues[0]
    assert "node ghost" in issues[1] and "'toy-ghost'" in issues[1]
    assert page.url.rstrip("/") == nodeflow_server.url  # nothing opened

    page.get_by_test_id("import-close").click()
    dialog.wait_for(state="detached")
    assert page.get_by_test_id("graph-row-Ghost is of a type nobody defines").count() == 0


def test_edited_text_and_untitled_names() -> None:
    now = 1_800_000_000.0
    assert edited_text(now - 10, now) == "just now"
    assert edited_text(now - 3 * 60 - 5, now) == "3 min ago"
    assert edited_text(now - 5 * 3600, now) == "5 h ago"
    assert edited_text(now - 30 * 3600, now) == "yesterday"
    assert edited_text(now - 12 * 86400, now) == "12 days ago"
    assert re.fullmatch(r"\d{1,2} [A-Z][a-z]{2} 20\d\d", edited_text(now - 90 * 86400, now))
    assert edited_text(now + 5, now) == "just now"  # another machine's clock a little ahead

    assert next_untitled([]) == "Untitled graph"
    assert next_untitled(["Untitled graph", "Untitled graph 3"]) == "Untitled graph 2"
    assert next_untitled(["Untitled graph", "Untitled graph 2"]) == "Untitled graph 3"
