"""Who is using this browser: the session cookie, the account, the current workspace; sign-up, sign-in, sign-out.

The session token lives in an HttpOnly cookie that only the sign-in route sets (nodeflow_app/api/session.py: a
sign-in here makes a one-minute session and sends the browser there, which swaps it for the real one), so no
script on the page can read it. The server reads it from the websocket's request headers and checks it against
its hash on every event (`state.access.AccessMiddleware`); the account and workspace shown here derive from it.
Protected pages call `AuthState.guard` first in their on_load: no account yet -> the setup page, not
signed in -> the sign-in page; both name the page in their `next` and go on to it afterwards.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from typing import Any
from urllib.parse import urlencode, urlsplit

import reflex as rx
from reflex.config import get_config

from nodeflow_app.state.page_threads import off_loop
from nodeflow_app import routes
from nodeflow_app.state.access import (
    adopt_unowned_graphs, client_address, forget_token, frontend_prefix, requires, session_token, user_for_token,
)
from nodeflow_app.store.accounts import HANDOFF_SECONDS, AccountError, account_store

log = logging.getLogger(__name__)


@dataclasses.dataclass
class WorkspaceOption:
    id: str
    name: str
    role: str


class AuthState(rx.State):
    user_name: str = ""
    user_email: str = ""
    is_admin: bool = False
    workspace_id: str = rx.LocalStorage("", name="nf_workspace")
    workspace_name: str = ""
    role: str = ""  # the user's role in the current workspace
    workspaces: list[WorkspaceOption] = []
    error: str = ""
    busy: bool = False

    def _signed_in_user(self):
        return user_for_token(session_token(self))

    def _load_account(self) -> bool:
        """Fill the view of the signed-in account; False when nobody is signed in."""
        user = self._signed_in_user()
        if user is None:
            self.user_name = self.user_email = self.role = ""
            return False
        store = account_store()
        options = store.workspaces(user.id)
        # In no workspace at all (removed from their personal one before that was refused): signed in, no role.
        chosen = next((w for w in options if w.id == self.workspace_id), options[0] if options else None)
        self.user_name, self.user_email, self.is_admin = user.name, user.email, user.is_admin
        self.workspace_id, self.workspace_name, self.role = (
            (chosen.id, chosen.name, chosen.role) if chosen else ("", "", ""))
        self.workspaces = [WorkspaceOption(w.id, w.name, w.role) for w in options]
        return True

    @rx.event
    @requires("public")
    def guard(self) -> Any:
        """on_load of every protected page: send the visitor to setup or sign-in when needed, and back here
        afterwards. Replacing this page in the history: Back must not return to a page that sends them on again."""
        here = routes.page_path(self.router, frontend_prefix())
        if not account_store().has_users():
            return rx.redirect(routes.with_next(routes.SETUP, here), replace=True)
        if not self._load_account():
            return rx.redirect(routes.with_next(routes.SIGN_IN, here), replace=True)
        if self.is_admin:
            adopt_unowned_graphs()  # graphs a script or the CLI stored meanwhile appear in the owner's list
        return None

    @rx.event
    @requires("public")
    def load_account(self) -> None:
        """on_load of pages open to everyone that still greet a signed-in person (the invitation page)."""
        self._load_account()

    @rx.event
    @requires("public")
    def load_public(self) -> Any:
        """on_load of the setup and sign-in pages: signed-in people go on to the page they came for (`next`)."""
        self.error = ""
        has_users = account_store().has_users()
        going_to = routes.next_page(self.router)
        if routes.page_route(self.router) == routes.SETUP and has_users:
            return rx.redirect(routes.with_next(routes.SIGN_IN, going_to), replace=True)
        if routes.page_route(self.router) == routes.SIGN_IN and not has_users:
            return rx.redirect(routes.with_next(routes.SETUP, going_to), replace=True)
        return rx.redirect(going_to, replace=True) if self._load_account() else None

    # Password hashing (argon2) takes 150-500 ms by design: every handler that hashes or verifies does it in a
    # thread, or each sign-in would hold the event loop, and with it every run, for that long.

    @rx.event
    @requires("public")
    async def create_owner(self, form: dict[str, Any]) -> Any:
        """The first visit of a fresh install: this account owns the install (instance admin)."""
        store = account_store()
        if store.has_users():
            self.error = "This install has an owner already: sign in."
            return None
        if form.get("password") != form.get("confirm"):
            self.error = "The two passwords differ."
            return None
        try:
            # Refused, like the check above, when a simultaneous sign-up made the owner since.
            await off_loop(store.create_owner, str(form.get("name", "")), str(form.get("email", "")),
                           str(form.get("password", "")))
            adopt_unowned_graphs()
        except AccountError as error:
            self.error = str(error).capitalize() + "."
            return None
        return await self._sign_in(str(form.get("email", "")), str(form.get("password", "")),
                                   routes.next_page(self.router))

    @rx.event
    @requires("public")
    async def sign_in(self, form: dict[str, Any]) -> Any:
        return await self._sign_in(str(form.get("email", "")), str(form.get("password", "")),
                                   routes.next_page(self.router))

    async def _sign_in(self, email: str, password: str, page: str) -> Any:
        try:
            token, _user = await off_loop(account_store().sign_in, email, password, address=client_address(self),
                                          seconds=HANDOFF_SECONDS)
        except AccountError as error:
            self.error = str(error).capitalize() + "."
            return None
        self.error = ""
        return start_session(self.router, token, page)

    @rx.event
    @requires("signed_in")
    def sign_out(self) -> Any:
        return self._sign_out(everywhere=False)

    @rx.event
    @requires("signed_in")
    def sign_out_everywhere(self) -> Any:
        return self._sign_out(everywhere=True)

    def _sign_out(self, *, everywhere: bool) -> Any:
        """End the session (or every session of the account) here, then let the sign-out route clear the cookie."""
        token = session_token(self)
        account_store().sign_out(token, everywhere=everywhere)
        forget_token(token)
        self.reset()
        return _session_route(self.router, routes.SESSION_END, {}, routes.SIGN_IN)

    @rx.event
    @requires("signed_in")
    async def change_password(self, form: dict[str, Any]) -> Any:
        user = self._signed_in_user()
        if form.get("new") != form.get("confirm"):
            self.error = "The two new passwords differ."
            return None
        try:
            await off_loop(account_store().change_password, user.id, str(form.get("current", "")),
                           str(form.get("new", "")), address=client_address(self))
        except AccountError as error:
            self.error = str(error).capitalize() + "."
            return None
        forget_token(session_token(self))
        # Every session ended: start a new one.
        return await self._sign_in(user.email, str(form.get("new", "")), routes.GRAPHS)

    @rx.event
    @requires("signed_in")
    def switch_workspace(self, workspace_id: str) -> Any:
        self.workspace_id = workspace_id
        self._load_account()
        return rx.redirect(routes.GRAPHS)


# Where Reflex's page connects its websocket when the configured backend is on this machine (Reflex's
# getBackendURL in .web/utils/state.js): the page's own host name, so the cookie lands where the websocket goes.
_SAME_HOST_NAMES = ("localhost", "0.0.0.0", "::", "0:0:0:0:0:0:0:0")


def backend_origin(page_origin: str, api_url: str | None = None) -> str:
    """The backend address the page at `page_origin` talks to, as Reflex's front end works it out from `api_url`
    (the config's by default)."""
    api, page = urlsplit(api_url or get_config().api_url), urlsplit(page_origin)
    scheme, host, port = api.scheme, api.hostname or "", api.port
    if host in _SAME_HOST_NAMES and page.hostname:
        host = page.hostname
        if page.scheme == "https":
            scheme, port = "https", None
    host = f"[{host}]" if ":" in host else host
    return f"{scheme}://{host}" + (f":{port}" if port else "")


def start_session(router: Any, token: str, page: str) -> Any:
    """Send the browser with its short session to the sign-in route, which sets the HttpOnly cookie and sends it
    on to `page`. A full page load: the websocket then reconnects with the cookie."""
    return _session_route(router, routes.SESSION_START, {"token": token}, page)


# Where Reflex's page keeps the tab's client token (getToken in .web/utils/state.js), which names the tab's state.
REFLEX_TOKEN_KEY = "token"


def _session_route(router: Any, route: str, query: dict[str, str], page: str) -> Any:
    """A full page load of one of the session routes on the backend the websocket talks to (where the cookie
    lives), which redirects on to `page`.

    The tab forgets its client token first: a session that starts or ends here starts a new state. The server
    keeps a tab's state under that token, and the page's first event (hydrate, which no access check holds)
    gets all of it: the next person signing in at this tab, or anyone at it after a sign-out, got the previous
    person's chats, runs and inspector."""
    origin = (router.headers.origin if router else "") or ""
    base = backend_origin(origin) if origin else ""  # no Origin (not a browser): the one port of `make run`
    url = f"{base}{route}?{urlencode({**query, routes.NEXT: origin + frontend_prefix() + page})}"
    return rx.call_script(f"window.sessionStorage.removeItem({json.dumps(REFLEX_TOKEN_KEY)}); "
                          f"window.location.replace({json.dumps(url)})")
