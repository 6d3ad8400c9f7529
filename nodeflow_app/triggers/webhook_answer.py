"""What a Webhook's answer may carry (SPEC 6): the status code and response headers its node sets for the answer
"when the last node finishes".

The answer comes from NodeFlow's own site, where browsers hold the session cookie. A header that changed how a
browser reads it (`Content-Type: text/html` runs the graph's JSON as a page there), set a cookie (a planted
session) or sent the browser elsewhere (`Location` with a 3xx, `Refresh`) would act for NodeFlow, and one HTTP
cannot carry ends the answer in an error after the run did its work. `settings` finds them: validation and
activation refuse the graph naming each, and the answer leaves them out again (graphs activated before a rule
still run). Every webhook answer carries SAFETY_HEADERS. Pure: validation imports it without the store.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from nodes._helpers import header_problem

STARTED_BY = "webhook"  # the entry point: a Webhook's definition lists it in `started_by`
DEFAULT_STATUS = 200
# On every webhook answer: browsers never guess another type than the one sent, and a page opened at a webhook's
# address runs no script and reaches no cookie of NodeFlow's site.
SAFETY_HEADERS = {"X-Content-Type-Options": "nosniff", "Content-Security-Policy": "sandbox"}

_SET_BY_SERVER = "the server sets it (the answer is always the last node's output as JSON)"
_SET_BY_NODEFLOW = "NodeFlow sets it on every webhook answer"
_REDIRECT = "a webhook cannot send browsers elsewhere from NodeFlow's site"
# Lower-case header name -> why a webhook's node cannot set it.
REFUSED_HEADERS = {
    **dict.fromkeys(("content-type", "content-length", "content-encoding", "transfer-encoding", "connection",
                     "keep-alive", "upgrade", "trailer"), _SET_BY_SERVER),
    "set-cookie": "a webhook cannot set cookies for NodeFlow's site",
    "location": _REDIRECT,
    "refresh": _REDIRECT,
    **dict.fromkeys([name.lower() for name in SAFETY_HEADERS] + ["x-run-id"], _SET_BY_NODEFLOW),
}
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")  # tab is the one control character a header value may hold


@dataclass(frozen=True)
class Answer:
    """The status and headers to send with the last node's output, and (parameter id, why) for each setting of
    the node left out: a refused status becomes DEFAULT_STATUS, a refused header is not sent."""

    status: int
    headers: dict[str, str]
    problems: list[tuple[str, str]]


def settings(data: dict[str, Any]) -> Answer:
    """A Webhook node's answer settings (its `status_code` and `response_headers`), checked."""
    headers: dict[str, str] = {}
    problems: list[tuple[str, str]] = []
    status = data.get("status_code")
    status = DEFAULT_STATUS if status in (None, "") else status
    if problem := status_problem(status):
        problems.append(("status_code", f"status code {status!r:.40}: {problem}"))
        status = DEFAULT_STATUS
    rows = data.get("response_headers")
    rows = list(rows.items()) if isinstance(rows, dict) else rows if isinstance(rows, list) else []
    for index, row in enumerate(rows):
        if isinstance(row, dict):
            row = (row.get("name", row.get("key")), row.get("value"))
        if not isinstance(row, tuple):
            problems.append(("response_headers", f"row {index + 1} is not a header name and value"))
            continue
        name, value = str(row[0] or "").strip(), "" if row[1] is None else str(row[1]).strip()
        if not name:  # a blank row left in the editor
            continue
        if problem := _header_problem(name, value):
            problems.append(("response_headers", f"response header {name[:60]!r}: {problem}"))
        else:
            headers[name] = value
    return Answer(status, headers, problems)


def status_problem(status: Any) -> str | None:
    """Why a webhook's answer cannot have this status code, or None."""
    if isinstance(status, bool) or not isinstance(status, int):
        return "write the status code as a number (the answer's status is not computed from expressions)"
    if not 100 <= status <= 599:
        return "HTTP status codes go from 100 to 599"
    if 300 <= status < 400:
        return f"{_REDIRECT} (3xx redirects are refused)"
    if status < 200 or status in (204, 205):
        return "an answer with this status carries no body, and a webhook's answer is the last node's output"
    return None


def _header_problem(name: str, value: str) -> str | None:
    if reason := REFUSED_HEADERS.get(name.lower()):
        return f"not allowed: {reason}"
    if problem := header_problem(name, value):
        return problem
    if _CONTROL.search(value):
        return "its value holds a control character, which a header cannot carry"
    return None
