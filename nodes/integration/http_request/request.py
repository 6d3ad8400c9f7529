"""The request a node's parameters describe: URL with query, headers, body and the connection's authentication."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import Any

import httpx

from nodes._helpers import header_problem, key_value_pairs, to_text
from nodeflow_app.contract import NodeError
from nodeflow_app.files import DEFAULT_WORKSPACE, file_path
from nodeflow_app.connections import Connection, check_host
from nodeflow_app.secret_values import reveal_set

from .definition import METHODS


@dataclass(slots=True)
class RequestSpec:
    """What to send; `auth_headers` are dropped when a redirect leaves the first origin, `auth_query` is not re-sent."""

    method: str
    url: str
    query: list[tuple[str, str]] = field(default_factory=list)
    auth_query: list[tuple[str, str]] = field(default_factory=list, repr=False)  # secrets: never in a repr
    headers: dict[str, str] = field(default_factory=dict)
    auth_headers: dict[str, str] = field(default_factory=dict, repr=False)
    content: bytes | None = None
    files: list[tuple[str, tuple[Any, ...]]] | None = None  # multipart parts: (field, (file name, content, type))
    form: list[tuple[str, str]] | None = None

    def close(self) -> None:
        """Close the multipart file, which is streamed from the store rather than read into memory."""
        for _field, (_name, content, *_type) in self.files or []:
            if hasattr(content, "close"):
                content.close()


def build_request(data: dict[str, Any], connection: Connection | None,
                  workspace: str = DEFAULT_WORKSPACE) -> RequestSpec:
    method = str(data.get("method") or "GET").upper()
    if method not in METHODS:
        raise NodeError(f"parameter 'method' must be one of {', '.join(METHODS)}, got {method!r}")
    url = data.get("url")
    if not isinstance(url, str) or not url.strip():
        raise NodeError("parameter 'url' is empty; give an http:// or https:// URL")
    try:
        httpx.URL(url.strip())
    except (httpx.InvalidURL, ValueError) as error:
        raise NodeError(f"parameter 'url' is not a URL ({error}): {url.strip()[:200]!r}") from None
    spec = RequestSpec(method=method, url=url.strip(),
                       query=[(name, to_text(value)) for name, value in key_value_pairs(data.get("query"), "query")],
                       headers={name.strip(): to_text(value)
                                for name, value in key_value_pairs(data.get("headers"), "headers")})
    _add_body(spec, data, workspace)
    _add_secret_headers(spec, data)
    if connection is not None:
        _authenticate(spec, connection)
    _refuse_ambiguous_headers(spec)
    _refuse_unsendable_headers(spec)
    return spec


def _refuse_unsendable_headers(spec: RequestSpec) -> None:
    """Headers HTTP cannot carry, refused by name: httpx's own error quotes the value, a secret's too."""
    rows = [(name, value, "header") for name, value in spec.headers.items()]
    rows += [(name, value, "the secret header or connection's header") for name, value in spec.auth_headers.items()]
    for name, value, kind in rows:
        if problem := header_problem(name, value):
            raise NodeError(f"{kind} {name[:80]!r}: {problem}")


def _refuse_ambiguous_headers(spec: RequestSpec) -> None:
    """Headers that would let a secret reach someone else, or leave the server to pick one of two values."""
    if (spec.auth_headers or spec.auth_query) and any(
            name.strip().lower() == "host" for name in [*spec.headers, *spec.auth_headers]):
        # It would pick another site behind the same address (a shared front), which would get the secret.
        raise NodeError("a Host header cannot be sent with a connection or secret headers: they go only to the "
                        "URL's host")
    twice = sorted({n.strip().lower() for n in spec.headers} & {n.strip().lower() for n in spec.auth_headers})
    if twice:  # both would be sent, and which one the server reads is its choice
        raise NodeError(f"header {twice[0]} is set both in Headers and by the secret headers or the connection; "
                        "keep one")


def _add_secret_headers(spec: RequestSpec, data: dict[str, Any]) -> None:
    """Each revealed only for the origin it was sealed for; like a connection's, dropped when a redirect or a
    next page leaves that origin (they travel as `auth_headers`)."""
    for name, value in key_value_pairs(data.get("secret_headers"), "secret_headers"):
        name = name.strip()
        if not name:
            raise NodeError("a secret header has a value but no name")
        _add_auth_header(spec, name, to_text(reveal_set(value, f"secret header {name}", url=spec.url)))


def _add_body(spec: RequestSpec, data: dict[str, Any], workspace: str) -> None:
    kind = data.get("body_type") or "none"
    if kind == "none":
        return
    if kind == "json":
        try:
            spec.content = json.dumps(data.get("json_body"), ensure_ascii=False, allow_nan=False).encode()
        except ValueError as error:
            raise NodeError(f"parameter 'json_body' cannot be sent as JSON: {error}") from None
        _default_header(spec, "Content-Type", "application/json")
    elif kind == "text":
        spec.content = to_text(data.get("text_body")).encode()
        _default_header(spec, "Content-Type", str(data.get("content_type") or "text/plain"))
    elif kind == "form":
        spec.form = [(name, to_text(value)) for name, value in key_value_pairs(data.get("form"), "form")]
    elif kind == "multipart":
        spec.form = [(name, to_text(value)) for name, value in key_value_pairs(data.get("form"), "form")]
        spec.files = _multipart_file(data, workspace)
        if not spec.files:  # httpx sends fields alone url-encoded: as parts without a file name they go multipart
            spec.files, spec.form = [(name, (None, value)) for name, value in spec.form], None
    else:
        raise NodeError(f"parameter 'body_type' must be none, json, form, multipart or text, got {kind!r}")


def _multipart_file(data: dict[str, Any], workspace: str) -> list[tuple[str, tuple[Any, ...]]] | None:
    reference = data.get("file")
    if reference in (None, "", {}):
        return None
    path = file_path(reference, "parameter 'file'", workspace)
    name = reference.get("name") if isinstance(reference, dict) else None
    content_type = reference.get("content_type") if isinstance(reference, dict) else None
    field_name = str(data.get("file_field") or "file")
    return [(field_name, (name or path.name, path.open("rb"), content_type or "application/octet-stream"))]


def _default_header(spec: RequestSpec, name: str, value: str) -> None:
    if not any(key.lower() == name.lower() for key in spec.headers):
        spec.headers[name] = value


def _authenticate(spec: RequestSpec, connection: Connection) -> None:
    try:
        url = httpx.URL(spec.url)
        host = url.raw_host.decode("ascii")  # httpx's reading (IDNA as xn--): where it goes
    except (httpx.InvalidURL, UnicodeDecodeError):
        host = ""
    if not host:
        raise NodeError(f"only http:// and https:// URLs with a host can be reached, got {spec.url[:200]!r}")
    check_host(connection, host, url.scheme)  # before anything of the connection is put on the request
    fields = connection.fields
    if connection.kind == "http_bearer":
        _add_auth_header(spec, "Authorization", f"Bearer {fields['token']}", from_connection=True)
    elif connection.kind == "http_basic":
        pair = base64.b64encode(f"{fields['username']}:{fields['password']}".encode()).decode("ascii")
        _add_auth_header(spec, "Authorization", f"Basic {pair}", from_connection=True)
    elif connection.kind == "http_header":
        _add_auth_header(spec, fields["header"], fields["value"], from_connection=True)
    elif connection.kind == "http_query":
        spec.auth_query.append((fields["param"], fields["value"]))


def _add_auth_header(spec: RequestSpec, name: str, value: str, *, from_connection: bool = False) -> None:
    """A secret header or the connection's, refused when one of that name is already there (a secret header)."""
    if any(given.lower() == name.lower() for given in spec.auth_headers):
        raise NodeError(f"header {name} is set both by a secret header and by the connection; keep one"
                        if from_connection else f"secret header {name} is given twice; keep one")
    spec.auth_headers[name] = value.strip()  # a pasted key often ends in a line break
