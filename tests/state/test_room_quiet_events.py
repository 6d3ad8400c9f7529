"""An event of a tab linked to a room that leaves the room as it is sends the other tabs nothing of the room.

Reflex patches the room into the state of each tab linked to it for every event of that tab, and after the event
sends the room's changed vars to every other linked tab. A room the event did not change is not cleaned when the
event ends, so what it records as changed is the change of an earlier event: each such event (a selection, a
panel opened, a run's message) would send the room's last patch, cursors or people again to every tab of the
graph.
"""

from __future__ import annotations

from nodeflow_app.state.editor_state import EditorState
from nodeflow_app.state.graph_room import GraphRoom, modify_room
from nodeflow_app.state.live_rooms import GraphListRoom, list_room_token
from tests.state.rooms import LinkedTabs, everyone_may_view

GRAPH = "g-quiet"


async def test_an_event_that_leaves_the_graph_room_as_it_is_pushes_nothing_to_the_other_tabs(monkeypatch):
    everyone_may_view(monkeypatch)
    tabs = LinkedTabs(GRAPH, monkeypatch)
    for tab in ("ann", "bob", "cy"):
        async with tabs.room_of(tab):
            pass
    async with tabs.room_of("ann") as room:
        room._publish([{"op": "rename", "name": "Orders v2"}], "me-ann", "u-ann", "Ann")
    assert "patch" in tabs.pushed_to("bob") and "patch" in tabs.pushed_to("cy")

    tabs.pushed.clear()
    async with tabs.state_of("bob", EditorState) as editor:  # Bob's tab reads the room and changes itself only
        assert (await editor.get_state(GraphRoom)).patch["seq"] == 1
        editor.name_field_rev += 1
    async with tabs.room_of("cy") as room:  # Cy's tab reads the room only
        assert room.patch["seq"] == 1
    assert tabs.pushed_to("ann") == tabs.pushed_to("bob") == tabs.pushed_to("cy") == set()
    # Not even an empty update: Reflex took every other tab's state (and lock; with Redis, a round trip each) to
    # send it nothing, for every event of every tab in the room, a cursor's stop as much as a panel opened.
    assert tabs.pushed == []

    async with tabs.room_of("bob") as room:  # a change still reaches the others
        room._publish([{"op": "rename", "name": "Orders v3"}], "me-bob", "u-bob", "Bob")
    assert "patch" in tabs.pushed_to("ann") and "patch" in tabs.pushed_to("cy")


async def test_an_event_that_leaves_the_graph_list_room_as_it_is_pushes_nothing_to_the_other_tabs(monkeypatch):
    everyone_may_view(monkeypatch)
    tabs = LinkedTabs(GRAPH, monkeypatch)
    for tab in ("ann", "bob"):
        async with tabs.state_of(tab, GraphListRoom) as room:
            await room._link_to(list_room_token("ws-1"))
    async with tabs.state_of("ann", GraphListRoom) as room:
        room._listed("ws-1", [GRAPH], {})
        room._show_live(GRAPH, 7)
    assert "live" in tabs.pushed_to("bob")

    tabs.pushed.clear()
    async with tabs.state_of("bob", GraphListRoom) as room:
        assert room.live == {GRAPH: 7}
    async with tabs.state_of("ann", GraphListRoom) as room:
        assert room.live == {GRAPH: 7}
    assert tabs.pushed_to("ann") == tabs.pushed_to("bob") == set()
    assert tabs.pushed == []  # not even an empty update


async def test_a_change_of_a_room_outside_any_tab_that_changes_nothing_pushes_nothing(monkeypatch):
    """A room changed by its own token (`modify_room`: an activation shown, a save outside a tab's event) to the
    value it had already."""
    everyone_may_view(monkeypatch)
    tabs = LinkedTabs(GRAPH, monkeypatch)
    for tab in ("ann", "bob"):
        async with tabs.state_of(tab, GraphListRoom) as room:
            await room._link_to(list_room_token("ws-1"))

    async def show_7(room: GraphListRoom) -> None:
        room._show_live(GRAPH, 7)

    await modify_room(tabs.manager, GraphListRoom, list_room_token("ws-1"), show_7)
    assert "live" in tabs.pushed_to("ann") and "live" in tabs.pushed_to("bob")
    tabs.pushed.clear()
    await modify_room(tabs.manager, GraphListRoom, list_room_token("ws-1"), show_7)
    assert tabs.pushed_to("ann") == tabs.pushed_to("bob") == set()
    assert tabs.pushed == []  # not even an empty update
