"""Which version of a graph is live is shared, as `saved_version` is (state/live_rooms.py): when one tab switches
the graph on or off, or makes a newer version live, in its editor or on the graph list, every editor of the graph
(`GraphRoom.live_version`) and every graph list of its workspace (`GraphListRoom.live`) shows it. It was each tab's
own: another person's editor kept "Live · v7" (or showed the graph off) until reloaded, and so did the list.

Tabs here are linked to the rooms through Reflex's memory state manager, as in the server: what one tab's switch
changes is what the other tabs' next events read, and what Reflex's fan-out sends to their browsers.
"""

from __future__ import annotations

from typing import Any

import pytest
from reflex.istate.manager.token import BaseStateToken

from nodeflow_app.state import access, graph_list_state, live_rooms, trigger_state
from nodeflow_app.state.graph_list_state import GraphListState
from nodeflow_app.state.graph_room import GraphRoom, room_token
from nodeflow_app.state.live_rooms import GraphListRoom
from nodeflow_app.state.trigger_state import TriggerState
from nodeflow_app.store.graphs import GraphStore
from nodeflow_app.store.triggers import TriggerStore
from tests.state.rooms import LinkedTabs, everyone_may_view

WORKSPACE = "ws-1"


class Activation:
    """The activation service without a launcher: each activation makes the next version (7, 8, ...) live."""

    def __init__(self, triggers: TriggerStore):
        self.triggers, self.version = triggers, 6

    def activate(self, graph_id: str) -> int:
        self.version += 1
        self.triggers.activate(graph_id, self.version, {})
        return self.version

    def deactivate(self, graph_id: str) -> None:
        self.triggers.deactivate(graph_id)


async def switch_in_editor(tabs: LinkedTabs, tab: str, handler: str, *args: Any) -> Any:
    """`tab`, on the graph's editor page, runs TriggerState's `handler` (the switch, or "Make vN live"); then the
    rooms change (after the event: its locks are let go first)."""
    async with tabs.state_of(tab, TriggerState) as switch:
        answer = await TriggerState.event_handlers[handler].fn(switch, *args)
    await live_rooms.settled()
    return answer


async def switch_on_list(tabs: LinkedTabs, tab: str, graph_id: str, on: bool) -> None:
    """`tab`, on the graph list, flips the row's switch of `graph_id`."""
    async with tabs.state_of(tab, GraphListState) as page:
        await GraphListState.set_active.fn(page, graph_id, on)
    await live_rooms.settled()


async def switches_on_list(tabs: LinkedTabs, tab: str) -> dict[str, int]:
    """What the switches of `tab`'s graph list show: {graph id: live version} of those on. (The first time, the tab
    opens the list: its load links the tab to the workspace's list room.)"""
    async with tabs.state_of(tab, GraphListState) as page:
        if not page.loaded:
            await GraphListState.load.fn(page)
        return dict((await page.get_state(GraphListRoom)).live)


@pytest.fixture
def graph_id(tmp_path, monkeypatch) -> str:
    """A stored graph of WORKSPACE (the list's handlers read the database); every event's caller was checked as
    the workspace's owner; activation makes versions 7, 8, ... live."""
    url = f"sqlite:///{tmp_path / 'nodeflow.db'}"
    graphs, triggers = GraphStore(url), TriggerStore(url)
    monkeypatch.setattr(graph_list_state, "graph_store", lambda: graphs)
    monkeypatch.setattr(graph_list_state, "trigger_store", lambda: triggers)
    created = graphs.create("Orders", workspace_id=WORKSPACE).id
    service = Activation(triggers)
    for module in (trigger_state, graph_list_state):
        monkeypatch.setattr(module, "activation", lambda: service)
    monkeypatch.setattr(trigger_state.routes, "page_graph_id", lambda router: created)
    token = access._current.set(access.Access(None, WORKSPACE, "owner"))
    everyone_may_view(monkeypatch)
    yield created
    access._current.reset(token)
    for store in (graphs, triggers):
        store.engine.dispose()


async def test_switching_on_making_a_new_version_live_and_off_in_one_editor_shows_in_every_tab(graph_id, monkeypatch):
    tabs = LinkedTabs(graph_id, monkeypatch)
    assert await tabs.live_in("ann") == await tabs.live_in("bob") == 0  # both have the graph open; it is off
    assert await switches_on_list(tabs, "cy") == {}  # Cy has the graph list open

    await switch_in_editor(tabs, "ann", "set_active", True)
    assert "live_version" in tabs.pushed_to("bob")  # Bob's browser gets it without an event of his
    assert "live" in tabs.pushed_to("cy")
    assert (await tabs.live_in("bob"), await switches_on_list(tabs, "cy")) == (7, {graph_id: 7})

    await switch_in_editor(tabs, "ann", "make_latest_live")  # Ann's newer save
    assert (await tabs.live_in("bob"), await switches_on_list(tabs, "cy")) == (8, {graph_id: 8})

    await tabs.live_in("bob-2")  # Bob's second tab switches it off
    await switch_in_editor(tabs, "bob-2", "set_active", False)
    assert (await tabs.live_in("ann"), await tabs.live_in("bob"), await switches_on_list(tabs, "cy")) == (0, 0, {})


async def test_a_refused_activation_leaves_the_live_version_every_tab_shows(graph_id, monkeypatch):
    tabs = LinkedTabs(graph_id, monkeypatch)
    assert await tabs.live_in("ann") == await tabs.live_in("bob") == 0
    await switch_in_editor(tabs, "ann", "set_active", True)
    monkeypatch.setattr(Activation, "activate", refuse)
    answer = await switch_in_editor(tabs, "ann", "make_latest_live")
    assert "Not activated" in str(answer)
    assert await tabs.live_in("bob") == await tabs.live_in("ann") == 7  # the live version keeps running


async def test_a_switch_on_the_graph_list_shows_in_the_graphs_editors_and_the_other_lists(graph_id, monkeypatch):
    tabs = LinkedTabs(graph_id, monkeypatch)
    assert await tabs.live_in("ann") == 0
    assert await switches_on_list(tabs, "cy") == await switches_on_list(tabs, "dee") == {}
    await switch_on_list(tabs, "cy", graph_id, True)
    assert tabs.pushed_to("ann") == {"live_version"} and tabs.pushed_to("dee") == {"live"}
    assert (await tabs.live_in("ann"), await switches_on_list(tabs, "dee")) == (7, {graph_id: 7})
    await switch_on_list(tabs, "cy", graph_id, False)
    assert (await tabs.live_in("ann"), await switches_on_list(tabs, "dee")) == (0, {})


async def test_a_tab_back_on_the_list_from_the_graphs_editor_switches_it_for_the_room(graph_id, monkeypatch):
    """The tab is still linked to the room it left, so each of its events holds the room's lock: changing the room
    from inside the event waited for ever."""
    tabs = LinkedTabs(graph_id, monkeypatch)
    assert await tabs.live_in("ann") == await tabs.live_in("bob") == 0
    await switch_on_list(tabs, "bob", graph_id, True)
    assert (await tabs.live_in("ann"), await tabs.live_in("bob")) == (7, 7)


async def test_a_switch_on_the_graph_list_opens_no_room_for_a_graph_nobody_has_open(graph_id, monkeypatch):
    tabs = LinkedTabs(graph_id, monkeypatch)
    await switch_on_list(tabs, "cy", graph_id, True)  # (Cy's list was not loaded here: not in the list's room)
    assert tabs.pushed == []
    root = await tabs.manager.get_state(BaseStateToken(ident=room_token(graph_id), cls=GraphRoom))
    room = await root.get_state(GraphRoom)
    assert room._doc is None and room.live_version == 0  # the first tab to open the graph reads it


def refuse(self, graph_id: str) -> int:
    raise trigger_state.ActivationRefused("add a Webhook or Schedule trigger")


def test_list_room_tokens_have_no_underscore_and_cannot_be_made_from_the_workspace_id_alone(monkeypatch):
    """A page hydrated under a room's token reads its vars without an access check: the token carries a digest."""
    from cryptography.fernet import Fernet

    tokens = []
    for _ in range(2):
        monkeypatch.setenv("NODEFLOW_SECRET_KEY", Fernet.generate_key().decode())
        live_rooms.list_room_token.cache_clear()
        tokens.append(live_rooms.list_room_token("ws_1"))
    live_rooms.list_room_token.cache_clear()
    assert all(t.startswith("graphlistws-1-") and "_" not in t for t in tokens)
    assert tokens[0] != tokens[1]  # another install's key, another token


async def test_a_list_tabs_typing_in_the_search_sends_no_router_with_it(graph_id, monkeypatch):
    """Linking to the list room marked the tab's router dirty at each event: every keystroke's delta resent the
    request headers (as GraphRoom keeps from doing, `without_router_resent`)."""
    tabs = LinkedTabs(graph_id, monkeypatch)
    await switches_on_list(tabs, "cy")
    async with tabs.state_of("cy", GraphListState) as page:
        page.search = "Ord"
        delta = await page._get_root_state()._get_resolved_delta()
    assert [name for names in delta.values() for name in names if name.startswith("rx_router")] == []
