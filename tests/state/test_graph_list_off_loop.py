"""The graph list's and the legacy import's database and file work runs in a thread: the event loop, which serves
every tab and runs every workflow run, keeps ticking meanwhile. Each handler is called as Reflex would (its
function, on a state of its own), with one store call made slow."""

from __future__ import annotations

import inspect
import json
import time
from pathlib import Path
from typing import Any, Callable

import pytest

from nodeflow_app.runs.service import RunService
from nodeflow_app.state import access, graph_list_state, legacy_import_state
from nodeflow_app.state.graph_list_state import GraphListState
from nodeflow_app.state.legacy_import_state import LegacyImportState
from nodeflow_app.store.graphs import GraphStore
from nodeflow_app.store.templates import TemplateStore
from nodeflow_app.store.triggers import TriggerStore
from tests.nodes.loop_ticks import loop_ticks

WORKSPACE = "ws-1"
SLOW_S = 0.3


class Activation:
    """The activation service, without a launcher: records which graph went live (or off)."""

    def __init__(self):
        self.calls: list[tuple[str, str]] = []

    def activate(self, graph_id: str) -> int:
        self.calls.append(("activate", graph_id))
        return 4

    def deactivate(self, graph_id: str) -> None:
        self.calls.append(("deactivate", graph_id))


async def _no_room(page: GraphListState, workspace: str | None, live: dict[str, int]) -> None:
    pass


@pytest.fixture
def stores(tmp_path, monkeypatch):
    """A database with one graph of WORKSPACE; the handlers' store getters point at it; the caller was checked
    as an owner of WORKSPACE (the context the access middleware leaves for the handler)."""
    url = f"sqlite:///{tmp_path / 'nodeflow.db'}"
    graphs, triggers, templates, service = GraphStore(url), TriggerStore(url), TemplateStore(url), Activation()
    graph = graphs.create("Orders", workspace_id=WORKSPACE)
    for module in (graph_list_state, legacy_import_state):
        monkeypatch.setattr(module, "graph_store", lambda: graphs)
    monkeypatch.setattr(graph_list_state, "trigger_store", lambda: triggers)
    monkeypatch.setattr(graph_list_state, "template_store", lambda: templates)
    monkeypatch.setattr(graph_list_state, "activation", lambda: service)
    runs = RunService(url)  # deleting a graph stops its runs first
    runs.graphs = graphs
    monkeypatch.setattr(graph_list_state, "run_service", lambda: runs)
    # No server here, whose rooms would share the switches (tests/state/test_room_activation.py).
    monkeypatch.setattr(graph_list_state, "show_live", lambda graph_id, workspace_id, version: None)
    monkeypatch.setattr(GraphListState, "_share_live", _no_room)
    token = access._current.set(access.Access(None, WORKSPACE, "owner"))
    yield graphs, templates, service, graph.id
    access._current.reset(token)
    runs.close()
    for store in (graphs, triggers, templates):
        store.engine.dispose()


def slow(monkeypatch, owner: Any, name: str) -> None:
    """`owner.name` sleeps SLOW_S before doing its work: on the event loop, nothing else would run meanwhile."""
    real = getattr(owner, name)

    def sleeping(*args: Any, **kwargs: Any) -> Any:
        time.sleep(SLOW_S)
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, sleeping)


async def off_the_loop(call: Callable[[], Any]) -> Any:
    """`call()`'s answer, awaited; the loop must have ticked meanwhile (a handler run on the loop does not)."""
    async with loop_ticks() as ticks:
        answer = call()
        answer = await answer if inspect.isawaitable(answer) else answer
    assert ticks[0] >= 10, f"the event loop was held: {ticks[0]} ticks in {SLOW_S} s"
    return answer


def state() -> GraphListState:
    return GraphListState(_reflex_internal_init=True)


async def test_listing_the_graphs_does_not_hold_the_loop(stores, monkeypatch):
    graphs, *_ = stores
    slow(monkeypatch, graphs, "list")
    page = state()
    await off_the_loop(lambda: GraphListState.load.fn(page))
    assert [row.name for row in page.rows] == ["Orders"] and page.total == 1 and page.loaded
    page.search = "ord"
    await off_the_loop(lambda: GraphListState.set_search.fn(page, "nothing"))
    assert page.rows == [] and page.total == 1


@pytest.mark.parametrize("on", [True, False])
async def test_the_rows_switch_does_not_hold_the_loop(stores, monkeypatch, on):
    """Activation reads the graph, plans it and writes its triggers; `_in_workspace` runs in the thread and still
    sees the caller checked for this event (the thread gets a copy of the context)."""
    graphs, _, service, graph_id = stores
    slow(monkeypatch, service, "activate" if on else "deactivate")
    page = state()
    await off_the_loop(lambda: GraphListState.set_active.fn(page, graph_id, on))
    assert service.calls == [("activate" if on else "deactivate", graph_id)] and page.loaded


async def test_another_workspaces_graph_is_still_not_found_from_the_thread(stores):
    graphs, _, service, _ = stores
    other = graphs.create("Theirs", workspace_id="ws-2")
    await GraphListState.set_active.fn(state(), other.id, True)
    assert service.calls == []


@pytest.mark.parametrize("slow_call, handler", [
    ("duplicate", lambda page, graph_id: GraphListState.duplicate.fn(page, graph_id)),
    ("delete", lambda page, graph_id: GraphListState.confirm_delete.fn(page)),
    ("rename", lambda page, graph_id: GraphListState.confirm_rename.fn(page, {"name": "Invoices"})),
    ("create", lambda page, graph_id: GraphListState.create_graph.fn(page)),
])
async def test_changing_a_graph_does_not_hold_the_loop(stores, monkeypatch, slow_call, handler):
    graphs, _, _, graph_id = stores
    slow(monkeypatch, graphs, slow_call)
    page = state()
    page.delete_id, page.delete_name, page.rename_id = graph_id, "Orders", graph_id
    await off_the_loop(lambda: handler(page, graph_id))
    names = sorted(s.name for s in graphs.list(workspace_id=WORKSPACE))
    assert names == {"duplicate": ["Orders", "Orders (copy)"], "delete": [], "rename": ["Invoices"],
                     "create": ["Orders", "Untitled graph"]}[slow_call]


@pytest.mark.parametrize("slow_call", ["load_templates", "list"])
async def test_the_new_graph_picker_reads_its_templates_off_the_loop(stores, monkeypatch, slow_call):
    _, templates, *_ = stores
    if slow_call == "load_templates":
        slow(monkeypatch, graph_list_state, "load_templates")
    else:
        slow(monkeypatch, templates, "list")
    page = state()
    await off_the_loop(lambda: GraphListState.open_picker.fn(page))
    assert page.picker_open and page.templates and page.workspace_templates == []


async def test_deleting_a_workspace_template_does_not_hold_the_loop(stores, monkeypatch):
    _, templates, *_ = stores
    slow(monkeypatch, templates, "delete")
    await off_the_loop(lambda: GraphListState.delete_template.fn(state(), "workspace-nope"))


class Chunk:
    def __init__(self, filename: str, data: bytes):
        self.filename, self.data = filename, data


async def chunks(*parts: Chunk):
    for part in parts:
        yield part


GRAPH = json.dumps({"name": "Imported", "nodes": [{"id": "t", "type": "manual-trigger", "name": "Start"}],
                    "edges": []})


@pytest.mark.parametrize("slow_call", ["legacy_migration", "import_json"])
async def test_an_imported_file_is_parsed_and_stored_off_the_loop(stores, monkeypatch, slow_call):
    """Up to MAX_IMPORT_BYTES of JSON: parsed (is it a graph of the older runtime?), checked, then stored."""
    graphs, *_ = stores
    slow(monkeypatch, graph_list_state if slow_call == "legacy_migration" else graphs, slow_call)

    async def upload() -> list[Any]:
        return [event async for event in GraphListState.import_chunks.fn(
            state(), chunks(Chunk("graph.json", GRAPH.encode())))]

    events = await off_the_loop(upload)
    assert len(events) == 2  # a toast says what was imported, the editor opens
    assert sorted(s.name for s in graphs.list(workspace_id=WORKSPACE)) == ["Imported", "Orders"]


async def test_confirming_a_legacy_import_stores_it_off_the_loop(stores, monkeypatch):
    graphs, *_ = stores
    slow(monkeypatch, graphs, "import_json")
    dialog = LegacyImportState(_reflex_internal_init=True)
    dialog._graph_text, dialog.open = GRAPH, True
    await off_the_loop(lambda: LegacyImportState.confirm.fn(dialog))
    assert not dialog.open and dialog._graph_text == ""
    assert sorted(s.name for s in graphs.list(workspace_id=WORKSPACE)) == ["Imported", "Orders"]


async def test_a_picker_opened_before_the_lists_load_ran_stays_open(stores):
    """Reflex runs a page's on_load after its hydrate, so a click on New graph can come between them; the load
    (slower now, in a thread) closed the picker the person had just opened. It still resets one left open by a
    graph made earlier in this tab."""
    page = state()
    page.picker_open = True  # New graph, clicked while the list loads
    await GraphListState.load.fn(page)
    assert page.picker_open and page.loaded
    page.creating = True  # a graph was made and opened; now back on the list
    await GraphListState.load.fn(page)
    assert (page.creating, page.picker_open) == (False, False)


def test_the_legacy_dialog_is_filled_by_the_import_only_never_by_an_event_from_the_browser(stores):
    """`show` was an event any browser could send, with a dict in place of the Migration: the handler crashed."""
    assert "show" not in LegacyImportState.event_handlers and "_show" not in LegacyImportState.event_handlers
    dialog = LegacyImportState(_reflex_internal_init=True)
    legacy = (Path(__file__).parents[1] / "fixtures" / "graphs" / "legacy" / "subagents.json").read_text()
    dialog._show("old.json", legacy_import_state.legacy_migration(legacy, "old.json"))
    assert dialog.open and dialog.ok and dialog.file_name == "old.json" and dialog._graph_text
