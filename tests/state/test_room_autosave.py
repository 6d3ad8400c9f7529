"""A room's edits are saved by the server too: a tab closed (or cut off) before its autosave went out left them in
memory until some later save, lost at a restart, with "Unsaved changes" meanwhile (docs/editor.md, "Editing
together")."""

from __future__ import annotations

import asyncio
import time

import pytest

from nodeflow_app.state import editor_state
from nodeflow_app.state.access import Access
from nodeflow_app.state.editor_state import EditorState
from nodeflow_app.state.graph_room import GraphRoom
from nodeflow_app.store.graphs import GraphStore
from nodes._registry import default_registry
from tests.state.rooms import RoomTab, use_graph_store


@pytest.fixture
def store(tmp_path, monkeypatch) -> GraphStore:
    store = GraphStore(f"sqlite:///{tmp_path / 'nodeflow.db'}")
    use_graph_store(monkeypatch, store)
    yield store
    store.engine.dispose()


async def room_with_edits(store: GraphStore, *authors: tuple[str, str]) -> tuple[str, GraphRoom]:
    """A stored graph and its room, with one unsaved edit by each (user id, name) of `authors`."""
    graph_id = store.create("Flow").id
    room = GraphRoom(_reflex_internal_init=True)
    await room._open(graph_id)
    for user_id, name in authors:
        change = room._doc.add_node(default_registry(), "edit-fields", {"x": 0, "y": 0}, name=f"By {name}")
        room._publish(change.ops, f"tab-{user_id}", user_id, name)
    return graph_id, room


async def test_the_server_saves_a_room_once_a_moment_after_its_last_edit(monkeypatch):
    saved = []

    async def save_room(graph_id):
        saved.append(graph_id)

    monkeypatch.setattr(editor_state, "save_room", save_room)
    monkeypatch.setattr(editor_state, "SERVER_AUTOSAVE_S", 0.1)
    for _ in range(3):  # a burst: each edit starts the wait again
        editor_state.autosave_later("g1")
        await asyncio.sleep(0.05)
    assert saved == []
    await asyncio.sleep(0.2)
    assert saved == ["g1"]


async def test_a_stopping_server_saves_at_once_the_rooms_whose_autosave_is_waiting(monkeypatch):
    saved = []

    async def save_room(graph_id):
        saved.append(graph_id)

    monkeypatch.setattr(editor_state, "save_room", save_room)
    monkeypatch.setattr(editor_state, "SERVER_AUTOSAVE_S", 60)  # not due before the process is gone
    for graph_id in ("g1", "g2"):
        editor_state.autosave_later(graph_id)
    await editor_state.save_waiting_rooms()
    assert sorted(saved) == ["g1", "g2"]
    assert editor_state._server_autosaves == {}


async def test_a_stopping_server_waits_for_the_rooms_saves_a_bounded_time(monkeypatch):
    async def stuck(graph_id):
        await asyncio.sleep(60)

    monkeypatch.setattr(editor_state, "save_room", stuck)
    monkeypatch.setattr(editor_state, "SERVER_AUTOSAVE_S", 60)
    editor_state.autosave_later("g1")
    started = time.monotonic()
    await editor_state.save_waiting_rooms(timeout=0.2)
    assert time.monotonic() - started < 1


async def test_a_server_save_is_a_version_by_the_authors_of_the_edits(store):
    graph_id, room = await room_with_edits(store, ("u1", "Ann"), ("u2", "Bob"))
    assert await editor_state.save_unsaved(room, graph_id) == 2
    assert (room.unsaved, room.save_status, room.saved_version, room._authors) == (False, "saved", 2, {})
    latest = store.versions(graph_id)[0]
    assert (latest.version, latest.author, latest.author_name, latest.note) == (2, "u1", "Ann, Bob", "autosave")
    assert {n["name"] for n in store.get(graph_id).graph["nodes"]} == {"By Ann", "By Bob"}
    assert await editor_state.save_unsaved(room, graph_id) is None  # nothing left: no empty version


async def test_a_failed_server_save_leaves_the_edits_unsaved_with_their_authors(store, monkeypatch):
    graph_id, room = await room_with_edits(store, ("u1", "Ann"))

    def refuse(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(editor_state, "_validate_and_store", refuse)
    with pytest.raises(OSError):
        await editor_state.save_unsaved(room, graph_id)
    assert (room.unsaved, room.save_status, room._authors) == (True, "error", {"u1": "Ann"})


@pytest.mark.parametrize("role, saved", [("viewer", False), ("editor", True)])
async def test_an_editor_leaving_the_room_saves_its_unsaved_edits(store, monkeypatch, role, saved):
    graph_id, room = await room_with_edits(store, ("u1", "Ann"))
    monkeypatch.setattr(editor_state, "current", lambda: Access(None, "w1", role))
    await EditorState.event_handlers["leave_room"].fn(RoomTab(room))
    assert room.unsaved is not saved
    assert store.get(graph_id).version == (2 if saved else 1)
