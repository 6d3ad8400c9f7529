"""A page opened without a session goes on to that page after sign-in or setup (`next`), and only ever to a page of
this site: `next` comes from a link anyone can write, so another host in it would be an open redirect."""

from __future__ import annotations

import json
from types import SimpleNamespace
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest

import nodeflow_app.nodeflow_app  # noqa: F401 - registers every state class of the app
from nodeflow_app import routes
from nodeflow_app.state import access, auth_state
from nodeflow_app.state.auth_state import AuthState
from nodeflow_app.store.accounts import AccountStore
from reflex.istate.data import RouterData
from reflex.state import State

PASSWORD = "correct horse"
ORIGIN = "http://127.0.0.1:3000"
ELSEWHERE = ["https://evil.example/x", "//evil.example/x", "///evil.example/x", "/\\evil.example", "\\\\evil.example",
             "/\t/evil.example/x", "javascript:alert(1)", "http://127.0.0.1:3000@evil.example/", "evil.example",
             " /x", "/ok\n", ""]


@pytest.fixture
def store(page_accounts) -> AccountStore:
    return page_accounts(auth_state)


def _tab(route: str, path: str, session: str = "") -> AuthState:
    """AuthState of a tab on `path` (which matched `route`), with the session cookie `session`."""
    root = State(_reflex_internal_init=True)
    root.router = RouterData.from_router_data({"pathname": route, "asPath": path, "query": {}, "headers": {
        "origin": ORIGIN, "host": "127.0.0.1:3000", "cookie": f"nf_session={session}"}})
    return root.get_substate(AuthState._get_substate_path())


def _args(spec) -> dict:
    return {name._js_expr: value._var_value for name, value in spec.args}


def _redirect(spec) -> str:
    """Where an `rx.redirect` goes; it replaces the page in the history (Back does not bounce)."""
    args = _args(spec)
    assert spec.handler.fn.__qualname__ == "_redirect" and args["replace"] is True
    return args["path"]


def _session_start_next(spec) -> str:
    """The page the sign-in route goes on to after setting the cookie (the `next` of /api/session/start)."""
    url = json.loads(_args(spec)["javascript_code"].partition("window.location.replace(")[2].removesuffix(")"))
    assert urlsplit(url).path == routes.SESSION_START
    return parse_qs(urlsplit(url).query)["next"][0]


@pytest.mark.parametrize("value", ["/", "/graph/abc", "/graph/abc?run=r1", "/workspace", "/x//y"])
def test_a_path_of_this_site_is_a_page_to_go_on_to(value):
    assert routes.local_page(value) == value


@pytest.mark.parametrize("value", ELSEWHERE)
def test_anything_that_can_lead_to_another_host_is_not(value):
    assert routes.local_page(value) == ""
    assert routes.with_next(routes.SIGN_IN, value) == routes.SIGN_IN


def test_the_page_is_named_without_the_front_ends_prefix(monkeypatch):
    """Under REFLEX_FRONTEND_PATH the browser's URL has the prefix; the app's routes (and rx.redirect) do not."""
    assert access.frontend_prefix() == ""
    monkeypatch.setattr(access, "get_config", lambda: SimpleNamespace(frontend_path="/app/"))
    assert access.frontend_prefix() == "/app"
    assert routes.page_path(_tab(routes.EDITOR, "/graph/abc?run=r1").router) == "/graph/abc?run=r1"
    for path, page in [("/app/graph/abc?run=r1", "/graph/abc?run=r1"), ("/app", "/"), ("/apple", "/apple")]:
        assert routes.page_path(_tab(routes.EDITOR, path).router, "/app") == page


def test_a_signed_out_visitor_of_a_graph_signs_in_with_the_graph_as_next(store):
    store.create_user("Ada", "ada@example.org", PASSWORD)
    target = _redirect(AuthState.event_handlers["guard"].fn(_tab(routes.EDITOR, "/graph/abc?run=r1")))
    assert target == "/signin?next=%2Fgraph%2Fabc%3Frun%3Dr1"
    # The graph list is where sign-in goes anyway: no `next` to carry.
    assert _redirect(AuthState.event_handlers["guard"].fn(_tab(routes.GRAPHS, "/"))) == routes.SIGN_IN


def test_the_first_visit_sets_up_the_owner_with_the_page_as_next(store):
    target = _redirect(AuthState.event_handlers["guard"].fn(_tab(routes.EDITOR, "/graph/abc")))
    assert target == "/setup?next=%2Fgraph%2Fabc"
    sign_in = _tab(routes.SIGN_IN, "/signin?next=%2Fgraph%2Fabc")  # no account yet: set up, keeping `next`
    assert _redirect(AuthState.event_handlers["load_public"].fn(sign_in)) == "/setup?next=%2Fgraph%2Fabc"


async def test_signing_in_goes_on_to_next(store):
    store.create_user("Ada", "ada@example.org", PASSWORD)
    tab = _tab(routes.SIGN_IN, "/signin?next=%2Fgraph%2Fabc%3Frun%3Dr1")
    answer = await AuthState.event_handlers["sign_in"].fn(tab, {"email": "ada@example.org", "password": PASSWORD})
    assert _session_start_next(answer) == f"{ORIGIN}/graph/abc?run=r1"


async def test_setting_up_the_owner_goes_on_to_next(store):
    tab = _tab(routes.SETUP, "/setup?next=%2Fgraph%2Fabc")
    answer = await AuthState.event_handlers["create_owner"].fn(tab, {
        "name": "Ada", "email": "ada@example.org", "password": PASSWORD, "confirm": PASSWORD})
    assert _session_start_next(answer) == f"{ORIGIN}/graph/abc"


@pytest.mark.parametrize("elsewhere", ELSEWHERE)
async def test_a_next_elsewhere_signs_in_to_the_graph_list(store, elsewhere):
    store.create_user("Ada", "ada@example.org", PASSWORD)
    tab = _tab(routes.SIGN_IN, f"/signin?{urlencode({'next': elsewhere})}")
    answer = await AuthState.event_handlers["sign_in"].fn(tab, {"email": "ada@example.org", "password": PASSWORD})
    assert _session_start_next(answer) == f"{ORIGIN}/"
    # Someone signed in already is sent on from the sign-in page by the page itself: to the graph list too.
    token, _ = store.sign_in("ada@example.org", PASSWORD)
    signed_in = _tab(routes.SIGN_IN, f"/signin?{urlencode({'next': elsewhere})}", token)
    assert _redirect(AuthState.event_handlers["load_public"].fn(signed_in)) == routes.GRAPHS


def test_someone_signed_in_on_the_sign_in_page_goes_on_to_next(store):
    store.create_user("Ada", "ada@example.org", PASSWORD)
    token, _ = store.sign_in("ada@example.org", PASSWORD)
    tab = _tab(routes.SIGN_IN, "/signin?next=%2Fgraph%2Fabc", token)
    assert _redirect(AuthState.event_handlers["load_public"].fn(tab)) == "/graph/abc"
