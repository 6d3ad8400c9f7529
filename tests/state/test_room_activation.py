"""Which version of a graph is live belongs to its room (`GraphRoom.live_version`), as `saved_version` does: when
one tab switches the graph on or off, or makes a newer version live, every other tab with the graph open shows
it. It was each tab's own: another person's editor kept "Live · v7" (or showed the graph off) until reloaded.

Tabs here are linked to the room through Reflex's memory state manager, as `EditorState._room` links them in the
server: what one tab's event changes in the room is what the other tab's next delta reads.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, AsyncIterator, TypeVar

import pytest
from reflex.istate import shared
from reflex.istate.data import SessionData
from reflex.istate.manager.memory import StateManagerMemory
from reflex.istate.manager.token import BaseStateToken
from reflex_base.event.context import EventContext

from nodeflow_app.editor.document import GraphDocument
from nodeflow_app.runtime.graph import Graph
from nodeflow_app.state import access, graph_list_state, trigger_state
from nodeflow_app.state.editor_state import EditorState
from nodeflow_app.state.graph_list_state import GraphListState
from nodeflow_app.state.graph_room import GraphRoom, room_token
from nodeflow_app.state.trigger_state import TriggerState
from nodeflow_app.store.graphs import GraphStore
from nodeflow_app.store.triggers import TriggerStore

WORKSPACE = "ws-1"
S = TypeVar("S")


class Activation:
    """The activation service without a launcher: each activation makes the next of `versions` live."""

    def __init__(self, *versions: int):
        self.versions = list(versions)

    def activate(self, graph_id: str) -> int:
        return self.versions.pop(0)

    def deactivate(self, graph_id: str) -> None:
        pass


async def _no_events(token: str, *events: Any) -> None:
    pass


class Tabs:
    """Browser tabs (client tokens) of one server, each with the graph `graph_id` open in its editor."""

    def __init__(self, graph_id: str, monkeypatch):
        self.graph_id, self.manager = graph_id, StateManagerMemory()
        self.pushed: list[tuple[set[str], set[str]]] = []  # (tabs, room vars) Reflex sent to tabs other than the caller
        monkeypatch.setattr(shared, "_do_update_other_tokens", self._push)

    def _push(self, affected_tokens: set[str], previous_dirty_vars: dict[str, set[str]], state_type: type) -> list:
        """Reflex's fan-out (a delta to each other linked tab, over its websocket): recorded."""
        room_vars = previous_dirty_vars.get(GraphRoom.get_full_name(), set())
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


class EditorTab:
    """What TriggerState uses of the tab's editor: its graph, saved, and its room."""

    def __init__(self, graph_id: str, room: GraphRoom):
        self._graph_id, self.room = graph_id, room

    async def _save_pending_edits(self, graph_id: str) -> bool:
        return True

    async def _room(self):
        return self.room, None


async def switch_in(tabs: Tabs, tab: str, monkeypatch, handler: str, *args: Any) -> Any:
    """`tab`'s TriggerState runs `handler` (the switch, or "Make vN live") on the editor page of the graph."""
    async with tabs.room_of(tab) as room:
        editor = EditorTab(tabs.graph_id, room)

        async def get_state(self, cls):  # no state tree here: the tab's editor, holding its room
            assert cls is EditorState
            return editor

        monkeypatch.setattr(TriggerState, "get_state", get_state)
        return await TriggerState.event_handlers[handler].fn(TriggerState(_reflex_internal_init=True), *args)


async def test_switching_on_making_a_new_version_live_and_off_in_one_tab_shows_in_the_other(monkeypatch):
    tabs = Tabs("g1", monkeypatch)
    monkeypatch.setattr(trigger_state.routes, "page_graph_id", lambda router: "g1")
    service = Activation(7, 8)
    monkeypatch.setattr(trigger_state, "activation", lambda: service)
    assert await tabs.live_in("tab-b") == 0  # Bob has the graph open; it is off

    await switch_in(tabs, "tab-a", monkeypatch, "set_active", True)  # Ann switches it on
    assert "live_version" in tabs.pushed_to("tab-b")  # Bob's browser gets it without an event of his
    assert await tabs.live_in("tab-b") == 7
    await switch_in(tabs, "tab-a", monkeypatch, "make_latest_live")  # Ann makes her newer save live
    assert await tabs.live_in("tab-b") == 8
    await switch_in(tabs, "tab-b2", monkeypatch, "set_active", False)  # Bob's second tab switches it off
    assert await tabs.live_in("tab-b") == 0 and await tabs.live_in("tab-a") == 0


async def test_a_refused_activation_leaves_the_live_version_every_tab_shows(monkeypatch):
    tabs = Tabs("g1", monkeypatch)
    monkeypatch.setattr(trigger_state.routes, "page_graph_id", lambda router: "g1")

    class Refusing(Activation):
        def activate(self, graph_id: str) -> int:
            raise trigger_state.ActivationRefused("add a Webhook or Schedule trigger")

    monkeypatch.setattr(trigger_state, "activation", lambda: Activation(3))
    await switch_in(tabs, "tab-a", monkeypatch, "set_active", True)
    monkeypatch.setattr(trigger_state, "activation", lambda: Refusing())
    await switch_in(tabs, "tab-a", monkeypatch, "make_latest_live")
    assert await tabs.live_in("tab-b") == 3  # the live version keeps running


@pytest.fixture
def stores(tmp_path, monkeypatch):
    """A database with one graph of WORKSPACE for the graph list's handlers; the caller was checked as its owner."""
    url = f"sqlite:///{tmp_path / 'nodeflow.db'}"
    graphs, triggers = GraphStore(url), TriggerStore(url)
    monkeypatch.setattr(graph_list_state, "graph_store", lambda: graphs)
    monkeypatch.setattr(graph_list_state, "trigger_store", lambda: triggers)
    token = access._current.set(access.Access(None, WORKSPACE, "owner"))
    yield graphs.create("Orders", workspace_id=WORKSPACE).id
    access._current.reset(token)
    for store in (graphs, triggers):
        store.engine.dispose()


async def switch_on_list(tabs: Tabs, tab: str, graph_id: str, on: bool) -> None:
    """`tab`, on the graph list, flips the row's switch of `graph_id`."""
    async with tabs.state_of(tab, GraphListState) as page:
        await GraphListState.set_active.fn(page, graph_id, on)


async def test_a_switch_on_the_graph_list_shows_in_the_editors_that_have_the_graph_open(stores, monkeypatch):
    graph_id = stores
    tabs = Tabs(graph_id, monkeypatch)
    monkeypatch.setattr(graph_list_state, "activation", lambda: Activation(4))
    assert await tabs.live_in("tab-editor") == 0
    await switch_on_list(tabs, "tab-list", graph_id, True)  # a tab not in the room
    assert tabs.pushed_to("tab-editor") == {"live_version"}
    assert await tabs.live_in("tab-editor") == 4
    await switch_on_list(tabs, "tab-list", graph_id, False)
    assert await tabs.live_in("tab-editor") == 0


async def test_a_tab_back_on_the_list_from_the_graphs_editor_switches_it_for_the_room(stores, monkeypatch):
    """The tab is still linked to the room it left: its events hold the room's lock (the switch waited for ever)."""
    graph_id = stores
    tabs = Tabs(graph_id, monkeypatch)
    monkeypatch.setattr(graph_list_state, "activation", lambda: Activation(4))
    assert await tabs.live_in("tab-editor") == await tabs.live_in("tab-back") == 0
    await switch_on_list(tabs, "tab-back", graph_id, True)
    assert "live_version" in tabs.pushed_to("tab-editor")
    assert await tabs.live_in("tab-editor") == 4


async def test_a_switch_on_the_graph_list_opens_no_room_for_a_graph_nobody_has_open(stores, monkeypatch):
    graph_id = stores
    tabs = Tabs(graph_id, monkeypatch)
    monkeypatch.setattr(graph_list_state, "activation", lambda: Activation(4))
    await switch_on_list(tabs, "tab-list", graph_id, True)
    root = await tabs.manager.get_state(BaseStateToken(ident=room_token(graph_id), cls=GraphRoom))
    room = await root.get_state(GraphRoom)
    assert room._doc is None and room.live_version == 0  # the first tab to open the graph reads it
    assert tabs.pushed == []
