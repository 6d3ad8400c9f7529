"""Every page's route in one place, and what a page's URL says."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

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
# HTTP routes, not pages: they set and clear the HttpOnly session cookie (nodeflow_app/api/session.py).
SESSION_START = "/api/session/start"
SESSION_END = "/api/session/end"


def editor_url(graph_id: str) -> str:
    return f"/graph/{graph_id}"


def run_url(graph_id: str, run_id: str) -> str:
    """The editor with `run_id` chosen in its Runs panel."""
    return f"/graph/{graph_id}?run={run_id}"


def chat_url(graph_id: str) -> str:
    return f"/graph/{graph_id}/chat"


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


def page_route(router: Any) -> str:
    """The route the page matched, e.g. `/graph/[graph_id]`."""
    return router.route_id


def page_origin(router: Any) -> str:
    """`https://host:port` of the page, for links people copy."""
    url = router.url
    return f"{url.scheme}://{url.netloc}" if url.netloc else ""
