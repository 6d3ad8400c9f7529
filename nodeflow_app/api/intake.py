"""How the /api/v1 routes take a request: the caller first, then at most the API's body limit, then FastAPI's
parsing, whose failures are a 422 naming why.

FastAPI reads and parses a route's body before any dependency runs, the app-wide `authorize` included: an
anonymous caller could make the server read and parse a body of any size before its 401. A CallerFirst route
runs `admit` (nodeflow_app/api/access.py) before it reads a byte, then reads the body up to
NODEFLOW_API_MAX_BODY_MB (413 past it). JSON that Python cannot hold (nested too deep, a number of thousands of
digits, bytes that are not UTF-8) is FastAPI's vague 400 "There was an error parsing the body": a 422 here, with a
`detail` list like any body that does not validate (docs/api.md). `body_problems` words every such 422: broken JSON
says what is wrong and at which line and column, not FastAPI's "JSON decode error" at a character offset.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import HTTPException, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import Message, Receive

from nodeflow_app.api.access import admit
from nodeflow_app.runtime.values import MAX_DEPTH

MAX_BODY_ENV = "NODEFLOW_API_MAX_BODY_MB"
DEFAULT_MAX_BODY_MB = 10
MB = 1024 * 1024


def max_body_bytes() -> int:
    """NODEFLOW_API_MAX_BODY_MB in bytes (default 10 MB); ValueError naming the variable when it is no number."""
    raw = os.environ.get(MAX_BODY_ENV, "").strip()
    try:
        megabytes = float(raw) if raw else DEFAULT_MAX_BODY_MB
    except ValueError:
        megabytes = 0
    if not megabytes > 0:
        raise ValueError(f"{MAX_BODY_ENV} must be a number of megabytes above 0, not {raw!r}")
    return int(megabytes * MB)


def too_large(limit: int) -> str:
    return f"the request body is larger than the API's limit of {limit / MB:g} MB ({MAX_BODY_ENV})"


class CallerFirst(APIRoute):
    """An API route that admits the caller before it reads the body, and reads at most the app's `max_body`."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handle = super().get_route_handler()

        async def caller_first(request: Request) -> Response:
            await admit(request)
            limit = request.app.state.max_body
            announced = request.headers.get("content-length", "")
            if announced.isdigit() and int(announced) > limit:
                raise HTTPException(413, too_large(limit))
            try:
                return await handle(Request(request.scope, _limited(request.receive, limit)))
            except StarletteHTTPException as error:  # FastAPI's own is Starlette's
                if error.status_code == 400 and isinstance(error.__cause__, (RecursionError, ValueError)):
                    raise RequestValidationError([{"type": "json_invalid", "loc": ("body",), "input": {},
                                                   "msg": _unreadable(error.__cause__)}]) from None
                raise

        return caller_first


def _limited(receive: Receive, limit: int) -> Receive:
    """`receive`, refusing with 413 as soon as the body passes `limit` (a body sent without its length too)."""
    size = 0

    async def receive_limited() -> Message:
        nonlocal size
        message = await receive()
        if message["type"] == "http.request":
            size += len(message.get("body", b""))
            if size > limit:
                raise HTTPException(413, too_large(limit))
        return message

    return receive_limited


def body_problems(error: RequestValidationError) -> list[dict[str, Any]]:
    """Each problem of a request that does not validate as {loc, msg, type}, without echoing the value: FastAPI's
    own answer quotes it, and a NaN or a lone surrogate in it turned the 422 into a 500."""
    problems = []
    for item in error.errors():
        loc = [part if isinstance(part, int) else str(part) for part in item.get("loc", ())]
        msg, kind = str(item.get("msg", "")), str(item.get("type", ""))
        if kind == "json_invalid" and loc[1:] and isinstance(loc[1], int):  # FastAPI's: ("body", offset)
            loc, msg = ["body"], _broken_json(str(error.body or ""), loc[1], str((item.get("ctx") or {}).get("error")))
        elif kind == "extra_forbidden":  # pydantic's "Extra inputs are not permitted": a misspelt field, most likely
            msg = f"unknown field '{loc[-1]}'"
        problems.append({"loc": loc, "msg": msg, "type": kind})
    return problems


def _broken_json(text: str, offset: int, why: str) -> str:
    """Where and why the body is not JSON, as an editor counts: 'Expecting value at line 2, column 7'."""
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return f"the body is not valid JSON: {why} at line {line}, column {column}"


def _unreadable(error: Exception) -> str:
    """Why Python could not read the JSON body, in the words of a 422."""
    if isinstance(error, RecursionError):
        return f"the JSON is nested too deeply (a run carries at most {MAX_DEPTH} levels)"
    if isinstance(error, UnicodeDecodeError):
        return "the body is not UTF-8 text"
    if "digits" in str(error):  # int(): "Exceeds the limit (4300 digits) for integer string conversion"
        return "a whole number of over 4,300 digits is not valid JSON here"
    return f"the JSON cannot be read: {error}"
