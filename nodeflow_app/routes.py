"""Every page's route in one place, and what a page's URL says."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote, urlencode

GRAPHS = "/"
EDITOR = "/graph/[graph_id]"
CHAT = "/graph/[graph_id]/chat"
SETUP = "/setup"
SIGN_IN = "/signin"
ACCOUNT = "/account"
WORKSPACE = "/workspace"
INVITE = "/invite/[code]"
KNOWLEDGE = "/knowledge"
SETTINGS = "/workspace/credentials"  # the current workspace's (its owner's)
NOT_FOUND = "404"  # Reflex's route for every address no page has
# HTTP routes, not pages: they set and clear the HttpOnly session cookie (nodeflow_app/api/session.py).
SESSION_START = "/api/session/start"
SESSION_END = "/api/session/end"
NEXT = "next"  # the sign-in and setup pages' query parameter: the page to go on to afterwards

# Browsers rewrite or drop backslashes, spaces and control characters in a URL (a backslash reads as a slash, and
# a slash, a tab and a slash as "//": another host).
UNSAFE_IN_URL = re.compile(r"[\\\x00-\x20\x7f]")


def editor_url(graph_id: str) -> str:
    return f"/graph/{graph_id}"


def run_url(graph_id: str, run_id: str) -> str:
    """The editor with `run_id` chosen in its Runs panel."""
    return f"/graph/{graph_id}?run={run_id}"


def chat_url(graph_id: str) -> str:
    return f"/graph/{graph_id}/chat"


def local_page(value: str) -> str:
    """`value` when it is a page of this site ("/graph/x?run=y"), else "": "//host", "https://...",
    "javascript:...", a backslash or a control character can lead elsewhere (an open redirect)."""
    if value.startswith("/") and not value.startswith("//") and not UNSAFE_IN_URL.search(value):
        return value
    return ""


def with_next(route: str, page: str) -> str:
    """`route` (sign-in or setup) saying to go on to `page` afterwards; the bare route for the graph list (where
    they go anyway) or a page that is not this site's."""
    page = local_page(page)
    return f"{route}?{urlencode({NEXT: page})}" if page and page != GRAPHS else route


def next_page(router: Any) -> str:
    """Where the sign-in or setup page goes on to: its `next` when that is a page of this site, else the graphs."""
    return local_page(page_args(router).get(NEXT, "")) or GRAPHS


# The page a Reflex event comes from, read off its URL. Not `router.page`: RouterData.page is deprecated (gone
# in Reflex 1.0) and its deprecation check walks the call stack on every read, which cost more than the whole
# access check on every event of the editor.

def page_args(router: Any) -> dict[str, str]:
    """The page's route arguments and query parameters: `graph_id`, `code`, `run`..."""
    url = router.url
    args = dict(url.query_parameters)
    for pattern, part in zip(router.route_id.strip("/").split("/"), url.path.strip("/").split("/")):
        if pattern.startswith("[") and pattern.endswith("]"):
            args[pattern[1:-1]] = unquote(part)
    return args


def page_graph_id(router: Any) -> str:
    """The graph the page is about (`/graph/<id>`, `/chat/<id>`), or ""."""
    return page_args(router).get("graph_id", "")


def page_path(router: Any, prefix: str = "") -> str:
    """The page's path and query as the app routes them (`/graph/x?run=y`), without the `prefix` the front end's
    pages are mounted under (`access.frontend_prefix()`)."""
    url, path = router.url, router.url.path
    if prefix and (path == prefix or path.startswith(prefix + "/")):
        path = path[len(prefix):] or "/"
    return path + (f"?{url.query}" if url.query else "")


def page_route(router: Any) -> str:
    """The route the page matched, e.g. `/graph/[graph_id]`."""
    return router.route_id


def page_origin(router: Any) -> str:
    """`https://host:port` of the page, for links people copy."""
    url = router.url
    return f"{url.scheme}://{url.netloc}" if url.netloc else ""
