"""One access check before every event: session -> user -> role in the target workspace -> allowed?

Handlers declare what they need with `@requires(action)` (an attribute on the function; nothing wraps
it): "public" (anyone, e.g. signing in), "signed_in" (any account), "admin" (the instance admin: accounts and
install-wide settings), or an action of
`nodeflow_app.accounts.roles` ("view", "chat", "edit", "manage") checked against the caller's role in
the workspace the event acts in (the page's graph's, else the user's current one; see `target_workspace`).
Handlers read the resolved caller with `current()`.
`AccessMiddleware` runs the check for every event before Reflex calls the handler; an undeclared handler,
Reflex's generic `setvar`, a caller without the role, or arguments that do not fit the handler's annotations
(`event_arguments`, a forged event) is refused, logged, and answered with a toast (not the loaders of a graph page
a non-member opened: the page says "Graph not found" once).
"""

from __future__ import annotations

import contextvars
import logging
import time
from dataclasses import dataclass
from typing import Any, Callable, Literal
from urllib.parse import urlsplit

import reflex as rx
from reflex.config import get_config
from reflex.middleware import Middleware
from reflex_base.event import Event
from reflex.state import StateUpdate

from nodeflow_app.state import forget_everywhere
from nodeflow_app.state.event_arguments import argument_problem
from nodeflow_app.state.page_threads import off_loop
from nodeflow_app import routes
from nodeflow_app.accounts.roles import Action, allows
from nodeflow_app.llm.credentials import use_workspace
from nodeflow_app.runs.caller import Caller, set_caller
from nodeflow_app.store.accounts import User, account_store

log = logging.getLogger("nodeflow.access")

Need = Literal["public", "signed_in", "admin"] | Action
ACTION_ATTRIBUTE = "__nodeflow_requires__"
# Reflex's own plumbing: hydration and on-load bookkeeping carry no user data.
REFLEX_INTERNAL = frozenset({"hydrate", "hydrate_and_load", "set_is_hydrated", "on_load_internal",
                             "update_vars_internal", "handle_frontend_exception"})
SIGN_IN_FIRST = "sign in first"
SESSION_COOKIE = "nf_session"  # HttpOnly, set by the sign-in route (nodeflow_app/api/session.py)
# Its name over https: browsers take a __Host- cookie only from this very host (Secure, Path=/, no Domain), so
# another host of the site cannot plant one.
SECURE_SESSION_COOKIE = "__Host-nf_session"
SESSION_CACHE_S = 5.0  # a revoked session (or a graph moved away) is refused within this time on every worker


def requires(need: Need) -> Callable[[Callable], Callable]:
    """Declare what a handler needs; put it under `@rx.event` (it only marks the function)."""
    def mark(fn: Callable) -> Callable:
        setattr(fn, ACTION_ATTRIBUTE, need)
        return fn
    return mark


def declared(handler_fn: Callable) -> Need | None:
    return getattr(handler_fn, ACTION_ATTRIBUTE, None)


@dataclass(frozen=True)
class Access:
    """Who is calling the running handler, in which workspace, with which role (set by the middleware)."""

    user: User | None
    workspace_id: str | None
    role: str | None


_current: contextvars.ContextVar[Access] = contextvars.ContextVar("nodeflow_access", default=Access(None, None, None))


def current() -> Access:
    """The caller of the event being handled (handlers read it; background tasks inherit it)."""
    return _current.get()


@dataclass(frozen=True)
class Decision:
    allowed: bool
    reason: str = ""


def decide(need: Need | None, user: User | None, role: str | None) -> Decision:
    """The rule itself, pure: tests call it for every handler with an outsider and a viewer."""
    if need is None:
        return Decision(False, "this action declares no access rule")
    if need == "public":
        return Decision(True)
    if user is None:
        return Decision(False, SIGN_IN_FIRST)
    if need == "admin":
        return Decision(user.is_admin, "" if user.is_admin else "only the instance admin can do this")
    if need == "signed_in" or allows(role, need):
        return Decision(True)
    return Decision(False, "not found" if role is None else f"a {role} cannot do this ({need} needs more)")


class Recent:
    """What `load` answered for a key in the last `seconds` (SESSION_CACHE_S by default), per process: the editor
    sends many events, and a co-editing room pushes to many tabs (room_access keeps roles in one)."""

    def __init__(self, load: Callable[[str], Any], *, keep_none: bool, seconds: float = SESSION_CACHE_S,
                 shared_as: str = ""):
        """`shared_as`: a forget here is a forget in every process (`forget_everywhere`), under this name."""
        self._load, self._keep_none, self._seconds, self._name = load, keep_none, seconds, shared_as
        self._items: dict[str, tuple[float, Any]] = {}
        # Loads run in page threads: one that began before a `forget` (a sign-out, a graph moved) must not
        # store the answer it read before it.
        self._forgets = 0
        if shared_as:
            forget_everywhere.share(shared_as, self)

    def get(self, key: str) -> Any:
        hit = self.recent(key)
        if hit is not None:
            return hit[0]
        forgets = self._forgets
        value = self._load(key)
        if (value is not None or self._keep_none) and forgets == self._forgets:
            if len(self._items) > 10_000:
                self._items.clear()
            self._items[key] = (time.monotonic(), value)
        return value

    def recent(self, key: str) -> tuple[Any] | None:
        """(the answer,) when one is kept from the last seconds; None: `get` would read it (a database read)."""
        hit = self._items.get(key)
        return (hit[1],) if hit and time.monotonic() - hit[0] < self._seconds else None

    def forget(self, key: str) -> None:
        self.forget_here(key)
        if self._name:
            forget_everywhere.tell_others(self._name, key)

    def forget_here(self, key: str) -> None:
        self._forgets += 1
        self._items.pop(key, None)

    def forget_published(self, digest: str) -> None:
        """Another process forgot the key whose `forget_everywhere.digest` this is (rare: a few thousand hashes at
        most, on the listener's thread)."""
        self._forgets += 1
        for key in [key for key in list(self._items) if forget_everywhere.digest(key) == digest]:
            self._items.pop(key, None)

    def clear(self) -> None:
        self._forgets += 1
        self._items.clear()


_sessions = Recent(lambda token: account_store().user_for_session(token), keep_none=True, shared_as="session")


def user_for_token(token: str) -> User | None:
    """The account behind a session token (a signed-out token is refused on every worker within the cache)."""
    return _sessions.get(token) if token else None


def kept_user(token: str) -> tuple[User | None] | None:
    """(`user_for_token(token)`,) when the answer is kept from the last seconds; None: finding it reads the database."""
    return _sessions.recent(token) if token else (None,)


def forget_token(token: str) -> None:
    _sessions.forget(token)


def session_token(state: Any) -> str:
    """The tab's session token: the cookie its browser sent when the websocket connected. Reflex reads request
    headers on the server only; the page's scripts cannot read the cookie (HttpOnly). "" for a websocket opened
    by a page of another host of the site (`from_this_site`)."""
    return token_in(*session_headers(state.router.headers)) if state.router else ""


def session_headers(headers: Any) -> tuple[str, str, str, str]:
    """What of a tab's request headers (Reflex's HeaderData) decides its session token: (Cookie, Sec-Fetch-Site,
    Origin, Host), the arguments of `token_in`."""
    return headers.cookie, headers.raw_headers.get("sec-fetch-site", ""), headers.origin, headers.host


def token_in(cookie: str, fetch_site: str, origin: str, host: str) -> str:
    """The session token request headers carry (see `session_token`)."""
    if not from_this_site(fetch_site, origin, host):
        return ""
    return session_cookie(cookie, secure=origin.lower().startswith("https:"))


def client_address(state: Any) -> str | None:
    """The IP address the tab's websocket came from, for the sign-in limits. Reflex takes it from the connection,
    and from X-Forwarded-For only behind as many proxies as its `trusted_proxy_hops` says
    (REFLEX_TRUSTED_PROXY_HOPS, 0 by default: any client can write that header)."""
    return (state.router.session.client_ip or None) if state.router else None


def from_this_site(fetch_site: str, source: str, host: str) -> bool:
    """Whether a browser request that carries the session cookie comes from NodeFlow's own pages, by its Fetch
    Metadata (`Sec-Fetch-Site`) and `source`, its Origin or Referer. Another site's requests carry no cookie
    (SameSite=Strict), but another host of the same site (x.example.com beside nodeflow.example.com) sends it:
    refused, unless it is this `host` on another port (`make dev`) or the configured front end. Clients that send
    no Sec-Fetch-Site are no browser to trick."""
    if fetch_site in ("", "same-origin", "none"):
        return True
    return fetch_site == "same-site" and nodeflow_address(source, host)


def nodeflow_address(url: str, host: str) -> bool:
    """Whether `url` is on this `host` (any port: `make dev` serves pages on another port than the backend) or on
    the configured front end (REFLEX_DEPLOY_URL); False for a URL that cannot be read."""
    try:
        hostname = urlsplit(url).hostname
        return bool(hostname) and (hostname == urlsplit(f"//{host}").hostname
                                   or url_origin(url) == url_origin(get_config().deploy_url or ""))
    except ValueError:  # e.g. "http://[x"
        return False


def frontend_prefix() -> str:
    """The prefix REFLEX_FRONTEND_PATH mounts the pages under ("/app"), or ""."""
    mounted = (get_config().frontend_path or "").strip("/")
    return f"/{mounted}" if mounted else ""


def url_origin(url: str) -> str:
    try:
        parts = urlsplit(url)
    except ValueError:
        return ""
    return f"{parts.scheme}://{parts.netloc}".lower() if parts.scheme and parts.netloc else ""


def session_cookie(header: str | None, *, secure: bool = False) -> str:
    """The session token in a Cookie header: the __Host- cookie when there is one, and over https (`secure`) only
    that one; else nf_session. "" when it holds none or several (another host of the same site can add an
    nf_session cookie for the whole site: it must not decide whose session this is)."""
    pairs = [pair.strip().partition("=") for pair in (header or "").split(";")]
    for name in (SECURE_SESSION_COOKIE,) if secure else (SECURE_SESSION_COOKIE, SESSION_COOKIE):
        values = [value.strip() for cookie, _, value in pairs if cookie == name]
        if values:
            return values[0] if len(values) == 1 else ""
    return ""


def session_cookie_name(secure: bool) -> str:
    return SECURE_SESSION_COOKIE if secure else SESSION_COOKIE


def target_workspace(graph_id: str, current_workspace: str | None) -> str | None:
    """The workspace an event acts in: the one of the page's graph (`graph_id`, from /graph/<id>...), else the
    current one."""
    return graph_workspace(graph_id) if graph_id else current_workspace or None


def _caller(token: str, graph_id: str, current_workspace: str | None,
            kept: str) -> tuple[User | None, str | None, str | None, str | None]:
    """(user, the workspace the event acts in, their role there, the workspace of the `kept` graph): database
    reads, so the middleware runs this in a page thread (the role is read for every event, a cursor move too)."""
    user = user_for_token(token)
    workspace = target_workspace(graph_id, current_workspace)
    if workspace is None and user is not None:  # an event sent before the page's guard chose one
        workspace = default_workspace(user.id)
    if user is None:
        return None, workspace, None, None
    return user, workspace, account_store().role(user.id, workspace), graph_workspace(kept) if kept else None


def default_workspace(user_id: str) -> str | None:
    """The workspace a page's guard picks for a user with none chosen yet (their first)."""
    options = account_store().workspaces(user_id)
    return options[0].id if options else None


def _workspace_of(graph_id: str) -> str | None:
    from nodeflow_app.store.graphs import graph_store

    return graph_store().workspace_of(graph_id) or adopt_unowned_graphs(graph_id)


_graph_workspaces = Recent(_workspace_of, keep_none=False, shared_as="graph workspace")


def graph_workspace(graph_id: str) -> str | None:
    """The graph's workspace; a graph rarely changes workspace (a move in this process is seen at once:
    `forget_graph`, on other workers within the cache)."""
    return _graph_workspaces.get(graph_id)


# State classes whose handlers act on a graph the tab's state keeps between events: class -> (the state class
# holding it, its attribute). The page's URL, which decides the workspace checked, comes from the browser with
# every event; the kept graph does not. So an event of such a state gets through only while the graph it acts
# on is in the workspace it was checked in (a viewer of one graph cannot borrow the URL of a graph they own).
_GRAPH_HOLDERS: dict[type, tuple[type, str]] = {}
# (state class, handler name) of handlers that choose the kept graph afresh (a dialog's opener), like a page's loader.
_GRAPH_CHOOSERS: set[tuple[type, str]] = set()


def still_checked(graph_id: str) -> bool:
    """For a background handler (`@rx.event(background=True)`), which reads the ids its state keeps only after the
    access check, once other events of the tab may have run: a page load in between changes the kept graph, so a
    check made on the caller's own graph would cover a graph of another workspace. True when `graph_id` is in
    the workspace the check allowed."""
    workspace = current().workspace_id
    return bool(graph_id) and workspace is not None and graph_workspace(graph_id) == workspace


def acts_on_graph(state_cls: type, holder: type | None = None, attribute: str = "_graph_id",
                  chosen_by: tuple[str, ...] = ()) -> None:
    """Declare that `state_cls`'s handlers act on the graph in `holder.attribute` (default: its own). The handlers
    named in `chosen_by` replace that graph without acting on it (a dialog's opener): the graph kept from before
    does not decide their check, or a dialog last opened in another workspace (or for a graph moved since) would
    never open again."""
    _GRAPH_HOLDERS[state_cls] = (holder or state_cls, attribute)
    _GRAPH_CHOOSERS.update((state_cls, name) for name in chosen_by)


async def _kept_graph(state: Any, state_cls: type) -> str:
    holder = _GRAPH_HOLDERS.get(state_cls)
    if holder is None:
        return ""
    return getattr(await state.get_state(holder[0]), holder[1]) or ""


_loaders: dict[int, set[Callable]] = {}  # per app (its pages are added at import, before any event)


def _page_loaders(app: Any) -> set[Callable]:
    """The handler functions pages run on load (they take the page's graph from its URL, and keep it)."""
    if app is None:
        return set()
    found = _loaders.get(id(app))
    if found is None:
        found = _loaders[id(app)] = set()
        for handlers in app._load_events.values():
            for handler in handlers if isinstance(handlers, (list, tuple)) else [handlers]:
                fn = getattr(handler, "fn", None) or getattr(getattr(handler, "handler", None), "fn", None)
                if fn is not None:
                    found.add(fn)
    return found


def kept_graph_workspace(graph_id: str) -> tuple[str | None] | None:
    """(`graph_workspace(graph_id)`,) when the answer is kept from the last seconds; None: finding it reads the
    database."""
    return _graph_workspaces.recent(graph_id)


def forget_graph(graph_id: str) -> None:
    _graph_workspaces.forget(graph_id)


def adopt_unowned_graphs(graph_id: str | None = None) -> str | None:
    """Graphs made outside any workspace (before accounts, by the CLI or a script) join the install owner's
    personal workspace, with the provider keys and connections stored then; the workspace of `graph_id`
    afterwards (None: no such graph)."""
    from nodeflow_app.store.graphs import graph_store

    owner_workspace = account_store().owner_workspace_id()
    if owner_workspace:
        graph_store().adopt_unowned(owner_workspace)
        if not graph_id:  # at start and on the owner's page loads, not on every event
            adopt_unowned_credentials(owner_workspace)
    return graph_store().workspace_of(graph_id) if graph_id else owner_workspace


def adopt_unowned_credentials(owner_workspace: str) -> None:
    from nodeflow_app.llm.credentials import CredentialError
    from nodeflow_app.store import connections, credentials

    try:
        for store in (credentials.default_store(), connections.default_store()):
            if store is not None:
                store.adopt(owner_workspace)
    except CredentialError as error:  # the key file is missing: they stay where they are, said in the log
        log.warning("stored credentials not moved to the owner's workspace: %s", error)


class AccessMiddleware(Middleware):
    """Runs `decide` for every event; a refusal never reaches the handler."""

    async def preprocess(self, app: Any, state: Any, event: Any) -> StateUpdate | None:
        _current.set(Access(None, None, None))
        set_caller(Caller())
        use_workspace(None)
        path, _, name = event.name.rpartition(".")
        if name in REFLEX_INTERNAL:
            return None
        try:
            state_cls = type(state).get_class_substate(path)
            handler = state_cls.event_handlers[name]
        except (KeyError, ValueError, AttributeError):
            return self._refuse(event, None, "unknown event")
        need = declared(handler.fn)
        # Checked here, after the handler is known and before it runs: a forged payload never reaches it.
        wrong = argument_problem(handler.fn, event.payload)
        if need == "public":
            return self._refuse_arguments(event, None, state_cls, name, wrong) if wrong else None
        from nodeflow_app.state.auth_state import AuthState

        auth = await state.get_state(AuthState)
        graph_id = routes.page_graph_id(state.router) if state.router else ""
        loader = handler.fn in _page_loaders(app)
        chooses = loader or (state_cls, name) in _GRAPH_CHOOSERS
        kept = "" if chooses else await _kept_graph(state, state_cls)
        user, workspace, role, kept_workspace = await off_loop(
            _caller, session_token(state), graph_id, auth.workspace_id, kept)
        decision = decide(need, user, role)
        if not decision.allowed:
            if graph_id and loader and user is not None and role is None:
                # A graph page's loader for a non-member: its `check_found` (on_load before it) shows "Graph not
                # found", so the refusal is silent; a toast per part of the page only repeated it.
                return self._refuse(event, user, decision.reason, quiet=True)
            page = routes.page_path(state.router, frontend_prefix()) if state.router else ""
            return self._refuse(event, user, decision.reason, page)
        if user is not None and kept and kept_workspace != workspace:
            return self._refuse(event, user, "not found")
        if wrong:
            return self._refuse_arguments(event, user, state_cls, name, wrong)
        _current.set(Access(user, workspace, role))
        set_caller(Caller(user.id if user else None, user.name if user else "", workspace))
        use_workspace(workspace)  # provider keys of the workspace the event acts in
        return None

    @classmethod
    def _refuse_arguments(cls, event: Any, user: User | None, state_cls: type, name: str,
                          wrong: str) -> StateUpdate:
        """Refuse an event whose arguments do not fit its handler (only a forged one: the pages send what fits)."""
        reason = f"{state_cls.__name__}.{name}: {wrong}"
        return cls._refuse(event, user, reason, text=f"Refused {reason}.")

    @staticmethod
    def _refuse(event: Any, user: User | None, reason: str, page: str = "", text: str = "",
                quiet: bool = False) -> StateUpdate:
        """The answer to a refused event (it never reaches its handler): logged, and told to the tab, by a toast
        unless `quiet` (the page itself says so) or by the sign-in page for a signed-out tab."""
        log.warning("refused %s for %s: %s", event.name, user.email if user else "anonymous", reason)
        if quiet:
            return StateUpdate()
        if user is None and reason == SIGN_IN_FIRST:  # a signed-out tab (expired, or signed out elsewhere)
            # Back to `page` afterwards, as the page's guard does (a page's other on_load events end here too).
            return StateUpdate(events=Event.from_event_type(
                rx.redirect(routes.with_next(routes.SIGN_IN, page), replace=True)))
        if not text:
            text = ("Not found: it belongs to a workspace you are not in." if reason == "not found"
                    else f"Not allowed: {reason}.")
        return StateUpdate(events=Event.from_event_type(rx.toast.error(text)))
