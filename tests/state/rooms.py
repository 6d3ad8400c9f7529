"""Helpers for tests of a graph room and the editor tabs that share it, without a server."""

from __future__ import annotations

from typing import Any

from nodeflow_app.state import editor_state, graph_room, room_access
from nodeflow_app.state.editor_state import EditorState
from nodeflow_app.state.graph_room import GraphRoom


def use_graph_store(monkeypatch, store: Any) -> None:
    """The room and the editor read and write graphs in `store` (a GraphStore or a stand-in for one)."""
    monkeypatch.setattr(graph_room, "graph_store", lambda: store)
    monkeypatch.setattr(editor_state, "graph_store", lambda: store)


def everyone_may_view(monkeypatch) -> None:
    """Every tab's person may view the rooms' workspaces (tests of what rooms share, whose tabs have no session;
    tests/state/test_room_access.py tests who they share it with)."""
    async def allowed(session: str, workspace_id: str) -> bool:
        return True

    monkeypatch.setattr(room_access, "_allowed", allowed)


class RoomTab:
    """What EditorState's save and leave_room handlers use of a tab: its room (shared by every tab of the graph),
    the room's document, and its own `me` (its presence entry)."""

    def __init__(self, room: GraphRoom, me: str = "tab-u1"):
        self.room, self.me, self.issue_list = room, me, []

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        return False

    async def _room(self):
        return self.room, None

    @property
    def _doc(self):
        return self.room._doc

    def _set_issues(self, issues):
        pass

    _save = EditorState._save
