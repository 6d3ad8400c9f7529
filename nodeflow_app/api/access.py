"""The one access check of every HTTP route: caller -> user -> role in the workspace the route acts in -> decide.

Routes declare what they need with the same `@requires(...)` as event handlers (nodeflow_app.state.access),
put under the FastAPI route decorator. `authorize` is a dependency of the whole app, so it runs before every
route's endpoint: a route without a declaration is refused.

The caller is an API token (`Authorization: Bearer nf_...`, which speaks for its user in its workspace only)
or the browser's `nf_session` cookie. The workspace is the one of the route's `{graph_id}`, `{run_id}` or
`{workspace_id}`; else the one `?workspace=` names; else the token's, or a session user's personal one. A refusal is
JSON `{"detail": why}`: 401 without a valid caller, 404 "not found" outside the workspace (as the UI says),
403 for a role that is too weak or an undeclared route.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPBearer
from starlette.concurrency import run_in_threadpool

from nodeflow_app.llm.credentials import use_workspace
from nodeflow_app.runs.caller import Caller, set_caller
from nodeflow_app.state.access import Need, declared, decide, from_this_site, requires, session_cookie
from nodeflow_app.store.accounts import User

log = logging.getLogger("nodeflow.api.access")

NO_CALLER = "a valid API token is required (Authorization: Bearer nf_...)"

__all__ = ["ApiAccess", "admit", "authorize", "requires"]


@dataclass(frozen=True)
class ApiAccess:
    """Who calls the route (None for a public route without a caller), where, with which role, and how."""

    user: User | None
    workspace_id: str | None
    role: str | None
    via: str  # "token" | "session" | "none"


def route_need(request: Request) -> Need | None:
    route = request.scope.get("route")
    return declared(getattr(route, "endpoint", None))


# Declares the bearer scheme in the OpenAPI schema (the docs page's Authorize button); `resolve` reads the header.
BEARER = HTTPBearer(auto_error=False, description="An API token (nf_...) from the Workspace page.")


async def authorize(request: Request, _token: Any = Depends(BEARER)) -> ApiAccess:
    """The app-wide dependency: the request's access, decided once (a CallerFirst route, nodeflow_app/api/intake.py,
    decided it before FastAPI read the body)."""
    access = getattr(request.state, "access", None)
    return access if access is not None else await admit(request)


async def admit(request: Request) -> ApiAccess:
    """Resolve the caller, decide (HTTPException when refused), and record who starts runs from here on."""
    need = route_need(request)
    if need == "public":  # no caller to look up (webhooks authenticate themselves): no database work
        set_caller(Caller())
        request.state.access = ApiAccess(None, None, None, "none")
        return request.state.access
    access = await run_in_threadpool(resolve, request)
    decision = decide(need, access.user, access.role)
    if not decision.allowed:
        who = access.user.email if access.user else "anonymous"
        log.warning("refused %s %s for %s: %s", request.method, request.url.path, who, decision.reason)
        status = _status(need, access, decision.reason)
        if status == 401:
            raise HTTPException(401, NO_CALLER, headers={"WWW-Authenticate": "Bearer"})
        raise HTTPException(status, decision.reason)
    request.state.access = access
    user = access.user
    set_caller(Caller(user.id if user else None, user.name if user else "", access.workspace_id))
    use_workspace(access.workspace_id)  # provider keys of the token's workspace, for what it calls outside a run
    return access


def _status(need: Need | None, access: ApiAccess, reason: str) -> int:
    if need is None:
        return 403
    if access.user is None:
        return 401
    return 404 if reason == "not found" else 403


def resolve(request: Request) -> ApiAccess:
    """The caller and their role in the route's workspace (blocking: database lookups)."""
    services = request.app.state.services
    accounts = services.accounts()
    target = _route_workspace(request, services)
    bearer = _bearer(request)
    if bearer:
        token = accounts.api_caller(bearer)  # also records the token's last use
        if token is None:
            return ApiAccess(None, None, None, "token")
        workspace = token.workspace_id if target is None else target
        role = token.role if workspace == token.workspace_id else None  # a token acts in its workspace only
        return ApiAccess(token.user, workspace, role, "token")
    page = request.headers.get("origin") or request.headers.get("referer", "")
    cookie = session_cookie("; ".join(request.headers.getlist("cookie")), secure=over_https(request, page))
    from_page = from_this_site(request.headers.get("sec-fetch-site", ""), page, request.url.netloc)
    user = accounts.user_for_session(cookie) if from_page else None  # a sibling host's page sends the cookie too
    if user is None:
        return ApiAccess(None, None, None, "none")
    if target is None:  # no personal workspace (see AccountStore.personal_workspace): "", found nowhere
        personal = accounts.personal_workspace(user.id)
        target = personal.id if personal else ""
    return ApiAccess(user, target, accounts.role(user.id, target), "session")


def over_https(request: Request, page: str = "") -> bool:
    """Whether the browser is on https: the request's scheme, a proxy's X-Forwarded-Proto (the first, the client's
    side), or the page's address."""
    forwarded = request.headers.get("x-forwarded-proto", "").split(",")[0].strip().lower()
    return "https" in (request.url.scheme, forwarded, page.split(":", 1)[0].strip().lower())


def _bearer(request: Request) -> str:
    scheme, _, value = request.headers.get("authorization", "").partition(" ")
    return value.strip() if scheme.lower() == "bearer" else ""


def _route_workspace(request: Request, services: Any) -> str | None:
    """The workspace of the thing the path names, else `?workspace=`; "" when the path names nothing that
    exists (-> not found); None when nothing is named (-> the caller's default workspace)."""
    params = request.path_params
    if "workspace_id" in params:
        return str(params["workspace_id"])
    if not any(name in params for name in ("graph_id", "run_id")):
        return request.query_params.get("workspace") or None
    graph_id = params.get("graph_id")
    if graph_id is None and "run_id" in params:
        graph_id = services.launcher().store.graph_of(str(params["run_id"])) or ""
    if graph_id is None:
        return None
    return (services.graphs().workspace_of(str(graph_id)) or "") if graph_id else ""
