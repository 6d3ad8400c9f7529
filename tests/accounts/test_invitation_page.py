"""The invitation page (/invite/<code>) of a signed-out visitor: its "Join" makes an account only by claiming a valid
invitation, so a made-up, used or expired link is no way to sign up to an install."""

from __future__ import annotations

import time

import pytest

import nodeflow_app.nodeflow_app  # noqa: F401 - registers every state class of the app
from nodeflow_app.state import workspace_state
from nodeflow_app.state.workspace_state import WorkspaceState
from nodeflow_app.store.accounts import MAX_FAILED_SIGN_INS, AccountStore
from nodeflow_app.store.models import SignInAttemptRow
from reflex.istate.data import RouterData
from reflex.state import State
from sqlalchemy import select

PASSWORD = "correct horse"
MALLORY = {"name": "Mallory", "email": "mallory@example.org", "password": "mallory's password"}


@pytest.fixture
def store(page_accounts) -> AccountStore:
    return page_accounts(workspace_state)


async def _opened(code: str, ip: str = "") -> WorkspaceState:
    """The page's state after its on_load, for a signed-out visitor (no session cookie) at `ip`."""
    root = State(_reflex_internal_init=True)
    root.router = RouterData.from_router_data({"pathname": "/invite/[code]", "asPath": f"/invite/{code}",
                                               "query": {"code": code}, "ip": ip,
                                               "headers": {"origin": "http://127.0.0.1:3000"}})
    state = root.get_substate(WorkspaceState._get_substate_path())
    await WorkspaceState.event_handlers["open_invitation"].fn(state)
    return state


async def _join(state: WorkspaceState, form: dict[str, str]):
    return await WorkspaceState.event_handlers["accept"].fn(state, form)


@pytest.mark.parametrize("link", ["made-up", "used", "revoked", "expired"])
async def test_a_link_that_is_not_valid_makes_no_account(store, link):
    """The account was made (and signed in) before the invitation was checked: any link was an open sign-up."""
    owner = store.create_user("Owner", "owner@example.org", PASSWORD)
    team = store.create_workspace(owner.id, "Team")
    code, invitation = store.invite(team.id, "editor", owner.id, expires_in_s=-1 if link == "expired" else 3600)
    if link == "used":
        store.accept(code, store.create_user("Bob", "bob@example.org", PASSWORD).id)
    elif link == "revoked":
        store.revoke_invitation(team.id, invitation.id)
    state = await _opened("made-up" if link == "made-up" else code)
    assert state.invite_workspace == "" and "not valid any more" in state.message  # the page offers no form

    assert await _join(state, MALLORY) is None  # the event can be sent all the same
    assert "not valid any more" in state.message
    assert store.user_by_email(MALLORY["email"]) is None


async def test_a_valid_link_makes_the_account_in_the_workspace_and_signs_it_in(store):
    owner = store.create_user("Owner", "owner@example.org", PASSWORD)
    team = store.create_workspace(owner.id, "Team")
    code, _ = store.invite(team.id, "editor", owner.id)
    state = await _opened(code)
    assert (state.invite_workspace, state.message) == ("Team", "")

    assert await _join(state, MALLORY) is not None  # to the sign-in route with a short session
    mallory = store.user_by_email(MALLORY["email"])
    assert store.role(mallory.id, team.id) == "editor" and store.invitation(code) is None
    assert [w.name for w in store.workspaces(mallory.id)] == ["Mallory's workspace", "Team"]



@pytest.mark.parametrize("has_account", [True, False], ids=["an-account", "no-account"])
async def test_a_made_up_link_tells_nothing_about_which_emails_have_an_account(store, has_account):
    """Join with a made-up link answered "wrong email or password" for an address with an account and "not valid"
    for one without: anyone could list the install's accounts."""
    if has_account:
        store.create_user("Ada", "ada@example.org", PASSWORD)
    state = await _opened("made-up")
    assert await _join(state, {"name": "Ada", "email": "ada@example.org", "password": "a guess at it"}) is None
    assert state.message == "This invitation link is not valid any more (used, revoked or expired)."


async def test_a_made_up_link_with_a_long_run_of_dots_is_refused_at_once(store):
    """The address pattern backtracked quadratically (20,000 dots: 10 s of a thread holding the GIL), reached by
    anyone through Join before the link was checked."""
    state = await _opened("made-up")
    started = time.monotonic()
    await _join(state, {"name": "x", "email": "a@" + "." * 20_000 + "@", "password": "a long password"})
    assert time.monotonic() - started < 1.0
    assert "not valid any more" in state.message


async def test_join_with_an_account_counts_failures_against_the_visitors_address(store):
    """Join signed an existing account in without the tab's address: its failures all shared one "no address"
    count, so anyone failing there could hold up everyone's Join, and lock an email's Join from anywhere."""
    owner = store.create_user("Owner", "owner@example.org", PASSWORD)
    ada = store.create_user("Ada", "ada@example.org", PASSWORD)
    team = store.create_workspace(owner.id, "Team")
    code, _ = store.invite(team.id, "editor", owner.id)
    stranger = await _opened(code, ip="203.0.113.66")
    for _ in range(MAX_FAILED_SIGN_INS):
        assert await _join(stranger, {"email": "ada@example.org", "password": "a guess"}) is None
    with store.engine.connect() as conn:
        assert set(conn.execute(select(SignInAttemptRow.address)).scalars()) == {"203.0.113.66"}

    at_home = await _opened(code, ip="192.0.2.10")
    assert await _join(at_home, {"email": "ada@example.org", "password": PASSWORD}) is not None
    assert store.role(ada.id, team.id) == "editor"
