"""`/api/session/start`: a sign-in's one-minute session becomes a full one in an HttpOnly cookie, once, from
NodeFlow's own pages only, and the browser goes on to a NodeFlow page only."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from nodeflow_app.store.accounts import HANDOFF_SECONDS, SESSION_SECONDS

from .conftest import PASSWORD


def _short_session(team) -> str:
    return team.accounts.sign_in("ada@example.org", PASSWORD, seconds=HANDOFF_SECONDS)[0]


async def _start(team, token: str, next_page: str | None = None, *, base: str = "http://api.test",
                 headers: dict | None = None) -> httpx.Response:
    params = {"token": token, **({"next": next_page} if next_page is not None else {})}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=team.api), base_url=base) as client:
        return await client.get("/api/session/start", params=params, headers=headers or {})


async def _graphs(team, headers: dict, base: str = "http://api.test") -> int:
    """The status of GET /api/v1/graphs with `headers` (a session cookie, Fetch Metadata...)."""
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=team.api), base_url=base) as client:
        return (await client.get("/api/v1/graphs", headers=headers)).status_code


def test_the_short_session_becomes_a_full_one_in_an_httponly_cookie_once(team):
    short = _short_session(team)
    answer = asyncio.run(_start(team, short, "/graph/abc?run=1"))
    assert answer.status_code == 303 and answer.headers["location"] == "/graph/abc?run=1"
    assert answer.headers["cache-control"] == "no-store" and answer.headers["referrer-policy"] == "no-referrer"
    cookie = answer.headers["set-cookie"]
    attributes = {part.strip().split("=")[0].lower() for part in cookie.split(";")}
    assert {"httponly", "path", "max-age", "samesite"} <= attributes and "secure" not in attributes
    assert "samesite=strict" in cookie.lower() and f"max-age={SESSION_SECONDS}" in cookie.lower()
    full = answer.cookies["nf_session"]
    assert full != short and team.accounts.user_for_session(full).email == "ada@example.org"
    assert team.accounts.user_for_session(short) is None

    assert asyncio.run(_graphs(team, {"cookie": f"nf_session={full}"})) == 200
    again = asyncio.run(_start(team, short, "/graph/abc"))  # used: no cookie (the page's guard sends to sign-in)
    assert again.status_code == 303 and again.headers["location"] == "/graph/abc" and "set-cookie" not in again.headers


def test_a_link_holding_a_full_session_signs_nobody_in(team):
    """Someone's own 14-day session in a link (sent in a mail, written in a chat) must not sign a visitor into
    their account: only a sign-in's one-minute session is swapped."""
    full = team.sessions["owner"]
    answer = asyncio.run(_start(team, full, "/", headers={"sec-fetch-site": "none"}))
    assert answer.status_code == 303 and "set-cookie" not in answer.headers
    assert team.accounts.user_for_session(full) is not None  # and it is not spent either


def test_two_session_cookies_sign_nobody_in():
    """Another host of the site can add its own nf_session for the whole site: then nobody is signed in, rather
    than whoever's cookie the browser lists first."""
    from nodeflow_app.state.access import session_cookie

    assert session_cookie("a=1; nf_session=abc; b=2") == "abc"
    assert session_cookie("nf_session=abc; nf_session=evil") == "" and session_cookie("xnf_session=abc") == ""
    assert session_cookie(None) == "" and session_cookie("") == "" and session_cookie("nf_session") == ""


def test_over_https_only_the_host_only_cookie_counts():
    """Browsers take a __Host- cookie only from this very host: over https a planted nf_session counts for nothing,
    and a __Host- one wins over it everywhere."""
    from nodeflow_app.state.access import session_cookie

    assert session_cookie("nf_session=planted", secure=True) == ""
    assert session_cookie("nf_session=planted; __Host-nf_session=mine", secure=True) == "mine"
    assert session_cookie("nf_session=planted; __Host-nf_session=mine") == "mine"
    assert session_cookie("__Host-nf_session=a; __Host-nf_session=b", secure=True) == ""


def test_the_api_refuses_a_request_with_two_session_cookies(team):
    session = team.sessions["owner"]
    assert asyncio.run(_graphs(team, {"cookie": f"nf_session={session}"})) == 200
    assert asyncio.run(_graphs(team, {"cookie": f"nf_session={session}; nf_session=other"})) == 401


def test_a_start_from_another_site_is_refused_and_leaves_the_session_unused(team):
    short = _short_session(team)
    answer = asyncio.run(_start(team, short, "/", headers={"sec-fetch-site": "cross-site"}))
    assert answer.status_code == 403 and "another site" in answer.json()["detail"]
    assert "set-cookie" not in answer.headers
    sibling = {"sec-fetch-site": "same-site", "referer": "http://evil.api.test/"}  # another host of the site
    assert asyncio.run(_start(team, short, "/", headers=sibling)).status_code == 403
    assert asyncio.run(_start(team, short, "/", headers={"sec-fetch-site": "same-site"})).status_code == 403
    assert team.accounts.claim_handoff(short) is not None  # never spent by the refused starts
    for headers in ({"sec-fetch-site": "same-origin"}, {"sec-fetch-site": "none"}, {},  # the page, typed in, curl
                    {"sec-fetch-site": "same-site", "referer": "http://api.test:3000/signin"}):  # `make dev`
        assert asyncio.run(_start(team, _short_session(team), "/", headers=headers)).status_code == 303


@pytest.mark.parametrize("next_page, lands", [
    ("/", "/"),
    ("/workspace", "/workspace"),
    ("http://api.test:3000/graph/x", "http://api.test:3000/graph/x"),  # `make dev`: pages on another port
    ("https://evil.example/x", "/"),
    ("//evil.example/x", "/"),
    ("/\\evil.example", "/"),
    ("javascript:alert(1)", "/"),
    ("http://api.test.evil.example/", "/"),
    ("http://api.test@evil.example/", "/"),
    ("///evil.example/x", "/"),
    ("/\t/evil.example/x", "/"),
    ("/ok\n", "/"),
    (" /x", "/"),
    ("http:/evil.example", "/"),
    ("http://[x", "/"),
    ("", "/"),
])
def test_the_browser_goes_on_to_nodeflow_pages_only(team, next_page, lands):
    answer = asyncio.run(_start(team, _short_session(team), next_page))
    assert answer.status_code == 303 and answer.headers["location"] == lands


def test_an_unknown_session_sets_no_cookie(team):
    answer = asyncio.run(_start(team, "forged", "http://api.test:3000/graph/x"))
    assert answer.headers["location"] == "http://api.test:3000/graph/x" and "set-cookie" not in answer.headers


def test_a_broken_referer_is_refused_not_a_crash(team):
    headers = {"sec-fetch-site": "same-site", "referer": "http://[x"}
    assert asyncio.run(_start(team, _short_session(team), "/", headers=headers)).status_code == 403


@pytest.mark.parametrize("base, headers, next_page", [
    ("https://api.test", {}, "/"),
    ("http://api.test", {"x-forwarded-proto": "https"}, "/"),  # a proxy ends TLS
    ("http://api.test", {"x-forwarded-proto": "https, http"}, "/"),  # and another one behind it
    ("http://api.test", {}, "https://api.test/"),
    # A proxy that rewrites Host and says nothing: the page's own https address decides, as the readers see it.
    ("http://127.0.0.1:8000", {}, "https://nodeflow.example/"),
    ("http://127.0.0.1:8000", {"referer": "https://nodeflow.example/signin"}, "/"),
])
def test_the_cookie_is_secure_and_host_only_over_https(team, base, headers, next_page):
    answer = asyncio.run(_start(team, _short_session(team), next_page, base=base, headers=headers))
    cookie = answer.headers["set-cookie"]
    assert cookie.startswith("__Host-nf_session=") and "; secure" in cookie.lower() and "domain" not in cookie.lower()


def test_the_api_over_https_takes_the_host_only_cookie_only(team):
    session = team.sessions["owner"]
    assert asyncio.run(_graphs(team, {"cookie": f"__Host-nf_session={session}"}, "https://api.test")) == 200
    planted = {"cookie": f"nf_session={session}"}  # a sibling host could have planted it
    assert asyncio.run(_graphs(team, planted, "https://api.test")) == 401


async def _end(team, cookie: str | None, next_page: str = "/signin", headers: dict | None = None) -> httpx.Response:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=team.api), base_url="http://api.test") as client:
        return await client.get("/api/session/end", params={"next": next_page},
                                headers={**({"cookie": f"nf_session={cookie}"} if cookie else {}), **(headers or {})})


def test_the_sign_out_route_ends_the_session_and_clears_the_cookie(team):
    session = team.sessions["owner"]
    answer = asyncio.run(_end(team, session, headers={"sec-fetch-site": "same-origin"}))
    assert answer.status_code == 303 and answer.headers["location"] == "/signin"
    cookie = answer.headers["set-cookie"].lower()
    assert cookie.startswith("nf_session=") and "max-age=0" in cookie and "httponly" in cookie
    assert team.accounts.user_for_session(session) is None
    assert asyncio.run(_end(team, None)).status_code == 303  # no cookie (already signed out): nothing to end
    assert asyncio.run(_end(team, None, "https://evil.example/")).headers["location"] == "/"


def test_another_site_cannot_sign_anyone_out(team):
    session = team.sessions["owner"]
    answer = asyncio.run(_end(team, session, headers={"sec-fetch-site": "cross-site"}))
    assert answer.status_code == 403 and "set-cookie" not in answer.headers
    assert team.accounts.user_for_session(session) is not None


@pytest.mark.parametrize("site, source, host, allowed", [
    ("", "", "nodeflow.example", True),  # curl, an old browser: nothing to trick
    ("same-origin", "https://nodeflow.example/x", "nodeflow.example", True),
    ("none", "", "nodeflow.example", True),  # typed in, a bookmark
    ("same-site", "http://localhost:3000", "localhost:8000", True),  # `make dev`: pages on another port
    ("same-site", "https://x.example", "nodeflow.example", False),  # a sibling host of the site
    ("same-site", "", "nodeflow.example", False),
    ("same-site", "http://[x", "nodeflow.example", False),
    ("cross-site", "https://nodeflow.example", "nodeflow.example", False),
])
def test_a_request_carrying_the_cookie_counts_from_nodeflow_pages_only(site, source, host, allowed):
    from nodeflow_app.state.access import from_this_site

    assert from_this_site(site, source, host) is allowed


def test_the_api_ignores_the_cookie_a_sibling_hosts_page_sends(team):
    cookie = {"cookie": f"nf_session={team.sessions['owner']}"}
    assert asyncio.run(_graphs(team, {**cookie, "sec-fetch-site": "same-origin", "origin": "http://api.test"})) == 200
    dev = {**cookie, "sec-fetch-site": "same-site", "origin": "http://api.test:3000"}  # `make dev`: another port
    assert asyncio.run(_graphs(team, dev)) == 200
    assert asyncio.run(_graphs(team, {**cookie, "sec-fetch-site": "same-site", "origin": "http://x.api.test"})) == 401
