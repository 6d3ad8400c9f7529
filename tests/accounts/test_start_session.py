"""The sign-in event sends the browser to `/api/session/start` on the backend its websocket talks to (where the
HttpOnly cookie must land), worked out as Reflex's front end does (getBackendURL in .web/utils/state.js)."""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlsplit

import pytest

from nodeflow_app.state.auth_state import backend_origin, start_session
from reflex.istate.data import RouterData


@pytest.mark.parametrize("page, api_url, backend", [
    ("http://127.0.0.1:3000", "http://localhost:3000", "http://127.0.0.1:3000"),  # `make run`: one port
    ("http://127.0.0.1:3000", "http://localhost:8000", "http://127.0.0.1:8000"),  # `make dev`: two ports
    ("http://localhost:3000", "http://0.0.0.0:8000", "http://localhost:8000"),
    ("https://nodeflow.example", "http://localhost:8000", "https://nodeflow.example"),  # behind a TLS proxy
    ("http://[::1]:3000", "http://localhost:8000", "http://[::1]:8000"),
    ("https://app.example", "https://api.example:8443", "https://api.example:8443"),  # a backend elsewhere
])
def test_the_backend_is_the_one_the_websocket_reaches(page, api_url, backend):
    assert backend_origin(page, api_url) == backend


def test_the_browser_goes_to_the_start_route_with_its_short_session_and_the_page_to_return_to():
    router = RouterData.from_router_data({"pathname": "/signin", "asPath": "/signin", "query": {},
                                         "headers": {"origin": "http://127.0.0.1:3000"}})
    script = dict((name._js_expr, value) for name, value in start_session(router, "short-token", "/").args)[
        "javascript_code"]._var_value
    url = json.loads(script.partition("window.location.replace(")[2].removesuffix(")"))
    parts = urlsplit(url)
    assert parts.path == "/api/session/start" and parts.hostname == "127.0.0.1"
    assert parse_qs(parts.query) == {"token": ["short-token"], "next": ["http://127.0.0.1:3000/"]}
