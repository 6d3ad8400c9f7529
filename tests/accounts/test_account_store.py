"""AccountStore on SQLite and on the real PostgreSQL: accounts, sessions, the sign-in limit, workspaces and
roles, invitations by link, API tokens."""

from __future__ import annotations

import threading
import time

import pytest
from sqlalchemy import event, func, select

from nodeflow_app.accounts.roles import allows
from nodeflow_app.store import accounts as accounts_module
from nodeflow_app.store.accounts import AccountError, AccountStore, InstallOwned, SignInThrottled
from nodeflow_app.store.db import make_engine
from nodeflow_app.store.models import KnownSignInAddressRow, SignInAttemptRow
from tests.store.postgres import POSTGRES_URL, private_schema

PASSWORD = "correct horse"


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request, tmp_path):
    if request.param == "sqlite":
        store = AccountStore(f"sqlite:///{tmp_path / 'nodeflow.db'}")
        yield store
        store.engine.dispose()
        return
    with private_schema() as schema:
        engine = make_engine(POSTGRES_URL)
        yield AccountStore(engine.execution_options(schema_translate_map={None: schema}))
        engine.dispose()


def test_the_first_account_is_the_instance_admin_with_a_personal_workspace(store):
    assert not store.has_users()
    owner = store.create_user("Ada", " Ada@Example.org ", PASSWORD)
    bob = store.create_user("Bob", "bob@example.org", PASSWORD)
    assert (owner.email, owner.is_admin, bob.is_admin) == ("ada@example.org", True, False)
    [personal] = store.workspaces(owner.id)
    assert (personal.personal, personal.role, personal.name) == (True, "owner", "Ada's workspace")
    assert [u.email for u in store.users()] == ["ada@example.org", "bob@example.org"]
    with pytest.raises(AccountError, match="exists already"):
        store.create_user("Ada again", "ADA@example.org", PASSWORD)


@pytest.mark.parametrize("email, password, message", [
    ("not-an-email", PASSWORD, "is not an email address"), ("  ", PASSWORD, "an email address is needed"),
    ("a@b.co", "short", "at least 8 characters")])
def test_bad_email_or_password_is_refused(store, email, password, message):
    with pytest.raises(AccountError, match=message):
        store.create_user("X", email, password)


def test_sign_in_sessions_and_sign_out_everywhere(store):
    user = store.create_user("Ada", "ada@example.org", PASSWORD)
    first, signed = store.sign_in("ADA@example.org", PASSWORD)
    second, _ = store.sign_in("ada@example.org", PASSWORD)
    assert signed == user and store.user_for_session(first) == user and first != second
    assert store.user_for_session("forged") is None and store.user_for_session("") is None
    store.sign_out(first)
    assert store.user_for_session(first) is None and store.user_for_session(second) == user
    third, _ = store.sign_in("ada@example.org", PASSWORD)
    store.sign_out(third, everywhere=True)
    assert store.user_for_session(second) is None and store.user_for_session(third) is None


def test_sessions_expire(store, monkeypatch):
    store.create_user("Ada", "ada@example.org", PASSWORD)
    token, _ = store.sign_in("ada@example.org", PASSWORD)
    assert store.user_for_session(token) is not None
    later = time.time() + accounts_module.SESSION_SECONDS + 1
    monkeypatch.setattr(accounts_module.time, "time", lambda: later)
    assert store.user_for_session(token) is None


def test_a_handoff_session_is_claimed_once_for_a_full_one_and_nothing_else_is(store):
    user = store.create_user("Ada", "ada@example.org", PASSWORD)
    short, _ = store.sign_in("ada@example.org", PASSWORD, seconds=accounts_module.HANDOFF_SECONDS)
    assert store.user_for_session(short) is None  # no session yet: only the sign-in route may use it
    full = store.claim_handoff(short)
    assert full and full != short and store.user_for_session(full) == user
    assert store.user_for_session(short) is None  # it works once
    assert store.claim_handoff(short) is None and store.claim_handoff("forged") is None
    assert store.claim_handoff("") is None and store.claim_handoff(None) is None
    assert store.claim_handoff(full) is None and store.user_for_session(full) == user  # a full session stays as is
    expiring, _ = store.sign_in("ada@example.org", PASSWORD, seconds=0.05)
    time.sleep(0.1)
    assert store.claim_handoff(expiring) is None


HOME, OFFICE, ATTACKER = "192.0.2.10", "192.0.2.20", "203.0.113.66"


def fail(store, email: str, address: str | None, times: int = 1) -> None:
    for _ in range(times):
        with pytest.raises(AccountError, match="^wrong email or password$"):
            store.sign_in(email, "guess", address=address)


def test_wrong_passwords_are_rate_limited_per_email_and_address(store):
    store.create_user("Ada", "ada@example.org", PASSWORD)
    fail(store, "ada@example.org", HOME, accounts_module.MAX_FAILED_SIGN_INS)
    with pytest.raises(SignInThrottled, match="^too many failed sign-ins for ada@example.org from this address"):
        store.sign_in("ada@example.org", PASSWORD, address=HOME)  # even the right password waits
    store.create_user("Bob", "bob@example.org", PASSWORD)
    assert store.sign_in("bob@example.org", PASSWORD, address=HOME)[1].email == "bob@example.org"  # others are not


def test_a_stranger_failing_from_elsewhere_does_not_lock_the_owner_out(store):
    """Five failures for an email locked it for everyone: whoever knew a colleague's email could keep them out."""
    ada = store.create_user("Ada", "ada@example.org", PASSWORD)
    fail(store, "ada@example.org", ATTACKER, accounts_module.MAX_FAILED_SIGN_INS)
    with pytest.raises(SignInThrottled):
        store.sign_in("ada@example.org", PASSWORD, address=ATTACKER)
    assert store.sign_in("ada@example.org", PASSWORD, address=HOME)[1] == ada
    with pytest.raises(SignInThrottled):  # her sign-in did not lift the stranger's lock
        store.sign_in("ada@example.org", PASSWORD, address=ATTACKER)


def test_one_address_trying_a_password_on_many_emails_is_throttled(store):
    """Password spraying: one address tried one password on any number of emails, each failure counted only
    against its email."""
    ada = store.create_user("Ada", "ada@example.org", PASSWORD)
    for i in range(accounts_module.MAX_FAILED_FROM_ADDRESS):
        fail(store, f"person{i}@example.org", ATTACKER)
    for email in ("ada@example.org", "somebody.new@example.org"):  # an account or not: the same answer
        with pytest.raises(SignInThrottled, match="^too many failed sign-ins from this address; try again in 15"):
            store.sign_in(email, PASSWORD, address=ATTACKER)
    assert store.sign_in("ada@example.org", PASSWORD, address=HOME)[1] == ada


def test_an_ipv6_client_is_counted_by_its_network(store):
    """A client given a /64 could take a fresh address, and a fresh limit, for every few guesses."""
    store.create_user("Ada", "ada@example.org", PASSWORD)
    for i in range(accounts_module.MAX_FAILED_SIGN_INS):
        fail(store, "ada@example.org", f"2001:db8:1:2::{i + 1}")
    with pytest.raises(SignInThrottled):
        store.sign_in("ada@example.org", PASSWORD, address="2001:db8:1:2:ffff::9")
    assert store.sign_in("ada@example.org", PASSWORD, address="2001:db8:1:3::1")


def test_an_email_guessed_at_from_many_addresses_waits_past_a_higher_limit(store):
    """Guessing spread over many addresses, each below its own limits, still meets the email's."""
    ada = store.create_user("Ada", "ada@example.org", PASSWORD)
    each = accounts_module.MAX_FAILED_SIGN_INS - 1  # no address locks its own pair
    for i in range(accounts_module.MAX_FAILED_FOR_EMAIL - 1):
        fail(store, "ada@example.org", f"198.51.100.{i // each}")
    assert store.sign_in("ada@example.org", PASSWORD, address=HOME)[1] == ada  # one below the limit
    fail(store, "ada@example.org", "198.51.100.250")
    with pytest.raises(SignInThrottled, match="^too many failed sign-ins for ada@example.org from many addresses"):
        store.sign_in("ada@example.org", PASSWORD, address=OFFICE)
    bob = store.create_user("Bob", "bob@example.org", PASSWORD)
    assert store.sign_in("bob@example.org", PASSWORD, address="198.51.100.0")[1] == bob  # other emails are not


def lock_email_from_many_addresses(store, email: str) -> None:
    """Failures for `email` up to its ceiling, spread so that no address reaches its own limits."""
    each = accounts_module.MAX_FAILED_SIGN_INS - 1
    for i in range(accounts_module.MAX_FAILED_FOR_EMAIL):
        fail(store, email, f"198.51.100.{i // each}")


def test_a_stranger_with_a_few_addresses_cannot_lock_the_owner_out_of_an_address_she_signed_in_from(store):
    """The ceiling for one email (guessing from many addresses) locked the email everywhere: anyone with a few
    addresses kept the owner out for 15 minutes, again and again. An address (an IPv6 /64) the account signed in
    from within KNOWN_ADDRESS_S meets only its own limit for the email, as OWASP's device cookies do; new
    addresses still wait."""
    ada = store.create_user("Ada", "ada@example.org", PASSWORD)
    store.sign_in("ada@example.org", PASSWORD, address=HOME)
    store.sign_in("ada@example.org", PASSWORD, address="2001:db8:1:2::1")
    lock_email_from_many_addresses(store, "ada@example.org")
    with pytest.raises(SignInThrottled, match="^too many failed sign-ins for ada@example.org from many addresses"):
        store.sign_in("ada@example.org", PASSWORD, address=OFFICE)
    assert store.sign_in("ada@example.org", PASSWORD, address=HOME)[1] == ada
    assert store.sign_in("ada@example.org", PASSWORD, address="2001:db8:1:2:ffff::9")[1] == ada  # the same /64
    with pytest.raises(SignInThrottled):
        store.sign_in("ada@example.org", PASSWORD, address="2001:db8:1:3::1")
    with pytest.raises(SignInThrottled):  # no address: nothing to know
        store.sign_in("ada@example.org", PASSWORD)
    fail(store, "ada@example.org", HOME, accounts_module.MAX_FAILED_SIGN_INS)  # its own limit holds
    with pytest.raises(SignInThrottled, match="^too many failed sign-ins for ada@example.org from this address"):
        store.sign_in("ada@example.org", PASSWORD, address=HOME)


def test_a_known_address_is_not_held_up_by_others_failing_from_it(store):
    """Twenty failures from a shared address (an office behind one router), whatever the emails, stop it for new
    sign-ins, not for an account that signed in from it before; other accounts still wait there."""
    ada = store.create_user("Ada", "ada@example.org", PASSWORD)
    store.create_user("Bob", "bob@example.org", PASSWORD)
    store.sign_in("ada@example.org", PASSWORD, address=OFFICE)
    for i in range(accounts_module.MAX_FAILED_FROM_ADDRESS):
        fail(store, f"person{i}@example.org", OFFICE)
    assert store.sign_in("ada@example.org", PASSWORD, address=OFFICE)[1] == ada
    with pytest.raises(SignInThrottled, match="^too many failed sign-ins from this address"):
        store.sign_in("bob@example.org", PASSWORD, address=OFFICE)


def test_an_address_stays_known_for_a_while_after_each_sign_in_from_it(store, monkeypatch):
    ada = store.create_user("Ada", "ada@example.org", PASSWORD)
    known_for, start = accounts_module.KNOWN_ADDRESS_S, time.time()
    clock = [start]
    monkeypatch.setattr(accounts_module.time, "time", lambda: clock[0])
    store.sign_in("ada@example.org", PASSWORD, address=HOME)
    clock[0] = start + known_for - 60
    lock_email_from_many_addresses(store, "ada@example.org")
    assert store.sign_in("ada@example.org", PASSWORD, address=HOME)[1] == ada
    clock[0] = start + 2 * known_for - 120  # known through the sign-in just made only
    lock_email_from_many_addresses(store, "ada@example.org")
    assert store.sign_in("ada@example.org", PASSWORD, address=HOME)[1] == ada
    clock[0] += known_for + 60
    lock_email_from_many_addresses(store, "ada@example.org")
    with pytest.raises(SignInThrottled, match="from many addresses"):
        store.sign_in("ada@example.org", PASSWORD, address=HOME)
    store.forget_expired(clock[0])
    with store.engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(KnownSignInAddressRow)).scalar_one() == 0


def test_a_new_password_forgets_the_addresses_the_account_signed_in_from(store):
    """A password changed or reset (it may have leaked) ends every session, and the addresses those sessions came
    from, the intruder's among them, are no longer known: they wait behind the email's ceiling again."""
    ada = store.create_user("Ada", "ada@example.org", PASSWORD)
    store.sign_in("ada@example.org", PASSWORD, address=HOME)
    store.set_password(ada.id, "a brand new password")
    lock_email_from_many_addresses(store, "ada@example.org")
    with pytest.raises(SignInThrottled, match="from many addresses"):
        store.sign_in("ada@example.org", "a brand new password", address=HOME)


def test_a_sign_in_forgets_only_the_failures_of_its_email_from_its_address(store):
    ada = store.create_user("Ada", "ada@example.org", PASSWORD)
    store.create_user("Bob", "bob@example.org", PASSWORD)
    almost = accounts_module.MAX_FAILED_SIGN_INS - 1
    fail(store, "ada@example.org", HOME, almost)
    fail(store, "ada@example.org", OFFICE, almost)
    fail(store, "bob@example.org", HOME, almost)
    assert store.sign_in("ada@example.org", PASSWORD, address=HOME)[1] == ada
    with store.engine.connect() as conn:
        left = conn.execute(select(SignInAttemptRow.email, SignInAttemptRow.address)).all()
    assert sorted(left) == sorted([("ada@example.org", OFFICE)] * almost + [("bob@example.org", HOME)] * almost)
    fail(store, "ada@example.org", HOME, almost)  # home starts again from nothing
    assert store.sign_in("ada@example.org", PASSWORD, address=HOME)[1] == ada
    fail(store, "ada@example.org", OFFICE)  # the office's failures stayed
    with pytest.raises(SignInThrottled):
        store.sign_in("ada@example.org", PASSWORD, address=OFFICE)


def test_changing_the_password_ends_every_session(store):
    user = store.create_user("Ada", "ada@example.org", PASSWORD)
    token, _ = store.sign_in("ada@example.org", PASSWORD)
    with pytest.raises(AccountError, match="current password is wrong"):
        store.change_password(user.id, "nope nope", "new password 1")
    store.change_password(user.id, PASSWORD, "new password 1")
    assert store.user_for_session(token) is None
    assert store.sign_in("ada@example.org", "new password 1")[1] == user


def test_wrong_current_passwords_count_against_the_sign_in_limit(store):
    """A session left open was a way to guess the password without limit: Change password verified the current one
    as often as it was asked. The guesses count against the address they came from."""
    user = store.create_user("Ada", "ada@example.org", PASSWORD)
    for _ in range(accounts_module.MAX_FAILED_SIGN_INS):
        with pytest.raises(AccountError, match="current password is wrong"):
            store.change_password(user.id, "a guess at it", "new password 1", address=ATTACKER)
    with pytest.raises(SignInThrottled, match="too many failed sign-ins"):
        store.change_password(user.id, PASSWORD, "new password 1", address=ATTACKER)  # even the right one waits
    with pytest.raises(SignInThrottled):
        store.sign_in("ada@example.org", PASSWORD, address=ATTACKER)
    assert store.sign_in("ada@example.org", PASSWORD, address=HOME)[1] == user
    store.change_password(user.id, PASSWORD, "new password 1", address=HOME)


def test_an_address_too_long_for_any_account_is_refused_without_filling_the_database(store):
    """A failed sign-in stored its address whole: a stranger's 1 MB "emails" (one per websocket event, each its own
    row) filled the database on SQLite."""
    long_address = "a" * 300_000 + "@example.org"
    with pytest.raises(AccountError, match="wrong email or password"):
        store.sign_in(long_address, PASSWORD)
    with store.engine.connect() as conn:
        stored = conn.execute(select(SignInAttemptRow.email)).scalars().all()
    assert stored == []


def test_a_long_run_of_dots_in_an_address_is_refused_at_once():
    """The address pattern backtracked quadratically: 20,000 dots took 10 s of a thread holding the GIL, and the
    invitation page reaches it for anyone, signed in or not."""
    started = time.monotonic()
    with pytest.raises(AccountError, match="is not an email address"):
        accounts_module.clean_email("a@" + "." * 20_000 + "@")
    assert time.monotonic() - started < 1.0


def test_team_workspace_roles_and_the_last_owner(store):
    ada = store.create_user("Ada", "ada@example.org", PASSWORD)
    team = store.create_workspace(ada.id, "Support team")
    assert store.role(ada.id, team.id) == "owner"
    bob = store.create_user("Bob", "bob@example.org", PASSWORD)
    assert store.role(bob.id, team.id) is None
    with pytest.raises(AccountError, match="keeps at least one owner"):
        store.set_role(team.id, ada.id, "editor")
    with pytest.raises(AccountError, match="keeps at least one owner"):
        store.remove_member(team.id, ada.id)
    with pytest.raises(ValueError, match="unknown role 'god'"):
        store.set_role(team.id, ada.id, "god")
    with pytest.raises(AccountError, match="personal workspace cannot be deleted"):
        store.delete_workspace(store.personal_workspace(ada.id).id)
    store.delete_workspace(team.id)
    assert [w.name for w in store.workspaces(ada.id)] == ["Ada's workspace"]




def test_nobody_is_removed_from_or_demoted_in_their_own_personal_workspace(store):
    """Ada shared her personal workspace with Bob as an owner, and Bob removed her from it: she was then in no
    workspace at all, and the pages and the API, which fall back on the personal workspace, failed for her."""
    ada = store.create_user("Ada", "ada@example.org", PASSWORD)
    bob = store.create_user("Bob", "bob@example.org", PASSWORD)
    personal = store.personal_workspace(ada.id)
    store.accept(store.invite(personal.id, "owner", ada.id)[0], bob.id)
    with pytest.raises(AccountError, match="the person a personal workspace belongs to stays its owner"):
        store.remove_member(personal.id, ada.id)
    with pytest.raises(AccountError, match="the person a personal workspace belongs to stays its owner"):
        store.set_role(personal.id, ada.id, "editor")
    store.set_role(personal.id, ada.id, "owner")
    assert store.personal_workspace(ada.id) == personal
    store.set_role(personal.id, bob.id, "viewer")  # the others she let in come and go as in a team
    store.remove_member(personal.id, bob.id)
    assert [(m.email, m.role) for m in store.members(personal.id)] == [("ada@example.org", "owner")]

@pytest.mark.parametrize("step_down", ["set_role", "remove_member"])
def test_two_owners_stepping_down_at_once_leave_one_owner(store, monkeypatch, step_down):
    """Each request counted the owners before either wrote (two workers, two clicks): both saw the other one stay,
    and the workspace was left with no owner."""
    ada = store.create_user("Ada", "ada@example.org", PASSWORD)
    bob = store.create_user("Bob", "bob@example.org", PASSWORD)
    team = store.create_workspace(ada.id, "Support")
    store.accept(store.invite(team.id, "owner", ada.id)[0], bob.id)
    check, counted, both_counted = AccountStore._keep_an_owner, [], threading.Event()

    def count_then_wait_for_the_other(conn, *args):  # with the lock, the other counts only after this one commits
        check(conn, *args)
        counted.append(args)
        if len(counted) == 2:
            both_counted.set()
        both_counted.wait(1)

    monkeypatch.setattr(AccountStore, "_keep_an_owner", staticmethod(count_then_wait_for_the_other))
    refused = []

    def leave(user_id):
        try:
            if step_down == "set_role":
                store.set_role(team.id, user_id, "editor")
            else:
                store.remove_member(team.id, user_id)
        except AccountError as error:
            refused.append(str(error))

    threads = [threading.Thread(target=leave, args=(user.id,)) for user in (ada, bob)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert refused == ["a workspace keeps at least one owner"]
    assert [m.role for m in store.members(team.id)].count("owner") == 1

def test_an_invitation_link_is_single_use_and_can_be_revoked_or_expire(store):
    ada = store.create_user("Ada", "ada@example.org", PASSWORD)
    bob = store.create_user("Bob", "bob@example.org", PASSWORD)
    cy = store.create_user("Cy", "cy@example.org", PASSWORD)
    team = store.create_workspace(ada.id, "Support")
    link, invitation = store.invite(team.id, "viewer", ada.id)
    assert store.invitation(link).id == invitation.id and invitation.pending
    joined = store.accept(link, bob.id)
    assert (joined.id, joined.role) == (team.id, "viewer")
    assert [(m.email, m.role) for m in store.members(team.id)] == [("ada@example.org", "owner"),
                                                                  ("bob@example.org", "viewer")]
    with pytest.raises(AccountError, match="not valid any more"):
        store.accept(link, cy.id)
    revoked, revoked_invitation = store.invite(team.id, "editor", ada.id)
    store.revoke_invitation(team.id, revoked_invitation.id)
    expired, _ = store.invite(team.id, "editor", ada.id, expires_in_s=-1)
    for raw in (revoked, expired, "forged"):
        assert store.invitation(raw) is None
        with pytest.raises(AccountError, match="not valid any more"):
            store.accept(raw, cy.id)
    assert store.role(cy.id, team.id) is None
    assert [i.pending for i in store.invitations(team.id)] == [False, False, False]



def test_an_account_made_by_invitation_exists_only_with_the_invitation_claimed(store):
    """A sign-up on an invitation page is one transaction: no account without the invitation (else any link, even a
    made-up one, opens the install), and no invitation used up by a sign-up that was refused."""
    ada = store.create_user("Ada", "ada@example.org", PASSWORD)
    team = store.create_workspace(ada.id, "Support")
    link, _ = store.invite(team.id, "editor", ada.id)
    for raw in ("forged", store.invite(team.id, "editor", ada.id, expires_in_s=-1)[0]):
        with pytest.raises(AccountError, match="not valid any more"):
            store.sign_up_by_invitation(raw, "Eve", "eve@example.org", PASSWORD)
    assert store.user_by_email("eve@example.org") is None
    for email, password in (("ada@example.org", PASSWORD), ("eve@example.org", "short")):
        with pytest.raises(AccountError, match="exists already|at least 8 characters"):
            store.sign_up_by_invitation(link, "Eve", email, password)
    assert store.invitation(link) is not None

    eve, joined = store.sign_up_by_invitation(link, "Eve", "eve@example.org", PASSWORD)
    assert (joined.id, joined.name, joined.role) == (team.id, "Support", "editor") and not eve.is_admin
    assert [(w.name, w.role) for w in store.workspaces(eve.id)] == [("Eve's workspace", "owner"), ("Support", "editor")]
    assert store.invitation(link) is None and store.sign_in("eve@example.org", PASSWORD)[1] == eve

def test_api_tokens_are_shown_once_hashed_revocable_and_follow_the_role(store):
    ada = store.create_user("Ada", "ada@example.org", PASSWORD)
    team = store.create_workspace(ada.id, "Support")
    raw, token = store.create_api_token(ada.id, team.id, "CI")
    assert raw.startswith("nf_") and raw not in repr(store.api_tokens(ada.id))
    caller = store.api_caller(raw)
    assert (caller.user, caller.workspace_id, caller.role) == (ada, team.id, "owner")
    assert store.api_tokens(ada.id, team.id)[0].last_used_at is not None
    store.revoke_api_token(ada.id, token.id)
    assert store.api_caller(raw) is None and store.api_caller("nf_forged") is None
    outsider = store.create_user("Eve", "eve@example.org", PASSWORD)
    with pytest.raises(AccountError, match="not a member"):
        store.create_api_token(outsider.id, team.id, "steal")


def test_an_owner_sees_and_revokes_the_members_tokens_of_their_workspace_only(store):
    ada = store.create_user("Ada", "ada@example.org", PASSWORD)
    bob = store.create_user("Bob", "bob@example.org", PASSWORD)
    team = store.create_workspace(ada.id, "Support")
    link, _ = store.invite(team.id, "editor", ada.id)
    store.accept(link, bob.id)
    store.create_api_token(ada.id, team.id, "mine")
    raw, token = store.create_api_token(bob.id, team.id, "bob-ci")
    elsewhere, _ = store.create_api_token(bob.id, store.personal_workspace(bob.id).id, "bob-personal")
    assert [(name, t.name) for name, t in store.members_api_tokens(team.id, but=ada.id)] == [("Bob", "bob-ci")]
    store.revoke_workspace_api_token(store.personal_workspace(bob.id).id, token.id)  # another workspace's owner
    assert store.api_caller(raw) is not None
    store.revoke_workspace_api_token(team.id, token.id)
    assert store.api_caller(raw) is None and store.api_caller(elsewhere) is not None
    assert store.members_api_tokens(team.id, but=ada.id)[0][1].revoked_at is not None


def at_once(store: AccountStore, make, count: int) -> list:
    """`make(i)` in `count` threads at once, each statement on the accounts table slowed (a check made before an
    insert would be stale by then): what each returned or raised."""
    event.listen(store.engine, "before_cursor_execute",
                 lambda _conn, _cursor, statement, *_: time.sleep(0.05) if "user_account" in statement else None)
    start, results = threading.Barrier(count), [None] * count

    def one(i: int) -> None:
        start.wait()
        try:
            results[i] = make(i)
        except AccountError as error:
            results[i] = error

    threads = [threading.Thread(target=one, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def test_of_simultaneous_setups_of_a_fresh_install_one_makes_the_owner_and_the_others_are_refused(store):
    results = at_once(store, lambda i: store.create_owner(f"N{i}", f"n{i}@example.org", PASSWORD), 4)
    [owner] = [r for r in results if not isinstance(r, AccountError)]
    assert owner.is_admin and all(isinstance(r, InstallOwned) for r in results if r is not owner)
    assert store.users() == [owner]  # the refused made no account


def test_of_simultaneous_first_accounts_exactly_one_is_the_instance_admin(store):
    results = at_once(store, lambda i: store.create_user(f"N{i}", f"n{i}@example.org", PASSWORD), 4)
    assert sorted(u.is_admin for u in results) == [False, False, False, True]
    assert sorted(u.is_admin for u in store.users()) == [False, False, False, True]


def test_headless_admin_is_created_once(store):
    assert store.ensure_admin("root@example.org", PASSWORD).is_admin
    assert store.ensure_admin("other@example.org", PASSWORD) is None
    assert [u.email for u in store.users()] == ["root@example.org"]


def test_a_worker_losing_the_race_to_create_the_headless_admin_goes_on(store, monkeypatch):
    """Backend workers start together: each saw no account, one created it; the other must not die."""
    store.ensure_admin("root@example.org", PASSWORD)
    monkeypatch.setattr(store, "has_users", lambda: False)  # what the slower worker saw a moment ago
    assert store.ensure_admin("root@example.org", PASSWORD) is None
    with pytest.raises(AccountError, match="exists already"):  # but a clash with anything else is no race
        store.create_user("Root", "root@example.org", PASSWORD)


@pytest.mark.parametrize("role, action, allowed", [
    ("viewer", "view", True), ("viewer", "chat", True), ("viewer", "edit", False), ("editor", "edit", True),
    ("editor", "manage", False), ("owner", "manage", True), (None, "view", False), ("bogus", "view", False)])
def test_roles_allow_the_actions_of_the_spec_table(role, action, allowed):
    assert allows(role, action) is allowed


def test_an_unknown_email_costs_the_same_verification_as_a_known_one(store, monkeypatch):
    """An unknown email skipped argon2 (150-500 ms): a sign-in's answer time told which emails have accounts."""
    store.create_user("Ada", "ada@example.org", PASSWORD)
    hasher, verified = accounts_module.PASSWORD_HASHER, []

    class Counting(type(hasher)):
        def verify(self, hash, password):
            verified.append(hash)
            return super().verify(hash, password)

    monkeypatch.setattr(accounts_module, "PASSWORD_HASHER", Counting(time_cost=1, memory_cost=1024, parallelism=1))
    for email in ("ada@example.org", "nobody@example.org"):
        with pytest.raises(AccountError, match="^wrong email or password$"):
            store.sign_in(email, "guess")
    assert len(verified) == 2 and all(hash.startswith("$argon2id$") for hash in verified)
