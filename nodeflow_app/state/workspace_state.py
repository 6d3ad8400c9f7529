"""The workspace page's state: members and roles, invitation links, team workspaces, the user's API tokens.

Owners manage members, invitations and the members' API tokens of the workspace ("manage"); everyone manages
their own API tokens. A raw invitation
link or API token is shown once, right after it is made, and never stored in clear.
"""

from __future__ import annotations

import dataclasses
import time
from datetime import datetime, timezone
from typing import Any

import reflex as rx

from nodeflow_app.state.page_threads import off_loop
from nodeflow_app import routes
from nodeflow_app.state.access import client_address, current, requires, session_token, user_for_token
from nodeflow_app.state.auth_state import AuthState, start_session
from nodeflow_app.state.first_load import first_load
from nodeflow_app.state.room_access import forget_member
from nodeflow_app.store.accounts import HANDOFF_SECONDS, AccountError, ApiToken, account_store

EXPIRIES = {"1 day": 86400, "7 days": 7 * 86400, "30 days": 30 * 86400}
LINK_NOT_VALID = "This invitation link is not valid any more (used, revoked or expired)."


@dataclasses.dataclass
class MemberRow:
    user_id: str
    name: str
    email: str
    role: str
    personal: bool = False  # whose personal workspace this is: no remove or role change offered


@dataclasses.dataclass
class InvitationView:
    id: str
    role: str
    expires: str
    status: str  # pending | used | revoked | expired


@dataclasses.dataclass
class TokenView:
    id: str
    name: str
    created: str
    last_used: str
    revoked: bool
    holder: str = ""  # whose token it is, in the owners' list of the members' tokens


def _when(at: float | None) -> str:
    return datetime.fromtimestamp(at, tz=timezone.utc).strftime("%Y-%m-%d %H:%M UTC") if at else "never"


def _token_view(token: ApiToken, holder: str = "") -> TokenView:
    return TokenView(token.id, token.name, _when(token.created_at), _when(token.last_used_at),
                     token.revoked_at is not None, holder)


def _page_rows() -> tuple[list[MemberRow], list[InvitationView], list[TokenView], list[TokenView]]:
    """The page's lists, read in a page thread. The workspace and role are the ones the access check resolved,
    never the browser's own idea of them: the page URL (which decides the check) and the stored workspace both
    come from the browser."""
    caller = current()
    store, user = account_store(), caller.user
    members = [MemberRow(m.user_id, m.name, m.email, m.role, m.personal) for m in store.members(caller.workspace_id)]
    now = time.time()
    invitations = [
        InvitationView(i.id, i.role, _when(i.expires_at),
                       "used" if i.used_at else "revoked" if i.revoked_at else
                       "expired" if i.expires_at <= now else "pending")
        for i in (store.invitations(caller.workspace_id) if caller.role == "owner" else [])]
    tokens = [_token_view(t) for t in store.api_tokens(user.id, caller.workspace_id)] if user else []
    member_tokens = [_token_view(t, holder) for holder, t in store.members_api_tokens(caller.workspace_id, but=user.id)
                     ] if user and caller.role == "owner" else []
    return members, invitations, tokens, member_tokens


class WorkspaceState(rx.State):
    members: list[MemberRow] = []
    invitations: list[InvitationView] = []
    tokens: list[TokenView] = []
    member_tokens: list[TokenView] = []  # owners only: the other members' tokens for this workspace
    new_link: str = ""  # the invitation link just made (shown once)
    new_token: str = ""  # the API token just made (shown once)
    message: str = ""
    invite_code: str = ""  # the invitation being accepted (/invite/<code>)
    invite_workspace: str = ""
    loaded: bool = False  # until the first load, the page shows a spinner, not empty lists
    load_error: str = ""  # the first load failed: the page says why, with a Retry

    async def _auth(self) -> AuthState:
        return await self.get_state(AuthState)

    async def _refresh(self) -> None:
        self.members, self.invitations, self.tokens, self.member_tokens = await off_loop(_page_rows)
        self.loaded = True

    @rx.event
    @requires("view")
    async def load(self) -> None:
        self.new_link = self.new_token = self.message = ""
        await first_load(self, "the members, invitations and tokens", self._refresh)

    @rx.event
    @requires("manage")
    async def invite(self, form: dict[str, Any]) -> None:
        caller = current()
        role, expiry = str(form.get("role") or "viewer"), EXPIRIES.get(str(form.get("expiry")), 7 * 86400)
        user = caller.user
        raw, _ = await off_loop(account_store().invite, caller.workspace_id, role, user.id, expiry)
        base = routes.page_origin(self.router)
        self.new_link = f"{base}/invite/{raw}"
        await self._refresh()

    @rx.event
    @requires("manage")
    async def revoke_invitation(self, invitation_id: str) -> None:
        caller = current()
        await off_loop(account_store().revoke_invitation, caller.workspace_id, invitation_id)
        await self._refresh()

    @rx.event
    @requires("manage")
    async def set_role(self, user_id: str, role: str) -> Any:
        caller = current()
        try:
            await off_loop(account_store().set_role, caller.workspace_id, user_id, role)
        except (AccountError, ValueError) as error:
            return rx.toast.error(str(error).capitalize() + ".")
        await self._refresh()
        return None

    @rx.event
    @requires("manage")
    async def remove_member(self, user_id: str) -> Any:
        caller = current()
        try:
            await off_loop(account_store().remove_member, caller.workspace_id, user_id)
        except AccountError as error:
            return rx.toast.error(str(error).capitalize() + ".")
        forget_member(caller.workspace_id, user_id)  # their open tabs get nothing more of the workspace
        await self._refresh()
        return None

    @rx.event
    @requires("signed_in")
    async def create_workspace(self, form: dict[str, Any]) -> Any:
        caller = current()
        user = caller.user
        try:
            created = await off_loop(account_store().create_workspace, user.id, str(form.get("name", "")))
        except AccountError as error:
            return rx.toast.error(str(error).capitalize() + ".")
        return AuthState.switch_workspace(created.id)

    @rx.event
    @requires("view")
    async def create_token(self, form: dict[str, Any]) -> None:
        caller = current()
        user = caller.user
        raw, _ = await off_loop(account_store().create_api_token, user.id, caller.workspace_id,
                                str(form.get("name", "")))
        self.new_token = raw
        await self._refresh()

    @rx.event
    @requires("view")
    async def revoke_token(self, token_id: str) -> None:
        caller = current()
        await off_loop(account_store().revoke_api_token, caller.user.id, token_id)
        await self._refresh()

    @rx.event
    @requires("manage")
    async def revoke_member_token(self, token_id: str) -> None:
        caller = current()
        await off_loop(account_store().revoke_workspace_api_token, caller.workspace_id, token_id)
        await self._refresh()

    # -- accepting an invitation (/invite/<code>) -------------------------------------------------------

    @rx.event
    @requires("public")
    async def open_invitation(self) -> Any:
        """Who is invited where; a signed-out visitor signs up (or in) on this page first."""
        self.invite_code = str(routes.page_args(self.router).get("code", ""))
        invitation = await off_loop(account_store().invitation, self.invite_code)
        if invitation is None:
            self.message, self.invite_workspace = LINK_NOT_VALID, ""
            return None
        self.message = ""
        self.invite_workspace = await off_loop(account_store().workspace_name, invitation.workspace_id)
        return None

    @rx.event
    @requires("public")
    async def accept(self, form: dict[str, Any] | None = None) -> Any:
        """Join with the current account, or the form's: an existing one signs in, a new one is made as it joins."""
        auth = await self._auth()
        store, form = account_store(), form or {}
        email, password = str(form.get("email", "")), str(form.get("password", ""))
        user, token, joined = await off_loop(user_for_token, session_token(self)), "", None
        # The link first: with a made-up one, "wrong email or password" (an account) against "link not valid" (none,
        # from the sign-up) told anyone which emails have an account here.
        if await off_loop(store.invitation, self.invite_code) is None:
            self.message = LINK_NOT_VALID
            return None
        try:  # argon2 hashes and verifies in threads (150-500 ms each), like every store call here
            if user is None and await off_loop(store.user_by_email, email) is None:
                # The account and its joining are one transaction: a link that is not valid makes no account.
                _, joined = await off_loop(store.sign_up_by_invitation, self.invite_code, str(form.get("name", "")),
                                           email, password)
            if user is None:
                token, user = await off_loop(store.sign_in, email, password, address=client_address(self),
                                             seconds=HANDOFF_SECONDS)
            joined = joined or await off_loop(store.accept, self.invite_code, user.id)
        except AccountError as error:
            self.message = str(error).capitalize() + "."
            return None
        auth.workspace_id = joined.id
        return start_session(self.router, token, routes.GRAPHS) if token else rx.redirect(routes.GRAPHS)
