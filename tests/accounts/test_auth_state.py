"""AuthState's view of the signed-in account (its name, workspaces and current role), read from the session cookie
the tab's websocket came with."""

from __future__ import annotations

import pytest
from sqlalchemy import delete, select

import nodeflow_app.nodeflow_app  # noqa: F401 - registers every state class of the app
from nodeflow_app.state import auth_state
from nodeflow_app.state.access import client_address
from nodeflow_app.state.auth_state import AuthState
from nodeflow_app.store.accounts import MAX_FAILED_SIGN_INS, AccountStore
from nodeflow_app.store.models import MembershipRow, SignInAttemptRow
from reflex.istate.data import RouterData
from reflex.state import State

PASSWORD = "correct horse"


@pytest.fixture
def store(page_accounts) -> AccountStore:
    return page_accounts(auth_state)


def _tab(session: str) -> AuthState:
    root = State(_reflex_internal_init=True)
    root.router = RouterData.from_router_data({"pathname": "/", "asPath": "/", "query": {}, "headers": {
        "origin": "http://127.0.0.1:3000", "host": "127.0.0.1:3000", "cookie": f"nf_session={session}"}})
    return root.get_substate(AuthState._get_substate_path())


def test_someone_in_no_workspace_is_signed_in_with_no_role(store):
    """Someone removed from their personal workspace before that was refused is in no workspace: loading any page
    failed (IndexError) instead of showing it with nothing they may do."""
    ada = store.create_user("Ada", "ada@example.org", PASSWORD)
    with store.engine.begin() as conn:
        conn.execute(delete(MembershipRow).where(MembershipRow.user_id == ada.id))
    tab = _tab(store.sign_in("ada@example.org", PASSWORD)[0])
    assert tab._load_account() is True
    assert (tab.user_email, tab.workspace_id, tab.role, tab.workspaces) == ("ada@example.org", "", "", [])


def test_the_current_workspace_is_the_one_kept_or_else_the_personal_one(store):
    ada = store.create_user("Ada", "ada@example.org", PASSWORD)
    team = store.create_workspace(ada.id, "Team")
    tab = _tab(store.sign_in("ada@example.org", PASSWORD)[0])
    assert tab._load_account() and (tab.workspace_name, tab.role) == ("Ada's workspace", "owner")
    tab.workspace_id = team.id
    assert tab._load_account() and (tab.workspace_id, tab.workspace_name) == (team.id, "Team")


async def test_setup_that_lost_the_race_for_the_owner_makes_no_account(store, monkeypatch):
    """Two tabs of a fresh install sent /setup at once: both passed the "no account yet" check, and the slower one
    became a second account, signed in. It is told, as after the check, that the install has an owner."""
    store.create_owner("Ada", "ada@example.org", PASSWORD)
    monkeypatch.setattr(store, "has_users", lambda: False)  # what the slower tab saw a moment ago
    tab = _tab("")
    form = {"name": "Bob", "email": "bob@example.org", "password": PASSWORD, "confirm": PASSWORD}
    assert await AuthState.event_handlers["create_owner"].fn(tab, form) is None
    assert tab.error == "This install has an owner already: sign in."
    assert [u.email for u in store.users()] == ["ada@example.org"]


def _tab_from(ip: str, forwarded_for: str = "") -> AuthState:
    root = State(_reflex_internal_init=True)
    headers = {"origin": "http://127.0.0.1:3000", "host": "127.0.0.1:3000"}
    root.router = RouterData.from_router_data({"pathname": "/signin", "asPath": "/signin", "query": {}, "ip": ip,
                                               "headers": {**headers, "x-forwarded-for": forwarded_for}})
    return root.get_substate(AuthState._get_substate_path())


async def test_sign_in_failures_count_against_the_address_of_the_tab(store):
    """The sign-in page's failures counted per email alone: a stranger could lock anyone out, and spray one password
    over every email. They count per email and address now, the address Reflex took from the connection (a
    forwarded-for header a client wrote itself is not it)."""
    store.create_owner("Ada", "ada@example.org", PASSWORD)
    stranger = _tab_from("203.0.113.66", forwarded_for="192.0.2.10")
    sign_in = AuthState.event_handlers["sign_in"].fn
    for _ in range(MAX_FAILED_SIGN_INS):
        await sign_in(stranger, {"email": "ada@example.org", "password": "guess"})
        assert stranger.error == "Wrong email or password."
    await sign_in(stranger, {"email": "ada@example.org", "password": PASSWORD})
    assert stranger.error.startswith("Too many failed sign-ins for ada@example.org from this address")
    with store.engine.connect() as conn:
        assert set(conn.execute(select(SignInAttemptRow.address)).scalars()) == {"203.0.113.66"}

    ada = _tab_from("192.0.2.10")
    assert await sign_in(ada, {"email": "ada@example.org", "password": PASSWORD}) is not None
    assert ada.error == ""


async def test_wrong_current_passwords_count_against_the_address_of_the_tab(store, monkeypatch):
    ada = store.create_owner("Ada", "ada@example.org", PASSWORD)
    tab = _tab_from("203.0.113.66")
    monkeypatch.setattr(AuthState, "_signed_in_user", lambda self: ada)
    await AuthState.event_handlers["change_password"].fn(
        tab, {"current": "a guess at it", "new": "new password 1", "confirm": "new password 1"})
    assert tab.error == "The current password is wrong."
    with store.engine.connect() as conn:
        assert conn.execute(select(SignInAttemptRow.address)).scalars().all() == ["203.0.113.66"]


@pytest.mark.parametrize("hops, counted", [(0, "203.0.113.66"), (1, "192.0.2.10")])
def test_a_forwarded_for_header_names_the_client_only_behind_trusted_proxies(monkeypatch, hops, counted):
    """`client_address` takes the address Reflex gives the connection: a client can write X-Forwarded-For itself,
    so it counts only with REFLEX_TRUSTED_PROXY_HOPS set (then the address the last trusted proxy saw)."""
    from reflex.app import EventNamespace
    from reflex.config import get_config

    monkeypatch.setattr(get_config(), "trusted_proxy_hops", hops)
    scope = {"client": ("203.0.113.66", 50000), "headers": [(b"x-forwarded-for", b"198.51.100.1, 192.0.2.10")]}
    router_data = EventNamespace._build_static_router_data(None, "sid", {"asgi.scope": scope})
    assert client_address(_tab_from(router_data["ip"])) == counted
