"""Named connections (HTTP and database credentials) as nodes see them: kinds, fields, and the lookup.

A connection is `(workspace_id, name) -> kind + fields`. Graphs hold only the name; executors resolve it
with `connection_for(services, name, kinds)`, so no secret enters graph data, run records or the browser.
The encrypted store is the services layer's (nodeflow_app/store/connections.py): this helper layer never
imports it; the store registers its lookup here (`use_lookup`) when it loads, like provider credentials.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable

from nodeflow_app.contract import NodeError
from nodeflow_app.llm.credentials import CredentialError

# Where connections stored before any account exists go (the install owner adopts them at the first start);
# runs outside any workspace (scripts, tests) look there. The CLI uses the owner's personal workspace.
DEFAULT_WORKSPACE = "default"
SERVICE = "connections"  # ctx.services key: an object with `get(name, workspace_id)`; absent: the app's store
WORKSPACE_SERVICE = "workspace_id"  # ctx.services key: the run's workspace; absent: DEFAULT_WORKSPACE

# Each kind's fields: required first, then optional ones. An HTTP connection's `hosts` says where an HTTP Request
# node may send it: without it the node refuses (a graph's editor could otherwise send the team's token to a URL of
# their own). It is optional in storage because the same kinds also check callers (a webhook's basic login).
HOSTS = "hosts"
KINDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "http_bearer": (("token",), (HOSTS,)),
    "http_basic": (("username", "password"), (HOSTS,)),
    "http_header": (("header", "value"), (HOSTS,)),
    "http_query": (("param", "value"), (HOSTS,)),
    "postgres": (("host", "database", "user"), ("port", "password")),
    "mysql": (("host", "database", "user"), ("port", "password")),
    "sqlite": (("path",), ()),
}
HTTP_KINDS = ("http_bearer", "http_basic", "http_header", "http_query")
DATABASE_KINDS = ("postgres", "mysql", "sqlite")


@dataclass(frozen=True, slots=True)
class Connection:
    name: str
    kind: str
    fields: dict[str, str]

    def __repr__(self) -> str:  # never print a secret in a log or a traceback
        return f"Connection(name={self.name!r}, kind={self.kind!r}, fields={sorted(self.fields)})"


def check_fields(kind: str, fields: dict[str, Any]) -> dict[str, str]:
    """`fields` as text, checked against `kind`; a CredentialError names what is missing or unknown."""
    if kind not in KINDS:
        raise CredentialError(f"unknown connection kind {kind!r}; use one of: {', '.join(KINDS)}")
    required, optional = KINDS[kind]
    unknown = sorted(set(fields) - set(required) - set(optional))
    if unknown:
        raise CredentialError(f"a {kind} connection has no field {', '.join(unknown)}; "
                              f"its fields are: {', '.join(required + optional)}")
    missing = [name for name in required if str(fields.get(name) or "").strip() == ""]
    if missing:
        raise CredentialError(f"a {kind} connection needs {', '.join(missing)}")
    checked = {name: str(value) for name, value in fields.items() if value not in (None, "")}
    if HOSTS in checked:
        checked[HOSTS] = ", ".join(_host_patterns(checked[HOSTS]))
    return checked


# Where an HTTP connection may be sent -----------------------------------------------------------------

_HOST_PATTERN = re.compile(r"(http://)?(\*|(\*\.)?[a-z0-9_-]+(\.[a-z0-9_-]+)*|\[?[0-9a-f:.]+\]?)")
PLAIN_HTTP = "http://"  # a hosts entry that lets the connection travel unencrypted to that host


def _host_patterns(text: str) -> list[str]:
    """`hosts` as a list: `api.example.com`, `*.example.com` (its subdomains) or `*` (any host), each over https
    only, unless written `http://api.example.com` (plain http allowed too, e.g. a service on the local network)."""
    patterns = [entry.strip().lower().rstrip(".") for entry in re.split(r"[,\s]+", text) if entry.strip()]
    for pattern in patterns:
        if not _HOST_PATTERN.fullmatch(pattern):
            raise CredentialError(f"hosts: {pattern!r} is not a host name; write host names only, separated by "
                                  "commas: api.example.com, *.example.com (its subdomains) or * (any host); "
                                  "http://host lets the connection go to that host over plain http too")
    if not patterns:
        raise CredentialError("hosts is empty; write api.example.com, *.example.com or * (any host)")
    return patterns


def check_host(connection: Connection, host: str, scheme: str = "https") -> None:
    """A NodeError unless `connection` may be sent to `host` over `scheme` (its `hosts` field)."""
    allowed = connection.fields.get(HOSTS)
    if not allowed:
        raise NodeError(f"connection {connection.name!r} does not say which hosts it may be sent to; its "
                        f"workspace's owner adds hosts (api.example.com, *.example.com, or * for any host) on "
                        f"the Credentials page or with `nodeflow connections set {connection.name} "
                        f"{connection.kind} ... hosts=api.example.com`")
    host = host.lower().rstrip(".")
    matching = [p for p in _host_patterns(allowed) if _matches(p.removeprefix(PLAIN_HTTP), host)]
    if not matching:
        raise NodeError(f"connection {connection.name!r} may be sent only to {allowed}, not to {host}; the "
                        "workspace's owner can add the host to the connection's hosts")
    if scheme.lower() != "https" and not any(p.startswith(PLAIN_HTTP) for p in matching):
        raise NodeError(f"connection {connection.name!r} goes to {host} over https only, and this URL is "
                        f"{scheme}://: use https://, or the workspace's owner adds http://{host} to the "
                        "connection's hosts to let it travel unencrypted")


def _matches(pattern: str, host: str) -> bool:
    return pattern == "*" or pattern.strip("[]") == host or (pattern.startswith("*.") and host.endswith(pattern[1:]))


# The lookup ------------------------------------------------------------------------------------------

Lookup = Callable[[str, str], "Connection | None"]  # (name, workspace_id) -> the connection or None
_lookup: Lookup | None = None


def use_lookup(lookup: Lookup) -> None:
    """Where `connection_for` finds connections when a run gives none (the store registers itself when it loads)."""
    global _lookup
    _lookup = lookup


def connection_for(services: dict[str, Any], name: Any, kinds: tuple[str, ...]) -> Connection:
    """The connection `name` of the run's workspace, of one of `kinds`; a NodeError says what is wrong."""
    if not isinstance(name, str) or not name.strip():
        raise NodeError("parameter 'connection' is empty; give the name of a stored connection")
    name = name.strip()
    workspace_id = services.get(WORKSPACE_SERVICE) or DEFAULT_WORKSPACE
    given = services.get(SERVICE)
    lookup = given.get if given is not None else _lookup
    if lookup is None:
        raise NodeError("no connection store is loaded in this process (import nodeflow_app.store)")
    connection = lookup(name, workspace_id)  # the run's workspace only: one team never uses another's
    if connection is None:
        raise NodeError(f"no connection named {name!r} in workspace {workspace_id!r}; add one with "
                        f"`nodeflow connections set {name} KIND FIELD=VALUE ... --workspace {workspace_id}`")
    if connection.kind not in kinds:
        raise NodeError(f"connection {name!r} is a {connection.kind} connection; this node needs one of: "
                        f"{', '.join(kinds)}")
    return connection
