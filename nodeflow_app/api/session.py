"""`/api/session/start`: where a browser's sign-in ends, so the session lives in an HttpOnly cookie.

A Reflex event cannot set an HttpOnly cookie (Reflex's cookies are written by the page's JavaScript, so any script
on the page could read them). Signing in therefore happens in two steps: the sign-in event checks the password
and makes a session that lasts a minute (HANDOFF_SECONDS), then sends the browser here with it; this route swaps
it for a full session (the short one ends: it works once), sets that as an HttpOnly, SameSite=Strict cookie and
redirects to the page the person was going to. The websocket and the API read the cookie from request headers.

Refused: a start from another site (`Sec-Fetch-Site`: a page elsewhere signing the browser into the attacker's
account), and a `next` outside NodeFlow (an open redirect). An unknown or used session goes to sign-in.
"""

from __future__ import annotations

from urllib.parse import urljoin, urlsplit

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response
from reflex.config import get_config
from starlette.concurrency import run_in_threadpool

from nodeflow_app import routes
from nodeflow_app.api.access import SESSION_COOKIE, requires
from nodeflow_app.store.accounts import SESSION_SECONDS

router = APIRouter(tags=["session"], include_in_schema=False)  # the browser's, not the API's

@router.get(routes.SESSION_START)
@requires("public")  # the session in the query is the credential
async def start_session(request: Request, token: str = Query(""),
                        next_page: str = Query(routes.GRAPHS, alias="next")) -> Response:
    if not _from_nodeflow(request):
        return JSONResponse({"detail": "a session starts from NodeFlow's own sign-in page, not from another site"},
                            403)
    target = safe_next(next_page, request)
    renewed = await run_in_threadpool(request.app.state.services.accounts().renew_session, token)
    if renewed is None:  # expired, used, or never issued
        return _redirect(urljoin(target, routes.SIGN_IN))
    answer = _redirect(target)
    answer.set_cookie(SESSION_COOKIE, renewed, max_age=SESSION_SECONDS, path="/", httponly=True,
                      samesite="strict", secure=_over_https(request, target))
    return answer


def _from_nodeflow(request: Request) -> bool:
    """The browser came from a NodeFlow page (or the address was typed in). Another site's page is refused, and
    so is a sibling host of the same site (`Sec-Fetch-Site: same-site`) unless it is this host on another port
    (`make dev`) or the configured front end. Clients that send no Sec-Fetch-Site are no browsers to trick."""
    site = request.headers.get("sec-fetch-site", "")
    if site in ("", "same-origin", "none"):
        return True
    if site != "same-site":
        return False
    referer = request.headers.get("referer", "")
    return bool(referer) and (urlsplit(referer).hostname == request.url.hostname
                              or _origin(referer) == _origin(get_config().deploy_url or ""))


def _over_https(request: Request, target: str) -> bool:
    """Secure cookie when the browser is on https (also behind a proxy that ends TLS)."""
    return "https" in (request.url.scheme, request.headers.get("x-forwarded-proto", ""), urlsplit(target).scheme)


def safe_next(next_url: str, request: Request) -> str:
    """`next` when it is a page of NodeFlow: a path, or an address on this host (any port: `make dev` serves
    pages on another port than this route) or on the configured front end; else the graph list."""
    parts = urlsplit(next_url)
    if not parts.scheme and not parts.netloc and next_url.startswith("/") and "\\" not in next_url:
        return next_url
    if parts.scheme in ("http", "https") and parts.hostname and "\\" not in next_url:
        if parts.hostname == request.url.hostname or _origin(next_url) == _origin(get_config().deploy_url or ""):
            return next_url
    return routes.GRAPHS


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower() if parts.scheme and parts.netloc else ""


def _redirect(url: str) -> RedirectResponse:
    # The URL held a session: no cache keeps it and no next page learns it.
    return RedirectResponse(url, 303, headers={"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"})
