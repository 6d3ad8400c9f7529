"""The editor's store work runs in threads: opening a graph, checking it is the newest version, saving before a
run and the inspector's upstream outputs each held every run and tab while the database answered."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path

import pytest

from nodeflow_app.state import editor_state
from nodeflow_app.state.editor_state import EditorState
from nodeflow_app.state.graph_room import GraphRoom
from nodeflow_app.store.graphs import GraphStore
from nodes._registry import default_registry
from tests.nodes.loop_ticks import loop_ticks
from tests.state.rooms import RoomTab, use_graph_store

SLOW_S = 0.3
EXAMPLES = Path(__file__).resolve().parents[1] / "fixtures" / "graphs" / "examples"


class SlowStore:
    """A real graph store whose reads and writes each take SLOW_S (a big graph, a busy database)."""

    def __init__(self, store: GraphStore):
        self._store = store

    def __getattr__(self, name: str):
        call = getattr(self._store, name)
        return lambda *args, **kwargs: time.sleep(SLOW_S) or call(*args, **kwargs)


@pytest.fixture
def slow_store(tmp_path, monkeypatch) -> GraphStore:
    store = GraphStore(f"sqlite:///{tmp_path / 'nodeflow.db'}")
    slow = SlowStore(store)
    use_graph_store(monkeypatch, slow)
    yield store
    store.engine.dispose()


def room() -> GraphRoom:
    return GraphRoom(_reflex_internal_init=True)


async def test_opening_a_graph_and_checking_its_version_leave_the_loop_free(slow_store):
    graph_id = slow_store.create("Flow").id
    r = room()
    async with loop_ticks() as ticks:
        assert await r._open(graph_id) == (None, [])
    assert ticks[0] >= 10, ticks
    assert (r._doc.id, r._doc.name, r.saved_version, r.save_status) == (graph_id, "Flow", 1, "saved")
    async with loop_ticks() as ticks:
        assert await r._is_stale() is False
    assert ticks[0] >= 10, ticks
    slow_store.save(graph_id, slow_store.get(graph_id).graph, note="from the CLI")  # version 2, written elsewhere
    assert await r._is_stale() is True


async def test_a_missing_graph_is_said_as_before(slow_store):
    r = room()
    assert await r._open("nope") == ("missing", [])
    assert r._doc is None


async def _tab_with_an_unsaved_edit(store: GraphStore, monkeypatch) -> tuple[str, GraphRoom, object]:
    """(a stored graph, its room with one edit not saved yet, a tab of the room that can `_save`)."""
    graph_id = store.create("Flow").id
    r = room()
    await r._open(graph_id)
    r._publish([{"op": "select", "ids": []}], "tab-a", "u1", "Ann")
    monkeypatch.setattr(editor_state, "current", lambda: type("Access", (), {"user": None})())
    return graph_id, r, RoomTab(r)


async def test_saving_before_a_run_writes_in_a_thread(slow_store, monkeypatch):
    graph_id, r, editor = await _tab_with_an_unsaved_edit(slow_store, monkeypatch)
    async with loop_ticks() as ticks:
        await editor._save(r, "autosave")
    assert ticks[0] >= 10, ticks
    assert (r.save_status, r.unsaved, r.saved_version) == ("saved", False, 2)
    assert slow_store.get(graph_id).version == 2


async def test_the_inspectors_upstream_outputs_are_read_in_a_thread(monkeypatch):
    """A click on a node read up to five whole past runs on the loop."""
    from nodeflow_app.editor.document import GraphDocument
    from nodeflow_app.validation import validate_graph
    from nodes._registry import default_registry

    graph, issues = validate_graph(json.loads((EXAMPLES / "branching.json").read_text()), default_registry())
    assert graph is not None, issues
    runs = {"graph": graph.id, "nodes": {"check": {"out": {"adult": True}}}}

    def slow_runs(graph_id, node_id, wanted, limit=5):
        time.sleep(SLOW_S)
        assert graph_id == runs["graph"]
        return ({node_id: outputs for node_id, outputs in runs["nodes"].items() if node_id in wanted},
                {"status": "completed", "output": "{}"})

    monkeypatch.setattr(editor_state, "_last_runs", slow_runs)
    tab = type("Tab", (), {"_doc": GraphDocument.from_graph(graph, history=False), "selected_id": "adult",
                           "upstream_fields": [], "node_result": {},
                           "_load_run_data": editor_state.EditorState._load_run_data})()
    async with loop_ticks() as ticks:
        await tab._load_run_data()
    assert ticks[0] >= 10, ticks
    assert tab.upstream_fields and all(row["node"] == "Is adult" for row in tab.upstream_fields), tab.upstream_fields
    assert tab.node_result == {"status": "completed", "output": "{}"}


async def test_a_save_given_up_with_its_page_load_is_left_to_the_next_autosave(slow_store, monkeypatch):
    """Reflex cancels an unfinished page load (a newer one, a reconnect, a closed tab) while a reload's save waits
    for its thread: the room had counted the edits saved, and a write that then failed was never retried."""
    graph_id, r, editor = await _tab_with_an_unsaved_edit(slow_store, monkeypatch)
    saving = asyncio.create_task(editor._save(r, "autosave"))
    await asyncio.sleep(0.05)
    saving.cancel()
    with pytest.raises(asyncio.CancelledError):
        await saving
    assert (r.unsaved, r.save_status, r._authors) == (True, "unsaved", {"u1": "Ann"})
    assert await r._is_stale() is False  # unsaved edits here: the graph is not reopened under the tabs


class FirstSaveSlow:
    """The real store; the first save takes 0.5 s (a 1,000-node graph, a busy database)."""

    def __init__(self, store: GraphStore):
        self._store, self._first = store, threading.Event()

    def __getattr__(self, name):
        call = getattr(self._store, name)
        if name != "save":
            return call

        def save(*args, **kwargs):
            if not self._first.is_set():
                self._first.set()
                time.sleep(0.5)
            return call(*args, **kwargs)
        return save


async def test_an_autosave_landing_after_a_later_save_does_not_hide_its_edits(tmp_path, monkeypatch):
    """Ann's autosave claims her edit and writes in a thread; Bob's edit meanwhile is saved before his chat
    message runs. The older snapshot landed last as the newest version, without Bob's edit, and the room counted
    everything saved: runs used the graph without it, and a restart lost it."""
    store = GraphStore(f"sqlite:///{tmp_path / 'nodeflow.db'}")
    slow = FirstSaveSlow(store)
    use_graph_store(monkeypatch, slow)
    monkeypatch.setattr(editor_state, "still_checked", lambda graph_id: True)
    monkeypatch.setattr(editor_state, "current", lambda: type("Access", (), {"user": None})())
    graph_id = store.create("Flow").id
    room = GraphRoom(_reflex_internal_init=True)
    await room._open(graph_id)

    def edit(name):
        change = room._doc.add_node(default_registry(), "edit-fields", {"x": 0, "y": 0}, name=name)
        room._publish(change.ops, "tab", "u1", "Ann")

    edit("First")  # Ann's edit
    ann, bob = RoomTab(room), RoomTab(room)
    autosave = asyncio.create_task(EditorState.event_handlers["save"].fn(ann, {"auto": True}))
    await asyncio.sleep(0.1)  # it claimed the edit, writes in a thread
    edit("Second")  # Bob's edit meanwhile
    await bob._save(room, "autosave")  # Bob sends a chat message: saved first
    await autosave

    newest = store.get(graph_id)
    names = sorted(n["name"] for n in newest.graph["nodes"])
    assert names == ["First", "Second"], f"the newest stored version v{newest.version} holds {names}"
    assert (room.unsaved, room.save_status, room.saved_version) == (False, "saved", newest.version)


def test_a_save_claimed_earlier_is_dropped_once_a_later_one_is_written():
    """The later claim's snapshot holds the earlier one's edits and more (a History restore takes a claim too)."""
    first, second = editor_state.next_claim(), editor_state.next_claim()
    assert editor_state.in_claim_order("g-claims", second, lambda: "v2") == "v2"
    assert editor_state.in_claim_order("g-claims", first, lambda: pytest.fail("written over v2")) is None
    assert editor_state.in_claim_order("g-claims", editor_state.next_claim(), lambda: "v3") == "v3"
