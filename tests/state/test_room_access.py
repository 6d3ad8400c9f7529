"""A graph's room reaches only the tabs of people who may still view its workspace (state/room_access.py).

Reflex pushes every change of a room to each tab linked to it, and checks nothing: a member the owner removed
kept receiving every co-edit of the graph open in their tab (node data, names, cursors) until they reloaded.

Tabs here are linked to the room through Reflex's memory state manager, as in the server, and each push is
delivered as Reflex's fan-out delivers it (`_do_update_other_tokens`: the tab's state, with its links patched in
and the room's changed vars marked, then the tab's delta), so what a browser would receive is what is checked.

    owner ──edits──▶ GraphRoom ──push──▶ editor (removed meanwhile)   nothing of the edit; "access ended"
                                  └──push──▶ viewer (still a member)  the edit
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, AsyncIterator

import pytest
from argon2 import PasswordHasher
from reflex.istate import shared
from reflex.istate.data import HeaderData, RouterData, SessionData
from reflex.istate.manager.memory import StateManagerMemory
from reflex.istate.manager.token import BaseStateToken
from reflex_base.event.context import EventContext

from nodeflow_app.editor.document import GraphDocument
from nodeflow_app.runtime.graph import Graph
from nodeflow_app.state import access, room_access, workspace_state
from nodeflow_app.state.editor_state import EditorState
from nodeflow_app.state.graph_list_state import GraphListState
from nodeflow_app.state.graph_room import GraphRoom, room_token
from nodeflow_app.state.live_rooms import GraphListRoom, list_room_token
from nodeflow_app.state.workspace_state import WorkspaceState
from nodeflow_app.store import accounts
from nodeflow_app.store.graphs import GraphStore

PASSWORD = "correct horse battery"


async def _no_events(token: str, *events: Any) -> None:
    pass


class Team:
    """A team workspace with a graph: its owner, an editor and a viewer, each signed in with a session of their own."""

    def __init__(self, tmp_path, monkeypatch):
        monkeypatch.setattr(accounts, "PASSWORD_HASHER", PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1))
        url = f"sqlite:///{tmp_path / 'nodeflow.db'}"
        self.store, self.graphs = accounts.AccountStore(url), GraphStore(url)
        for module in (access, room_access, workspace_state):
            monkeypatch.setattr(module, "account_store", lambda: self.store)
        monkeypatch.setattr(access, "_graph_workspaces", access.Recent(self.graphs.workspace_of, keep_none=False))
        access._sessions.clear(), room_access._roles.clear(), room_access._tokens.clear()
        self.users, self.sessions = {}, {}
        owner = self._person("owner")
        self.workspace = self.store.create_workspace(owner.id, "Team").id
        for who in ("editor", "viewer"):
            raw, _ = self.store.invite(self.workspace, who, owner.id, 3600)
            self.store.accept(raw, self._person(who).id)
        self.graph_id = self.graphs.create("Orders", workspace_id=self.workspace).id

    def _person(self, who: str) -> accounts.User:
        user = self.users[who] = self.store.create_user(who.title(), f"{who}@example.com", PASSWORD)
        self.sessions[who], _ = self.store.sign_in(user.email, PASSWORD)
        return user

    def close(self) -> None:
        self.store.engine.dispose(), self.graphs.engine.dispose()


class Tabs:
    """One browser tab per person of `team` (the tab's client token is the person's word), on one server."""

    def __init__(self, team: Team, monkeypatch):
        self.team, self.manager = team, StateManagerMemory()
        self.pending: list[tuple[set[str], dict[str, set[str]], type]] = []
        self.received: dict[str, list[dict[str, Any]]] = {}  # tab -> the deltas pushed to its browser
        monkeypatch.setattr(shared, "_do_update_other_tokens", self._push)

    def _push(self, affected_tokens: set[str], previous_dirty_vars: dict[str, set[str]], state_type: type) -> list:
        self.pending.append((set(affected_tokens), previous_dirty_vars, state_type))
        return []

    async def deliver(self) -> None:
        """Reflex's fan-out, after the event that changed the room let its locks go (app.modify_state per tab)."""
        pending, self.pending = self.pending, []
        for tokens, dirty, state_type in pending:
            for tab in sorted(tokens):
                with self._event_of(tab):
                    async with self.manager.modify_state_with_links(
                            BaseStateToken(ident=tab, cls=state_type), previous_dirty_vars=dirty) as root:
                        delta = await root._get_resolved_delta()
                        root._clean()
                self.received.setdefault(tab, []).append(delta)

    def values_to(self, tab: str, cls: type, var: str) -> list[Any]:
        """Each value of `cls.var` pushed to `tab`'s browser."""
        return [values[name] for delta in self.received.get(tab, []) for values in [delta.get(cls.get_full_name(), {})]
                for name in values if name == f"{var}_rx_state_"]

    def edits_to(self, tab: str) -> list[int]:
        """The seq of each co-edit (a room patch with ops) pushed to `tab`'s browser."""
        return [patch["seq"] for patch in self.values_to(tab, GraphRoom, "patch") if patch["ops"]]

    @contextlib.contextmanager
    def _event_of(self, tab: str):
        with EventContext(token=tab, state_manager=self.manager, enqueue_impl=_no_events):
            yield

    @contextlib.asynccontextmanager
    async def state_of(self, tab: str, cls: type) -> AsyncIterator[Any]:
        """`tab`'s state `cls` during one of its events; the tab's websocket carries its person's session cookie."""
        with self._event_of(tab):
            async with asyncio.timeout(10):
                async with self.manager.modify_state_with_links(BaseStateToken(ident=tab, cls=cls)) as root:
                    if root.rx_router_session.client_token != tab:  # the tab's first event (as Reflex does)
                        cookie = f"{access.SESSION_COOKIE}={self.team.sessions[tab]}"
                        root.router = RouterData(session=SessionData(client_token=tab),
                                                 headers=HeaderData.from_router_data({"headers": {"cookie": cookie}}))
                    yield await root.get_state(cls)
                    root._clean()
        await self.deliver()  # Reflex starts the fan-out as the event ends

    async def open_graph(self, tab: str) -> None:
        async with self.state_of(tab, GraphRoom) as room:
            room = await room._link_to(room_token(self.team.graph_id))
            if room._doc is None:  # the first tab opens the graph
                room._doc = GraphDocument.from_graph(Graph(id=self.team.graph_id, name="Orders"), history=False)
            (await room.get_state(EditorState))._graph_id = self.team.graph_id

    async def edit(self, tab: str) -> int:
        """`tab` renames the graph (a co-edit); the room's seq of the patch."""
        async with self.state_of(tab, GraphRoom) as room:
            room._publish([{"op": "rename", "name": "Orders v2"}], "me-" + tab, self.team.users[tab].id, tab)
            seq = room._seq
        return seq

    async def remove(self, who: str) -> None:
        """The owner removes `who` on the workspace page."""
        team = self.team
        caller = access._current.set(access.Access(team.users["owner"], team.workspace, "owner"))
        try:
            async with self.state_of("owner", WorkspaceState) as page:
                assert await WorkspaceState.remove_member.fn(page, team.users[who].id) is None
        finally:
            access._current.reset(caller)


@pytest.fixture
def tabs(tmp_path, monkeypatch):
    team = Team(tmp_path, monkeypatch)
    yield Tabs(team, monkeypatch)
    team.close()


async def test_a_removed_member_gets_no_more_co_edits_and_their_tab_says_access_ended(tabs):
    for tab in ("owner", "editor", "viewer"):
        await tabs.open_graph(tab)
    first = await tabs.edit("owner")
    assert set(tabs.edits_to("editor")) == set(tabs.edits_to("viewer")) == {first}

    await tabs.remove("editor")
    second = await tabs.edit("owner")
    assert set(tabs.edits_to("viewer")) == {first, second}  # a member keeps receiving
    assert set(tabs.edits_to("editor")) == {first}  # the removed member's browser got nothing of the edit
    assert tabs.values_to("editor", EditorState, "access_ended") == [True]  # their page says so
    async with tabs.state_of("editor", EditorState) as editor:
        assert editor.not_found == tabs.team.graph_id

    pushes = len(tabs.received["editor"])
    third = await tabs.edit("owner")  # the room forgot the tab: no push tries it again
    assert set(tabs.edits_to("viewer")) == {first, second, third}
    assert len(tabs.received["editor"]) == pushes
    async with tabs.state_of("owner", GraphRoom) as room:
        assert "editor" not in room._linked_from and "viewer" in room._linked_from


async def test_a_member_signed_out_in_another_tab_gets_no_more_co_edits(tabs):
    for tab in ("owner", "viewer"):
        await tabs.open_graph(tab)
    tabs.team.store.sign_out(tabs.team.sessions["viewer"])
    access.forget_token(tabs.team.sessions["viewer"])  # what AuthState.sign_out does
    await tabs.edit("owner")
    assert tabs.edits_to("viewer") == []


async def test_pushes_to_members_read_their_role_from_the_database_at_most_once_a_second(tabs, monkeypatch):
    reads = []
    role = tabs.team.store.role
    monkeypatch.setattr(tabs.team.store, "role", lambda *args: reads.append(args) or role(*args))
    for tab in ("owner", "editor", "viewer"):
        await tabs.open_graph(tab)
    reads.clear()
    for _ in range(5):
        await tabs.edit("owner")
    assert len(tabs.edits_to("viewer")) == 5
    assert len(reads) <= 3  # at most once per person (a second passing mid-test adds one)


async def test_pushes_do_not_read_the_tabs_cookie_header_again(tabs, monkeypatch):
    """The check read each tab's session out of its Cookie header on every push of the room: a co-edit (or a cursor
    move) to N tabs parsed N headers. A tab's headers stay as its websocket sent them: read once, kept."""
    parses = []
    parse = access.session_cookie
    monkeypatch.setattr(access, "session_cookie", lambda *args, **kwargs: parses.append(args) or parse(*args, **kwargs))
    for tab in ("owner", "editor", "viewer"):
        await tabs.open_graph(tab)
    assert 0 < len(parses) <= 3  # once per tab
    parses.clear()
    for _ in range(5):
        await tabs.edit("owner")
    assert len(tabs.edits_to("viewer")) == len(tabs.edits_to("editor")) == 5
    assert parses == []


async def test_a_removed_member_gets_no_more_of_the_workspaces_graph_list(tabs):
    team = tabs.team
    for tab in ("owner", "editor", "viewer"):
        async with tabs.state_of(tab, GraphListRoom) as room:
            room = await room._link_to(list_room_token(team.workspace))
            room._listed(team.workspace, [team.graph_id], {})
    await tabs.remove("editor")
    for version in (7, 8):  # the owner switches the graph on, then makes a newer version live
        async with tabs.state_of("owner", GraphListRoom) as room:
            room._show_live(team.graph_id, version)
        await tabs.deliver()
    assert [live for live in tabs.values_to("viewer", GraphListRoom, "live") if live] == [
        {team.graph_id: 7}, {team.graph_id: 8}]
    assert not any(tabs.values_to("editor", GraphListRoom, "live"))
    async with tabs.state_of("editor", GraphListState) as page:
        assert page.rows == []
