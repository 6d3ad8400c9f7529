"""Which tabs a co-editing room may still reach: only the tabs of people who may view the room's workspace.

Reflex sends every change of a room (an `rx.SharedState`: `GraphRoom`, `GraphListRoom`) to each tab linked to it
(the room's `_linked_from`) and checks nothing: AccessMiddleware sees a tab's own events only. So a member removed
from a workspace (or signed out in another tab, or whose workspace was deleted) kept receiving every co-edit, name
and cursor of the graph open in their tab until they reloaded. Every push to a tab, and every event of a linked
tab, patches the room into the tab's state through the room's `_internal_patch_linked_state`; `kept_linked` runs
there, and unlinks for good a tab whose person may no longer view the room's workspace: the tab keeps its own
empty copy of the room, the room forgets the tab, and the room's `_access_ended` tells the page.

The check reads the tab's session (its cookie, as the access check does; a tab's headers stay as its websocket
sent them, so each is read once per process) and the person's role there, both kept for a moment in each
process: a push to N tabs costs dict lookups, the database at most once a second per person and workspace. A
removal or a sign-out is seen at once in the process that made it, and on other workers (Redis) as soon as the
forget reaches them through Redis (`forget_everywhere`, a millisecond); were Redis to drop it, within ROLE_CACHE_S
(a removal) or access.SESSION_CACHE_S (a sign-out).
"""

from __future__ import annotations

import logging
from typing import Any

from nodeflow_app.accounts.roles import allows
from nodeflow_app.state.access import Recent, kept_user, session_headers, token_in, user_for_token
from nodeflow_app.state.page_threads import off_loop
from nodeflow_app.store.accounts import account_store

log = logging.getLogger("nodeflow.access")

ROLE_CACHE_S = 1.0


def _key(user_id: str, workspace_id: str) -> str:
    return f"{user_id}\n{workspace_id}"


def _role(key: str) -> str | None:
    user_id, _, workspace_id = key.partition("\n")
    return account_store().role(user_id, workspace_id)


# Roles only (no "not a member"): a person added back is never refused from the cache.
_roles = Recent(_role, keep_none=False, seconds=ROLE_CACHE_S, shared_as="role")


# A tab's session headers (`session_headers`) -> the session token they carry: they alone decide it (beside the
# install's configuration), and the same headers come with every push to the tab. Whose session it is, and
# whether it still is, is access's session cache (a sign-out is seen there).
_tokens: dict[tuple[str, str, str, str], str] = {}


def _session_of(root: Any) -> str:
    """The session token of the tab whose root state is `root` (as `access.session_token` reads it)."""
    if not root.router:
        return ""
    headers = session_headers(root.router.headers)
    token = _tokens.get(headers)
    if token is None:
        if len(_tokens) > 10_000:
            _tokens.clear()
        token = _tokens[headers] = token_in(*headers)
    return token


def forget_member(workspace_id: str, user_id: str) -> None:
    """`user_id` was removed from `workspace_id`: their tabs get nothing more of it from now on."""
    _roles.forget(_key(user_id, workspace_id))


def may_view(session: str, workspace_id: str) -> bool:
    """Whether the person signed in with `session` may view `workspace_id` (database reads when not kept)."""
    user = user_for_token(session) if session else None
    return user is not None and allows(_roles.get(_key(user.id, workspace_id)), "view")


def _kept_answer(session: str, workspace_id: str) -> bool | None:
    """`may_view` from what the caches keep; None when it takes a database read."""
    user = kept_user(session)
    if user is None:
        return None
    if user[0] is None:
        return False
    role = _roles.recent(_key(user[0].id, workspace_id))
    return None if role is None else allows(role[0], "view")


async def _allowed(session: str, workspace_id: str) -> bool:
    kept = _kept_answer(session, workspace_id)
    return kept if kept is not None else await off_loop(may_view, session, workspace_id)


async def kept_linked(private: Any, linked: Any, workspace_id: str | None) -> Any:
    """`linked` (the room, just patched into a tab's state in place of the tab's own `private` copy) when the tab's
    person may view `workspace_id` (None: the room holds nothing of a workspace yet); else the tab is unlinked from
    the room for good and gets `private` back."""
    if workspace_id is None:
        return linked
    root = private._get_root_state()
    session = _session_of(root)
    if await _allowed(session, workspace_id):
        return linked
    log.warning("unlinked tab %s from %s: %s", root.rx_router_session.client_token, type(private).__name__,
                "its person may not view the workspace any more" if session else "no session")
    _unlink(private, linked, root)
    await private._access_ended()
    return private


def _unlink(private: Any, linked: Any, root: Any) -> None:
    """What Reflex's `_unlink` does, without reading the tab's state again: the tab forgets the room (no later
    event or push patches it in), the room forgets the tab (no push tries it), and the tab's own copy is back in
    its state now, so nothing of the room goes into the delta being made for it."""
    name = private.get_full_name()
    # A new dict, not a `pop`: Reflex may be going through the links to patch each in (`_modify_linked_states`).
    root._reflex_internal_links = {state: to for state, to in root._reflex_internal_links.items() if state != name}
    linked._linked_from.discard(root.rx_router_session.client_token)
    private.parent_state.substates[private.get_name()] = private
    # The room is not part of this tab's delta any more, so no `_clean` would record what changed in it (its
    # `_linked_from`): without this, the room's last recorded change would be pushed to every tab again.
    linked._clean()
