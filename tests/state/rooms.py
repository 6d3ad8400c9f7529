"""Helpers for tests of a graph room and the editor tabs that share it, without a server."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, AsyncIterator, TypeVar

from reflex.istate import shared
from reflex.istate.data import SessionData
from reflex.istate.manager.memory import StateManagerMemory
from reflex.istate.manager.token import BaseStateToken
from reflex_base.event.context import EventContext

from nodeflow_app.editor.document import GraphDocument
from nodeflow_app.runtime.graph import Graph
from nodeflow_app.state import editor_state, graph_room, room_access
from nodeflow_app.state.editor_state import EditorState
from nodeflow_app.state.graph_room import GraphRoom, room_token

S = TypeVar("S")


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


async def _no_events(token: str, *events: Any) -> None:
    pass


class LinkedTabs:
    """Browser tabs (client tokens) of one server, each with the graph `graph_id` open in its editor."""

    def __init__(self, graph_id: str, monkeypatch):
        self.graph_id, self.manager = graph_id, StateManagerMemory()
        self.pushed: list[tuple[set[str], set[str]]] = []  # (tabs, room vars) Reflex sent to tabs other than the caller
        monkeypatch.setattr(shared, "_do_update_other_tokens", self._push)

    def _push(self, affected_tokens: set[str], previous_dirty_vars: dict[str, set[str]], state_type: type) -> list:
        """Reflex's fan-out (a delta to each other linked tab, over its websocket): recorded."""
        room_vars = {name for names in previous_dirty_vars.values() for name in names}
        self.pushed.append((set(affected_tokens), {name.removesuffix("_rx_state_") for name in room_vars}))
        return []

    def pushed_to(self, tab: str) -> set[str]:
        """The room vars that went to `tab` while another tab (or no tab) had the event."""
        return {name for tokens, names in self.pushed if tab in tokens for name in names}

    @contextlib.contextmanager
    def event_of(self, tab: str):
        """What Reflex sets up for one event of `tab`."""
        with EventContext(token=tab, state_manager=self.manager, enqueue_impl=_no_events):
            yield

    @contextlib.asynccontextmanager
    async def state_of(self, tab: str, cls: type[S]) -> AsyncIterator[S]:
        """`tab`'s state `cls` during one of its events (under its locks: the tab's, and its room's once linked)."""
        with self.event_of(tab):
            async with asyncio.timeout(10):  # a lock taken twice waits for ever
                async with self.manager.modify_state_with_links(BaseStateToken(ident=tab, cls=cls)) as root:
                    if root.rx_router_session.client_token != tab:  # the tab's first event (as Reflex does)
                        root.rx_router_session = SessionData(client_token=tab)
                    yield await root.get_state(cls)
                    root._clean()

    @contextlib.asynccontextmanager
    async def room_of(self, tab: str) -> AsyncIterator[GraphRoom]:
        """`tab`'s room during one of its events (linked on the tab's first, as the editor's page load does)."""
        async with self.state_of(tab, GraphRoom) as room:
            room = await room._link_to(room_token(self.graph_id))
            if room._doc is None:  # the first tab opens the graph
                room._doc = GraphDocument.from_graph(Graph(id=self.graph_id, name="Orders"), history=False)
            yield room

    async def live_in(self, tab: str) -> int:
        async with self.room_of(tab) as room:
            return room.live_version
