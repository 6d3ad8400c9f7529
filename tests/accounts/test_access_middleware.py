"""Every event of every state class sent through the real AccessMiddleware, as a real account would send it.

test_access.py checks each handler's declaration against the rule; this one sends each handler's event through
the one check itself (session cookie -> user -> role in the workspace of the page's graph, or of the workspace the
browser names) with a database holding an owner, an editor, a viewer and an outsider, and asserts who got through.
A refused event never reaches its handler, is logged with who sent it, and answers with a toast.
"""

from __future__ import annotations

import asyncio
import logging

import pytest

import nodeflow_app.nodeflow_app  # noqa: F401 - registers every state class of the app
import nodeflow_app.store.graphs as graphs_module
from nodeflow_app import routes
from nodeflow_app.accounts.roles import LEAST_ROLE
from nodeflow_app.state import access
from nodeflow_app.state.auth_state import AuthState
from nodeflow_app.store.accounts import AccountStore
from nodeflow_app.store.graphs import GraphStore
from reflex.istate.data import RouterData
from reflex.state import State
from reflex_base.event import Event

from .test_access import HANDLERS
from .test_event_arguments import sample_payload

PASSWORD = "a long enough password"
PEOPLE = ("owner", "editor", "viewer", "outsider")


@pytest.fixture(scope="module")
def team(tmp_path_factory):
    """One team workspace with a graph; a session token per person (the owner is also the instance admin)."""
    url = f"sqlite:///{tmp_path_factory.mktemp('access') / 'nodeflow.db'}"
    accounts, graphs = AccountStore(url), GraphStore(url)
    users = {who: accounts.create_user(who.title(), f"{who}@example.org", PASSWORD) for who in PEOPLE}
    workspace = accounts.create_workspace(users["owner"].id, "Team")
    for who in ("editor", "viewer"):
        link, _ = accounts.invite(workspace.id, who, users["owner"].id)
        accounts.accept(link, users[who].id)
    graph = graphs.create("Team graph", workspace_id=workspace.id)
    tokens = {who: accounts.sign_in(f"{who}@example.org", PASSWORD)[0] for who in PEOPLE}
    yield accounts, graphs, workspace.id, graph.id, tokens
    accounts.engine.dispose()
    graphs.engine.dispose()


@pytest.fixture(autouse=True)
def stores(team, monkeypatch):
    accounts, graphs, *_ = team
    monkeypatch.setattr(access, "account_store", lambda: accounts)
    monkeypatch.setattr(graphs_module, "graph_store", lambda: graphs)
    access._sessions.clear()
    access._graph_workspaces.clear()


def _page(token: str, workspace_id: str, graph_id: str | None) -> State:
    """A browser tab's state: its session cookie, the workspace its local storage names, the page it is on."""
    state = State(_reflex_internal_init=True)
    route, path = (routes.EDITOR, f"/graph/{graph_id}") if graph_id else (routes.WORKSPACE, "/workspace")
    state.router = RouterData.from_router_data({"pathname": route, "asPath": path, "query": {}, "headers": {
        "origin": "http://127.0.0.1:3000", "cookie": f"nf_workspace=x; nf_session={token}; other=1"}})
    auth = state.get_substate(AuthState._get_substate_path())
    auth.workspace_id = workspace_id
    return state


def _event(cls, name: str) -> Event:
    """The event a page sends for the handler, with arguments its annotations allow (others are refused)."""
    return Event(name=f"{cls.get_full_name()}.{name}", payload=sample_payload(cls.event_handlers[name].fn))


def _gets_through(state: State, cls, name: str) -> bool:
    event = _event(cls, name)
    answer = asyncio.run(access.AccessMiddleware().preprocess(None, state, event))
    return answer is None


def _may(who: str, need) -> bool:
    """The spec's table (SPEC section 10) for a member of the team, or an outsider, or someone signed out."""
    if need is None:
        return False
    if need == "public":
        return True
    if who == "anonymous":
        return False
    if need == "admin":
        return who == "owner"  # the first account is the instance admin
    if need == "signed_in":
        return True
    role = {"owner": "owner", "editor": "editor", "viewer": "viewer"}.get(who)
    return role is not None and ("viewer", "editor", "owner").index(role) >= ("viewer", "editor", "owner").index(
        LEAST_ROLE[need])


@pytest.mark.parametrize("on_graph_page", [True, False], ids=["graph-page", "workspace-page"])
@pytest.mark.parametrize("who", [*PEOPLE, "anonymous"])
def test_every_event_gets_through_only_for_whom_the_spec_allows(team, who, on_graph_page, caplog):
    _, _, workspace_id, graph_id, tokens = team
    # Off the graph page the event acts in the workspace the browser names: an outsider naming the team's
    # workspace (a forged local storage value) is still no member of it.
    state = _page(tokens.get(who, "not-a-session"), workspace_id, graph_id if on_graph_page else None)
    wrong = []
    with caplog.at_level(logging.WARNING, logger="nodeflow.access"):
        for cls, name, handler in HANDLERS:
            need = access.declared(handler.fn)
            if _gets_through(state, cls, name) != _may(who, need):
                wrong.append(f"{cls.__name__}.{name} ({need})")
    assert wrong == [], f"{who}: the one check disagrees with the spec for {wrong}"
    refused = [r.getMessage() for r in caplog.records if r.getMessage().startswith("refused ")]
    expected = sum(not _may(who, access.declared(h.fn)) for _, _, h in HANDLERS)
    assert len(refused) == expected
    email = "anonymous" if who == "anonymous" else f"{who}@example.org"
    assert all(f" for {email}: " in message for message in refused)


def test_a_refused_outsider_is_told_not_found_and_a_viewer_not_allowed(team):
    _, _, workspace_id, graph_id, tokens = team
    load = next((cls, name) for cls, name, h in HANDLERS if name == "load_graph")
    rename = next((cls, name) for cls, name, h in HANDLERS if name == "rename_graph")
    outsider = asyncio.run(access.AccessMiddleware().preprocess(
        None, _page(tokens["outsider"], workspace_id, graph_id), Event(name=f"{load[0].get_full_name()}.{load[1]}")))
    viewer = asyncio.run(access.AccessMiddleware().preprocess(
        None, _page(tokens["viewer"], workspace_id, graph_id),
        Event(name=f"{rename[0].get_full_name()}.{rename[1]}", payload={"name": "x"})))
    assert "Not found: it belongs to a workspace you are not in." in str(outsider.events)
    assert "Not allowed: a viewer cannot do this (edit needs more)." in str(viewer.events)


def test_a_graph_pages_loaders_refuse_an_outsider_quietly_the_page_says_not_found_once(team):
    """An outsider opening the team's graph saw "Graph not found" and a toast per part of the page (each loader
    refused). The loaders are still refused, without a toast; a click of theirs still gets one."""
    from nodeflow_app.nodeflow_app import app
    from nodeflow_app.state.editor_state import EditorState

    _, _, workspace_id, graph_id, tokens = team
    for route in (routes.EDITOR, routes.CHAT):
        state = _page(tokens["outsider"], workspace_id, graph_id)
        path = routes.chat_url(graph_id) if route == routes.CHAT else routes.editor_url(graph_id)
        state.router = RouterData.from_router_data({"pathname": route, "asPath": path, "query": {}, "headers": {
            "origin": "http://127.0.0.1:3000", "cookie": f"nf_session={tokens['outsider']}"}})
        loaders = [handler for handler in app._load_events[route.strip("/")]
                   if access.declared(handler.fn) not in ("public", "signed_in")]
        assert loaders, route
        for handler in loaders:
            name = handler.fn.__name__
            cls = next(c for c, n, h in HANDLERS if h.fn is handler.fn)
            answer = asyncio.run(access.AccessMiddleware().preprocess(app, state, _event(cls, name)))
            assert answer is not None, f"{cls.__name__}.{name} ran for an outsider"
            assert answer.events == [], f"{cls.__name__}.{name}: {answer.events}"
    click = asyncio.run(access.AccessMiddleware().preprocess(app, _page(tokens["outsider"], workspace_id, graph_id),
                                                             _event(EditorState, "rename_graph")))
    assert "Not found: it belongs to a workspace you are not in." in str(click.events)


# Events a page never sends, forged over the websocket: each crashed its handler (a stack trace and an error toast).
FORGED = [("ChatState", "send", {"form": "hello"}, "form must be dict[str, Any], not str"),
          ("ChatState", "show_branch", {"payload": "m1"}, "payload must be dict[str, Any], not str"),
          ("ChatState", "select_chat", {"chat_id": {"id": "c1"}}, "chat_id must be str, not dict"),
          ("RunHistoryState", "edit_pin", {"node_id": {"id": "n1"}}, "node_id must be str, not dict"),
          ("RunHistoryState", "select_run", {"run_id": None}, "run_id must be str, not None"),
          ("RunHistoryState", "run_to_here", {"payload": ["n1"]}, "payload must be dict[str, Any], not list"),
          ("HistoryState", "restore", {"version": 1.5}, "version must be int | str, not float"),
          ("ChatState", "send", {}, "missing argument: form"),
          ("ChatState", "send", {"form": {}, "as_user": "admin"}, "unknown argument: as_user")]


@pytest.mark.parametrize("state_name, name, payload, problem", FORGED, ids=[f"{s}.{n}-{p}" for s, n, _, p in FORGED])
def test_a_forged_event_whose_arguments_do_not_fit_its_handler_is_refused(team, caplog, state_name, name, payload,
                                                                        problem):
    _, _, workspace_id, graph_id, tokens = team
    cls = next(c for c, n, _ in HANDLERS if (c.__name__, n) == (state_name, name))
    event = Event(name=f"{cls.get_full_name()}.{name}", payload=payload)
    with caplog.at_level(logging.WARNING, logger="nodeflow.access"):
        answer = asyncio.run(access.AccessMiddleware().preprocess(None, _page(tokens["editor"], workspace_id, graph_id),
                                                                  event))
    assert answer is not None, "the handler would run"
    assert f"Refused {state_name}.{name}: {problem}." in str(answer.events)
    assert f"for editor@example.org: {state_name}.{name}: {problem}" in caplog.text


def test_a_forged_message_never_reaches_the_chat(team):
    """Through Reflex's path: the middleware first, then the handler with the payload as its arguments."""
    from nodeflow_app.state.chat_state import ChatState

    _, _, workspace_id, graph_id, tokens = team
    state = _page(tokens["editor"], workspace_id, graph_id)
    chat = state.get_substate(ChatState._get_substate_path())

    async def deliver(payload: dict) -> object:
        answer = await access.AccessMiddleware().preprocess(
            None, state, Event(name=f"{ChatState.get_full_name()}.send", payload=payload))
        if answer is None:
            return await ChatState.event_handlers["send"].fn(chat, **payload)  # a str here: AttributeError
        return answer

    refused = asyncio.run(deliver({"form": "hello"}))
    assert "Refused ChatState.send: form must be dict[str, Any], not str." in str(refused.events)
    assert asyncio.run(deliver({"form": {"message": " "}})) is None  # what the page sends: through (nothing to send)


def test_a_signed_out_tab_is_sent_to_the_sign_in_page_instead_of_a_toast(team):
    _, _, workspace_id, graph_id, _ = team
    load = next((cls, name) for cls, name, h in HANDLERS if name == "load_graph")
    answer = asyncio.run(access.AccessMiddleware().preprocess(
        None, _page("expired-session", workspace_id, graph_id), Event(name=f"{load[0].get_full_name()}.{load[1]}")))
    assert "toast" not in str(answer.events).lower()
    (redirect,) = answer.events  # back to the graph after signing in
    assert redirect.name == "_redirect" and redirect.payload["path"] == f"/signin?next=%2Fgraph%2F{graph_id}"


def test_a_signed_out_session_gets_nothing_through(team):
    accounts, _, workspace_id, graph_id, _ = team
    token, _ = accounts.sign_in("editor@example.org", PASSWORD)
    state = _page(token, workspace_id, graph_id)
    load = next((cls, name) for cls, name, h in HANDLERS if name == "load_graph")
    assert _gets_through(state, *load)
    accounts.sign_out(token)
    access.forget_token(token)
    assert not _gets_through(state, *load)


def test_an_event_sent_before_the_guard_chose_a_workspace_acts_in_the_callers_first(team):
    """A click that reaches the server before the page's on_load picked the workspace (a fresh browser's
    local storage is empty) acts in the caller's personal workspace, as the guard would pick, not "not found"."""
    accounts, _, _, _, tokens = team
    picker = next((cls, name) for cls, name, h in HANDLERS if name == "open_picker")
    state = _page(tokens["viewer"], "", None)

    async def send() -> tuple[object, access.Access]:
        answer = await access.AccessMiddleware().preprocess(
            None, state, _event(*picker))
        return answer, access.current()  # what the handler would see

    answer, seen = asyncio.run(send())
    assert answer is None
    viewer = accounts.user_for_session(tokens["viewer"])
    assert seen.workspace_id == accounts.workspaces(viewer.id)[0].id
    assert seen.role == "owner"  # of their personal workspace, not the team's viewer


def _own_graph(team, who: str) -> tuple[str, str]:
    """(personal workspace, a graph in it) of `who`: somewhere they are the owner."""
    accounts, graphs, team_workspace, _, tokens = team
    user = accounts.user_for_session(tokens[who])
    personal = next(w.id for w in accounts.workspaces(user.id) if w.id != team_workspace)
    return personal, graphs.create(f"{who}'s own graph", workspace_id=personal).id


def test_a_tab_keeping_a_graph_acts_on_it_only_in_the_workspace_the_check_resolved(team):
    """The page URL that decides the check comes from the browser with every event; the graph a state keeps does
    not. A viewer of the team's graph who sends its edits with the URL of a graph they own is refused, unless the
    event is a page's loader (it takes the URL's graph)."""
    from nodeflow_app.nodeflow_app import app
    from nodeflow_app.state.editor_state import EditorState
    from nodeflow_app.state.history_state import HistoryState

    _, _, _, team_graph, tokens = team
    _, own_graph = _own_graph(team, "viewer")
    state = _page(tokens["viewer"], "", own_graph)
    editor = state.get_substate(EditorState._get_substate_path())

    def through(cls, name: str) -> bool:
        return asyncio.run(access.AccessMiddleware().preprocess(app, state, _event(cls, name))) is None

    editor._graph_id = team_graph  # the tab opened the team's graph before
    assert not through(EditorState, "save") and not through(HistoryState, "restore")
    assert through(EditorState, "load_graph")  # the page's loader: it opens the URL's graph instead
    editor._graph_id = own_graph
    assert through(EditorState, "save") and through(HistoryState, "restore")


def test_a_websocket_opened_by_a_sibling_hosts_page_has_no_session(team):
    """SameSite=Strict keeps other sites' pages from sending the cookie, not another host of the same site."""
    _, _, workspace_id, graph_id, tokens = team
    load = next((cls, name) for cls, name, h in HANDLERS if name == "load_graph")
    ours = _page(tokens["owner"], workspace_id, graph_id)
    assert _gets_through(ours, *load)
    sibling = _page(tokens["owner"], workspace_id, graph_id)
    sibling.router = RouterData.from_router_data({"pathname": routes.EDITOR, "asPath": f"/graph/{graph_id}",
                                                  "query": {}, "headers": {
        "origin": "https://evil.example.org", "host": "nodeflow.example.org", "sec-fetch-site": "same-site",
        "cookie": f"nf_session={tokens['owner']}"}})
    assert not _gets_through(sibling, *load)


def test_over_https_a_websocket_counts_the_host_only_cookie_only(team):
    _, _, workspace_id, graph_id, tokens = team
    load = next((cls, name) for cls, name, h in HANDLERS if name == "load_graph")

    def page(cookie: str) -> State:
        state = _page(tokens["owner"], workspace_id, graph_id)
        state.router = RouterData.from_router_data({"pathname": routes.EDITOR, "asPath": f"/graph/{graph_id}",
                                                    "query": {}, "headers": {
            "origin": "https://nodeflow.example.org", "host": "nodeflow.example.org", "cookie": cookie}})
        return state

    assert _gets_through(page(f"__Host-nf_session={tokens['owner']}"), *load)
    assert not _gets_through(page(f"nf_session={tokens['owner']}"), *load)  # a sibling host could have planted it


def test_a_background_handler_acts_only_on_a_graph_of_the_workspace_its_check_allowed(team):
    """A background handler (a test run, a chat message, a save, an approval) reads what its state keeps after the
    check, once other events of the tab may have run: a page load of the team's graph in between must not let a
    check made on the viewer's own graph run, save or answer the team's."""
    from nodeflow_app.nodeflow_app import app
    from nodeflow_app.state.run_history_state import RunHistoryState

    _, _, _, team_graph, tokens = team
    _, own_graph = _own_graph(team, "viewer")
    state = _page(tokens["viewer"], "", own_graph)

    async def check_then_page_load() -> tuple[bool, bool, bool]:
        event = Event(name=f"{RunHistoryState.get_full_name()}.test_run", payload={"node_id": ""})
        assert await access.AccessMiddleware().preprocess(app, state, event) is None  # an owner of own_graph
        # ... the page load of the team's graph runs here; then the handler reads the kept graph:
        return access.still_checked(own_graph), access.still_checked(team_graph), access.still_checked("")

    assert asyncio.run(check_then_page_load()) == (True, False, False)
    assert not access.still_checked(own_graph)  # outside any checked event: nothing is allowed


def test_workspace_changes_land_in_the_workspace_the_check_resolved(team, monkeypatch):
    """A viewer whose browser names the team's workspace, on the page of a graph they own, passes the check as an
    owner there: an invitation they make then belongs to their own workspace, never to the team's."""
    from nodeflow_app.state import workspace_state
    from nodeflow_app.state.workspace_state import WorkspaceState

    accounts, _, team_workspace, _, tokens = team
    monkeypatch.setattr(workspace_state, "account_store", lambda: accounts)
    personal, own_graph = _own_graph(team, "viewer")
    state = _page(tokens["viewer"], team_workspace, own_graph)
    page = state.get_substate(WorkspaceState._get_substate_path())
    before = len(accounts.invitations(team_workspace))

    async def invite() -> None:
        event = _event(WorkspaceState, "invite")
        assert await access.AccessMiddleware().preprocess(None, state, event) is None  # owner of their own
        assert access.current().workspace_id == personal
        await WorkspaceState.invite.fn(page, {"role": "owner", "expiry": "1d"})

    asyncio.run(invite())
    assert len(accounts.invitations(team_workspace)) == before
    assert [i.role for i in accounts.invitations(personal)] == ["owner"]


def test_every_background_handler_that_acts_on_a_kept_graph_checks_it_again():
    """`still_checked` only protects where it is called: every background handler of a state that keeps a graph
    (and the trigger panel, which reads the page's) calls it, itself or in a helper of its class it calls."""
    import inspect
    import re

    from nodeflow_app.state.trigger_state import TriggerState

    holders = {*access._GRAPH_HOLDERS, TriggerState}
    unchecked = []
    for cls, name, handler in HANDLERS:
        if cls not in holders or not handler.is_background:
            continue
        source = inspect.getsource(handler.fn)
        helpers = [getattr(cls, h) for h in re.findall(r"self\.(_\w+)\(", source) if hasattr(cls, h)]
        if "still_checked(" not in source + "".join(inspect.getsource(h) for h in helpers):
            unchecked.append(f"{cls.__name__}.{name}")
    assert unchecked == []


def test_the_check_reads_the_database_off_the_event_loop(team, monkeypatch):
    """The role is read for every event (each cursor move too): with a slow database, every run waited."""
    import time

    from tests.nodes.loop_ticks import loop_ticks

    accounts, _, workspace_id, graph_id, tokens = team
    role = accounts.role
    monkeypatch.setattr(accounts, "role", lambda *args: time.sleep(0.3) or role(*args))
    load = next((cls, name) for cls, name, h in HANDLERS if name == "load_graph")
    state = _page(tokens["editor"], workspace_id, graph_id)

    async def send() -> tuple[object, access.Access, list[int]]:
        async with loop_ticks() as ticks:
            answer = await access.AccessMiddleware().preprocess(
                None, state, _event(*load))
        return answer, access.current(), ticks

    answer, seen, ticks = asyncio.run(send())
    assert answer is None and (seen.workspace_id, seen.role) == (workspace_id, "editor")
    assert ticks[0] >= 10, ticks


def test_the_check_does_not_wait_behind_runs_that_hold_the_default_thread_pool(team):
    """Run steps hold `asyncio.to_thread` workers for seconds (loaders, chunking, indexing): an event's check
    waiting for one held its tab, and its graph's room, as long."""
    import os
    import time

    _, _, workspace_id, graph_id, tokens = team
    load = next((cls, name) for cls, name, h in HANDLERS if name == "load_graph")
    state = _page(tokens["editor"], workspace_id, graph_id)

    async def check_while_runs_hold_the_pool() -> float:
        busy = [asyncio.create_task(asyncio.to_thread(time.sleep, 1.5)) for _ in range(min(32, os.cpu_count() + 4))]
        await asyncio.sleep(0.05)
        started = time.perf_counter()
        answer = await access.AccessMiddleware().preprocess(
            None, state, _event(*load))
        took = time.perf_counter() - started
        await asyncio.gather(*busy)
        assert answer is None
        return took

    assert asyncio.run(check_while_runs_hold_the_pool()) < 0.7


def test_a_session_forgotten_while_a_check_reads_it_stays_forgotten(monkeypatch):
    """A sign-out forgets the session at once in this process; another tab's check that had read it just before,
    in a page thread, stored it again for SESSION_CACHE_S."""
    import time

    sessions = {"tok": "Ann"}

    def slow_lookup(token):
        found = sessions.get(token)  # read before the sign-out commits
        time.sleep(0.2)
        return found

    monkeypatch.setattr(access, "_sessions", access.Recent(slow_lookup, keep_none=True))

    async def sign_out_during_a_check():
        check = asyncio.create_task(asyncio.to_thread(access.user_for_token, "tok"))
        await asyncio.sleep(0.05)
        sessions.pop("tok")  # the sign-out, then forget_token, on the loop
        access.forget_token("tok")
        assert await check == "Ann"  # that check began before: it may pass
        return access.user_for_token("tok")

    assert asyncio.run(sign_out_during_a_check()) is None


@pytest.mark.parametrize("dialog", ["TransferState", "TemplateSaveState"])
def test_a_dialog_opens_for_a_graph_of_another_workspace_than_the_one_it_was_last_opened_for(team, dialog):
    """Copy / Move to workspace and Save as template keep the graph they were opened for; opening them again, after
    a switch of workspace or a move, was refused as "not found" (checked against the graph kept from before). Their
    `ask` chooses the graph afresh, and what acts on it (confirm, save) is still checked against it."""
    from nodeflow_app.nodeflow_app import app
    from nodeflow_app.state.template_state import TemplateSaveState
    from nodeflow_app.state.transfer_state import TransferState

    cls = {"TransferState": TransferState, "TemplateSaveState": TemplateSaveState}[dialog]
    _, _, team_workspace, team_graph, tokens = team
    personal, own_graph = _own_graph(team, "editor")
    state = _page(tokens["editor"], team_workspace, None)
    state.get_substate(cls._get_substate_path())._graph_id = team_graph  # opened in the team's workspace before
    state.get_substate(AuthState._get_substate_path()).workspace_id = personal  # then switched to their own

    def through(name: str) -> bool:
        return asyncio.run(access.AccessMiddleware().preprocess(app, state, _event(cls, name))) is None

    assert through("ask")
    acting = "confirm" if cls is TransferState else "save"
    assert not through(acting)  # the team's graph, kept, is not acted on from their own workspace
