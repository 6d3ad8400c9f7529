"""Send a RequestSpec, following redirects by hand so each hop passes the SSRF guard; read the response.

httpx's own redirect following would connect to a hop before NodeFlow could check it, so it is off.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.message
import json
from collections.abc import AsyncIterator
from functools import partial
from typing import Any
from urllib.parse import unquote, urlsplit

import httpx

from nodeflow_app.contract import NodeError
from nodeflow_app.files import store_stream

from .guard import check_url
from .request import RequestSpec

MAX_TEXT_BYTES = 16 * 1024 * 1024  # JSON and text bodies are held in memory and travel in the graph
MAX_PAGES_BYTES = 64 * 1024 * 1024  # all the pages of one paginated call together
OFF_LOOP_BYTES = 256 * 1024  # a larger body is decoded and parsed in a thread: the event loop goes on
MAX_FILE_BYTES = 1024 * 1024 * 1024
_TEXTUAL = ("text/", "json", "xml", "javascript", "yaml", "csv", "x-www-form-urlencoded")
REDIRECTS = (301, 302, 303, 307, 308)


@contextlib.asynccontextmanager
async def open_response(client: httpx.AsyncClient, spec: RequestSpec, *, follow: bool,
                        max_redirects: int) -> AsyncIterator[httpx.Response]:
    """The final response, streamed (its body not read yet)."""
    method, url = spec.method, httpx.URL(spec.url).copy_merge_params(spec.query + spec.auth_query)
    content, form, files = spec.content, spec.form, spec.files
    headers = {**spec.headers, **spec.auth_headers}
    for hop in range(max_redirects + 1):
        await _check(url)
        request = client.build_request(method, url, headers=headers, content=content, data=_form_fields(form),
                                       files=files)
        try:
            response = await client.send(request, stream=True)
        except httpx.TimeoutException:
            raise NodeError(f"{method} {_shown(url)} timed out after {client.timeout.read:g} s") from None
        except httpx.HTTPError as error:
            raise NodeError(f"{method} {_shown(url)} failed: {error or type(error).__name__}") from None
        location = response.headers.get("location")
        if not (follow and response.status_code in REDIRECTS and location):
            try:
                yield response
            finally:
                await response.aclose()
            return
        await response.aclose()
        next_url = url.join(location)
        if not same_origin(next_url, url):
            headers = dict(spec.headers)  # the credential was meant for the first origin only
        if response.status_code == 303 or (response.status_code in (301, 302) and method == "POST"):
            method = "GET" if method != "HEAD" else method
            content = form = files = None
            headers = {k: v for k, v in headers.items() if k.lower() != "content-type"}
        url = next_url
    raise NodeError(f"more than {max_redirects} redirects, last to {_shown(url)}")


def same_origin(one: httpx.URL, other: httpx.URL) -> bool:
    return (one.scheme, one.host, one.port) == (other.scheme, other.host, other.port)


def _form_fields(form: list[tuple[str, str]] | None) -> dict[str, list[str]] | None:
    """httpx takes form fields as a dict; a name given twice sends both values."""
    if form is None:
        return None
    fields: dict[str, list[str]] = {}
    for name, value in form:
        fields.setdefault(name, []).append(value)
    return fields


async def _check(url: httpx.URL) -> None:
    try:
        await check_url(_shown(url))  # its error quotes the URL: never with a query that may hold a key
    except ValueError as error:
        raise NodeError(str(error)) from None


def _shown(url: httpx.URL) -> str:
    """The URL without its query, which may hold an API key."""
    return str(url.copy_with(query=None, fragment=None))


async def read_body(response: httpx.Response, response_format: str, method: str, workspace: str,
                    limit: int = MAX_TEXT_BYTES) -> tuple[Any, int]:
    """(the body as JSON, text or a file stored in `workspace` (its reference), as `response_format` (or the
    content type) says; the bytes of it held in memory). More than `limit` bytes of text is refused."""
    if method == "HEAD":
        return None, 0
    content_type = response.headers.get("content-type", "")
    if response_format == "auto":
        textual = not content_type or any(marker in content_type.lower() for marker in _TEXTUAL)
        response_format = "json" if "json" in content_type.lower() else "text" if textual else "file"
    if response_format == "file":
        return await store_stream(response.aiter_bytes(), _file_name(response),
                                  content_type.split(";")[0].strip() or "application/octet-stream", MAX_FILE_BYTES,
                                  workspace), 0
    raw = await _read_limited(response, limit)
    parse = partial(_parsed, raw, response.charset_encoding, response_format == "text")
    return (await asyncio.to_thread(parse) if len(raw) > OFF_LOOP_BYTES else parse()), len(raw)


def _parsed(raw: bytes, charset: str | None, as_text: bool) -> Any:
    text = _decoded(raw, charset)
    if as_text:
        return text
    if not raw.strip():
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise NodeError(f"the response is not JSON ({error.msg} at line {error.lineno}, column {error.colno}); "
                        f"choose the Text response format. It starts: {text[:120]!r}") from None
    except RecursionError:
        raise NodeError("the response's JSON is nested too deeply to read; choose the Text response format") from None


def _decoded(raw: bytes, charset: str | None) -> str:
    """The body's text in the charset its Content-Type names; without one UTF-8, else Windows-1252 (what
    browsers read unlabelled Latin-1 pages as) rather than replacement characters."""
    if charset:
        try:
            return raw.decode(charset, errors="replace")
        except LookupError:  # a charset Python does not know
            pass
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("cp1252", errors="replace")


async def _read_limited(response: httpx.Response, limit: int) -> bytes:
    body = bytearray()
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > limit:
            if limit < MAX_TEXT_BYTES:
                raise NodeError(f"the pages together are larger than {MAX_PAGES_BYTES // (1024 * 1024)} MB; lower "
                                "Max pages, or choose the File response format to store each as a file")
            raise NodeError(f"the response is larger than {MAX_TEXT_BYTES // (1024 * 1024)} MB; choose the File "
                            "response format to store it as a file")
    return bytes(body)


def _file_name(response: httpx.Response) -> str:
    disposition = response.headers.get("content-disposition")
    if disposition:
        message = email.message.Message()
        message["content-disposition"] = disposition
        name = message.get_filename()
        if name:
            return name.replace("/", "_").replace("\\", "_")
    return unquote(urlsplit(str(response.url)).path.rsplit("/", 1)[-1]) or "download"


def response_headers(response: httpx.Response) -> dict[str, str]:
    """Header names in lower case; a repeated header's values joined with ", "."""
    headers: dict[str, str] = {}
    for name, value in response.headers.multi_items():
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    return headers
