"""HTTP Request: one request (request.py builds it, fetch.py sends it), or several when paginating."""

from __future__ import annotations

import dataclasses
from typing import Any

import httpx

from nodes._helpers import get_path, is_empty, to_number
from nodeflow_app.contract import ExecutionResult, FlowContext, NodeError
from nodeflow_app.connections import HTTP_KINDS, connection_for
from nodeflow_app.files import workspace_of

from .fetch import MAX_PAGES_BYTES, MAX_TEXT_BYTES, open_response, read_body, response_headers, same_origin
from .guard import guarded_client
from .request import RequestSpec, build_request

USER_AGENT = "NodeFlow-HTTP-Request/1"
ERROR_BODY_SHOWN = 300  # characters of an error response quoted in the node's error


class HttpRequestExecutor:
    node_type = "http-request"

    async def execute(self, data: dict[str, Any], inputs: dict[str, Any], ctx: FlowContext) -> ExecutionResult:
        name = data.get("connection")
        connection = connection_for(ctx.services, name, HTTP_KINDS) if name not in (None, "") else None
        timeout = _number(data, "timeout", 30.0, 0.1, 600)
        mode = data.get("pagination") or "off"
        if mode not in ("off", "next_url", "page_number"):
            raise NodeError(f"parameter 'pagination' must be off, next_url or page_number, got {mode!r}")
        workspace = workspace_of(ctx.services)  # its stored files: the ones it may send and where it keeps more
        spec = build_request(data, connection, workspace)
        try:
            # Its body limits are its own (fetch.py: text in memory, files streamed to disk), so limit_body=False.
            async with guarded_client(timeout=timeout, follow_redirects=False, limit_body=False,
                                      headers={"User-Agent": USER_AGENT}) as client:
                call = _Caller(client, data, workspace)
                if mode == "off":
                    return ExecutionResult(outputs={"output": await call(spec)})
                pages = await (_by_next_url if mode == "next_url" else _by_page_number)(call, spec, data)
        finally:
            spec.close()
        return ExecutionResult(outputs={"output": _paginated(pages, data)})


class _Caller:
    """Sends one request and shapes its response as {status, headers, body} (the node's options applied)."""

    def __init__(self, client: httpx.AsyncClient, data: dict[str, Any], workspace: str):
        self.client, self.workspace = client, workspace
        self.follow = bool(data.get("follow_redirects", True))
        self.max_redirects = int(_number(data, "max_redirects", 5, 0, 20))
        self.format = data.get("response_format") or "auto"
        if self.format not in ("auto", "json", "text", "file"):
            raise NodeError(f"parameter 'response_format' must be auto, json, text or file, got {self.format!r}")
        errors = data.get("http_errors") or "error"
        if errors not in ("error", "output"):
            raise NodeError(f"parameter 'http_errors' must be error or output, got {errors!r}")
        self.fail_on_status = errors == "error"
        self.final_url = ""
        self.bytes_left = MAX_PAGES_BYTES  # what the pages read so far leave of the total they may hold

    async def __call__(self, spec: RequestSpec) -> dict[str, Any]:
        async with open_response(self.client, spec, follow=self.follow, max_redirects=self.max_redirects) as response:
            self.final_url = str(response.url)
            status = response.status_code
            failed = self.fail_on_status and status >= 400  # a 3xx not followed is an answer, not a failure
            body, size = await read_body(response, "text" if failed else self.format, spec.method, self.workspace,
                                         min(MAX_TEXT_BYTES, self.bytes_left))
            self.bytes_left -= size
            if failed:
                shown = (body or "")[:ERROR_BODY_SHOWN]
                raise NodeError(f"{spec.method} {response.url.copy_with(query=None)} answered {status} "
                                f"{response.reason_phrase}" + (f": {shown}" if shown else ""))
            return {"status": status, "headers": response_headers(response), "body": body}


# Pagination: each page's response is {status, headers, body}; paths point into it --------------------------

async def _by_next_url(call: _Caller, spec: RequestSpec, data: dict[str, Any]) -> list[dict[str, Any]]:
    path, pages, first = str(data.get("next_url_path") or "body.next"), [], httpx.URL(spec.url)
    for _ in range(_max_pages(data)):
        pages.append(await call(spec))
        next_url = get_path(pages[-1], path, None)
        if is_empty(next_url):
            break
        if not isinstance(next_url, str):
            raise NodeError(f"the next page's URL at {path!r} is a {type(next_url).__name__}, not text")
        try:
            url = httpx.URL(call.final_url).join(next_url)
        except httpx.InvalidURL as error:  # its own message names neither the node's setting nor the page
            raise NodeError(f"the next page's URL at {path!r} (page {len(pages)}) is not a URL: {error}") from None
        if url == httpx.URL(call.final_url):
            break  # an API pointing at the page it just served would loop until the page limit
        spec = dataclasses.replace(spec, url=str(url), query=[])  # a next URL carries its own query
        if not same_origin(url, first):  # a response must not send the credential elsewhere
            spec = dataclasses.replace(spec, auth_headers={}, auth_query=[])
    return pages


async def _by_page_number(call: _Caller, spec: RequestSpec, data: dict[str, Any]) -> list[dict[str, Any]]:
    parameter = str(data.get("page_parameter") or "").strip()
    if not parameter:
        raise NodeError("parameter 'page_parameter' is empty; name the query parameter holding the page number")
    page, pages = int(_number(data, "first_page", 1, 0, 10**9)), []
    for _ in range(_max_pages(data)):
        pages.append(await call(dataclasses.replace(spec, query=[*spec.query, (parameter, str(page))])))
        if is_empty(_items(pages[-1], data)):
            break
        page += 1
    return pages


def _items(response: dict[str, Any], data: dict[str, Any]) -> Any:
    path = str(data.get("items_path") or "").strip()
    return get_path(response, path, None) if path else response["body"]


def _paginated(pages: list[dict[str, Any]], data: dict[str, Any]) -> dict[str, Any]:
    """The last response, with every page's body in `pages` (and their items joined when an items path is set)."""
    last = pages[-1]
    if data.get("pagination") == "page_number" and len(pages) > 1 and is_empty(_items(last, data)):
        pages = pages[:-1]  # the empty page only said "no more"
    output = {**last, "pages": [page["body"] for page in pages]}
    if str(data.get("items_path") or "").strip():
        output["items"] = [item for page in pages for item in _as_list(_items(page, data))]
    return output


def _as_list(items: Any) -> list[Any]:
    return items if isinstance(items, list) else [] if items is None else [items]


def _max_pages(data: dict[str, Any]) -> int:
    return int(_number(data, "max_pages", 10, 1, 1000))


def _number(data: dict[str, Any], name: str, default: float, low: float, high: float) -> float:
    raw = data.get(name)
    number = default if raw in (None, "") else to_number(raw)
    if number is None or not low <= number <= high:
        raise NodeError(f"parameter {name!r} must be a number from {low:g} to {high:g}, got {raw!r}")
    return number


executor = HttpRequestExecutor()
