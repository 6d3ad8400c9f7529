"""`/api/session/start` and `/end`: where a browser's sign-in ends and its sign-out too, so the session lives in an
HttpOnly cookie.

A Reflex event cannot set an HttpOnly cookie (Reflex's cookies are written by the page's JavaScript, so any script
on the page could read them). Signing in therefore happens in two steps: the sign-in event checks the password
and makes a session that lasts a minute (HANDOFF_SECONDS), then sends the browser here with it; this route swaps
it for a full session (the short one ends: it works once), sets that as an HttpOnly, SameSite=Strict cookie and
redirects to the page the person was going to. The websocket and the API read the cookie from request headers.

`/end` (after the sign-out event ended the session) ends the session the cookie names, if any, clears the cookie
and goes on to `next`. The cookie is SameSite=Strict, so another site's link reaches it without one.

Refused: a start or an end from another site (`Sec-Fetch-Site`: a page elsewhere signing the browser into the attacker's
account), a session that is not a sign-in's one-minute one, and a `next` outside NodeFlow (an open redirect).
"""

from __future__ import annotations

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from nodeflow_app import routes
from nodeflow_app.api.access import over_https, requires
from nodeflow_app.state.access import (
    SESSION_COOKIE, from_this_site, nodeflow_address, session_cookie, session_cookie_name,
)
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
    session = await run_in_threadpool(request.app.state.services.accounts().claim_handoff, token)
    answer = _redirect(target)  # without a session (expired, used, never issued) the page sends on to sign-in
    if session is not None:  # the page's own scheme (its address as the browser gave it), as the readers see it
        secure = _page_on_https(request, next_page)
        answer.set_cookie(session_cookie_name(secure), session, max_age=SESSION_SECONDS, path="/", httponly=True,
                          samesite="strict", secure=secure)
    return answer


@router.get(routes.SESSION_END)
@requires("public")  # ends the session its own cookie names, nothing else
async def end_session(request: Request, next_page: str = Query(routes.SIGN_IN, alias="next")) -> Response:
    if not _from_nodeflow(request):
        return JSONResponse({"detail": "sign out from NodeFlow's own pages, not from another site"}, 403)
    target = safe_next(next_page, request)
    secure = _page_on_https(request, next_page)
    token = session_cookie("; ".join(request.headers.getlist("cookie")), secure=secure)
    if token:
        await run_in_threadpool(request.app.state.services.accounts().sign_out, token)
    answer = _redirect(target)
    for name in {session_cookie_name(secure), SESSION_COOKIE}:  # one from before https, too
        answer.delete_cookie(name, path="/", httponly=True, samesite="strict", secure=name != SESSION_COOKIE)
    return answer


def _page_on_https(request: Request, next_page: str) -> bool:
    """Whether the page is on https, by its own address (`next`, else the Referer) as the cookie's readers see it."""
    return over_https(request, next_page) or over_https(request, request.headers.get("referer", ""))


def _from_nodeflow(request: Request) -> bool:
    """The browser came from a NodeFlow page (or the address was typed in): see `from_this_site`. A navigation
    sends no Origin; its Referer names the page."""
    return from_this_site(request.headers.get("sec-fetch-site", ""), request.headers.get("referer", ""),
                          request.url.netloc)


def safe_next(next_url: str, request: Request) -> str:
    """`next` when it is a page of NodeFlow: a path, or an address on this host (any port: `make dev` serves
    pages on another port than this route) or on the configured front end; else the graph list."""
    if routes.local_page(next_url):
        return next_url
    web = next_url.split(":", 1)[0].lower() in ("http", "https") and not routes.UNSAFE_IN_URL.search(next_url)
    return next_url if web and nodeflow_address(next_url, request.url.netloc) else routes.GRAPHS


def _redirect(url: str) -> RedirectResponse:
    # The URL held a session: no cache keeps it and no next page learns it.
    return RedirectResponse(url, 303, headers={"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"})
