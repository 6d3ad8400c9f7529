"""AuthState's view of the signed-in account (its name, workspaces and current role), read from the session cookie
the tab's websocket came with."""

from __future__ import annotations

import pytest
from sqlalchemy import delete

import nodeflow_app.nodeflow_app  # noqa: F401 - registers every state class of the app
from nodeflow_app.state import auth_state
from nodeflow_app.state.auth_state import AuthState
from nodeflow_app.store.accounts import AccountStore
from nodeflow_app.store.models import MembershipRow
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
