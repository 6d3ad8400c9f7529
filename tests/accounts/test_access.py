"""Every event handler of every state declares who may call it, and the one check refuses outsiders and
viewers wherever the declaration asks for more. Reflex's generic `setvar` is refused everywhere."""

from __future__ import annotations

import pytest

import nodeflow_app.nodeflow_app  # noqa: F401 - registers every state class of the app
from nodeflow_app.accounts.roles import LEAST_ROLE
from nodeflow_app.state.access import REFLEX_INTERNAL, declared, decide
from nodeflow_app.store.accounts import User
from reflex.state import State

OUTSIDER = User("u-out", "eve@example.org", "Eve", False)
VIEWER = User("u-view", "vic@example.org", "Vic", False)
ADMIN = User("u-admin", "ada@example.org", "Ada", True)


def _states(cls=State):
    for sub in cls.get_substates():
        yield sub
        yield from _states(sub)


def _handlers():
    for cls in _states():
        for name, handler in cls.event_handlers.items():
            if name not in REFLEX_INTERNAL:
                yield cls, name, handler


HANDLERS = list(_handlers())


def test_the_app_has_handlers_to_check():
    assert len(HANDLERS) > 60


def test_every_handler_declares_its_access_rule():
    missing = [f"{cls.__name__}.{name}" for cls, name, handler in HANDLERS
               if name != "setvar" and declared(handler.fn) is None]
    assert missing == [], f"handlers without @requires(...): {missing}"


def test_setvar_is_refused_for_everyone():
    for cls, name, handler in HANDLERS:
        if name == "setvar":
            assert declared(handler.fn) is None
            assert not decide(declared(handler.fn), VIEWER, "owner").allowed


# Everything a visitor without a session may call: setting up, signing in, and following an invitation link.
# A new public handler must be added here on purpose (and reviewed as such).
PUBLIC = {"AuthState.create_owner", "AuthState.guard", "AuthState.load_account", "AuthState.load_public",
          "AuthState.sign_in", "WorkspaceState.open_invitation", "WorkspaceState.accept"}


def test_only_setup_sign_in_and_invitations_are_public():
    public = {f"{cls.__name__}.{name}" for cls, name, handler in HANDLERS if declared(handler.fn) == "public"}
    assert public == PUBLIC


@pytest.mark.parametrize("cls, name, handler", HANDLERS, ids=[f"{c.__name__}.{n}" for c, n, _ in HANDLERS])
def test_outsiders_and_viewers_get_only_what_the_declaration_allows(cls, name, handler):
    need = declared(handler.fn)
    if need in (None, "public"):
        return  # covered above: undeclared is refused, public is AuthState's sign-in only
    assert not decide(need, None, None).allowed, "anonymous callers are refused"
    assert decide(need, OUTSIDER, None).allowed == (need == "signed_in"), "non-members see nothing"
    if need == "admin":
        assert not decide(need, VIEWER, "owner").allowed and decide(need, ADMIN, None).allowed
        return
    viewer_may = need == "signed_in" or LEAST_ROLE[need] == "viewer"
    assert decide(need, VIEWER, "viewer").allowed == viewer_may
    assert decide(need, VIEWER, "owner").allowed
