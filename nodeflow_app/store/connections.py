"""Named connections (HTTP and database credentials) of a workspace, encrypted at rest.

A connection is `(workspace_id, name) -> kind + fields`. Graphs hold only the name; executors resolve it
with `connection_for(services, name, kinds)`, so no secret ever enters graph data, run records or the browser.
The Fernet key is the provider credentials' key (nodeflow_app/llm/credentials.py): one key for every secret.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nodeflow_app.contract import NodeError
from nodeflow_app.llm.credentials import SECRET_KEY_ENV, CredentialError, key_file, load_key
from nodeflow_app.settings import db_url

DEFAULT_WORKSPACE = "default"
SERVICE = "connections"  # the key executors read from ctx.services (a ConnectionStore); absent: the app's database
WORKSPACE_SERVICE = "workspace_id"

# Each kind's fields: required first, then optional ones.
KINDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "http_bearer": (("token",), ()),
    "http_basic": (("username", "password"), ()),
    "http_header": (("header", "value"), ()),
    "http_query": (("param", "value"), ()),
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
    return {name: str(value) for name, value in fields.items() if value not in (None, "")}


class ConnectionStore:
    """Connections on `engine`, encrypted with `key` (default: the credentials' Fernet key)."""

    def __init__(self, engine: Any, key: Any = None):
        self.engine = engine
        self._key = key

    def set(self, name: str, kind: str, fields: dict[str, Any], workspace_id: str = DEFAULT_WORKSPACE) -> None:
        """Store (or replace) the connection `name` of `workspace_id`."""
        from nodeflow_app.store.models import ConnectionRow

        name = name.strip()
        if not name:
            raise CredentialError("a connection needs a name")
        plain = {"workspace_id": workspace_id, "name": name, "kind": kind, "fields": check_fields(kind, fields)}
        token = self._fernet(create=True).encrypt(json.dumps(plain).encode()).decode("ascii")
        ConnectionRow.__table__.create(self.engine, checkfirst=True)
        with self._session() as session:
            session.merge(ConnectionRow(workspace_id=workspace_id, name=name, kind=kind, secret=token,
                                        updated_at=time.time()))
            session.commit()

    def get(self, name: str, workspace_id: str = DEFAULT_WORKSPACE) -> Connection | None:
        """The decrypted connection, or None when the workspace has none by that name."""
        from cryptography.fernet import InvalidToken

        from nodeflow_app.store.models import ConnectionRow

        if not self._has_table():
            return None
        with self._session() as session:
            row = session.get(ConnectionRow, (workspace_id, name))
        if row is None:
            return None
        fernet = self._fernet(create=False)
        if fernet is None:
            raise CredentialError(f"connection {name!r} is stored but the key file {key_file()} is missing; "
                                  f"restore it, or set {SECRET_KEY_ENV} to the key it was stored with")
        try:
            plain = json.loads(fernet.decrypt(row.secret.encode("ascii")))
        except InvalidToken:
            raise CredentialError(f"cannot decrypt connection {name!r}: it was stored with another key; restore "
                                  f"the original key or store it again with `nodeflow connections set`") from None
        if (plain.get("workspace_id"), plain.get("name")) != (workspace_id, name):  # a token copied between rows
            raise CredentialError(f"the stored secret of connection {name!r} belongs to another connection; "
                                  "store it again with `nodeflow connections set`")
        return Connection(name, plain["kind"], plain["fields"])

    def list(self, workspace_id: str = DEFAULT_WORKSPACE) -> list[dict[str, Any]]:
        """`{name, kind, updated_at}` per connection of the workspace: never a field's value."""
        from sqlmodel import select

        from nodeflow_app.store.models import ConnectionRow

        if not self._has_table():
            return []
        with self._session() as session:
            rows = session.exec(select(ConnectionRow).where(ConnectionRow.workspace_id == workspace_id)
                                .order_by(ConnectionRow.name)).all()
            return [{"name": r.name, "kind": r.kind, "updated_at": r.updated_at} for r in rows]

    def delete(self, name: str, workspace_id: str = DEFAULT_WORKSPACE) -> bool:
        """Remove the connection; False when there was none."""
        from nodeflow_app.store.models import ConnectionRow

        if not self._has_table():
            return False
        with self._session() as session:
            row = session.get(ConnectionRow, (workspace_id, name))
            if row is None:
                return False
            session.delete(row)
            session.commit()
            return True

    def _fernet(self, *, create: bool) -> Any:
        if self._key is None:
            return load_key(create=create)  # read each time: the key may be restored or changed meanwhile
        if not hasattr(self._key, "decrypt"):
            from cryptography.fernet import Fernet

            self._key = Fernet(self._key)
        return self._key

    def _has_table(self) -> bool:
        from sqlalchemy import inspect

        return inspect(self.engine).has_table("connection")

    def _session(self) -> Any:
        from nodeflow_app.store.db import session

        return session(self.engine)


# The app's store, and what executors call -------------------------------------------------------------

_stores: dict[str, ConnectionStore] = {}


def default_store(*, create: bool = False) -> ConnectionStore | None:
    """The store on the app's database; None when it is a SQLite file that does not exist and not `create`."""
    url = db_url()
    if not create and url.startswith("sqlite:///") and not Path(url.removeprefix("sqlite:///")).exists():
        return None
    if url not in _stores:
        from nodeflow_app.store.db import make_engine

        _stores[url] = ConnectionStore(make_engine(url))
    return _stores[url]


def connection_for(services: dict[str, Any], name: Any, kinds: tuple[str, ...]) -> Connection:
    """The connection `name` of the run's workspace, of one of `kinds`; a NodeError says what is wrong."""
    from sqlalchemy.exc import SQLAlchemyError

    if not isinstance(name, str) or not name.strip():
        raise NodeError("parameter 'connection' is empty; give the name of a stored connection")
    name = name.strip()
    workspace_id = services.get(WORKSPACE_SERVICE) or DEFAULT_WORKSPACE
    store = services.get(SERVICE) or default_store()
    try:
        connection = store.get(name, workspace_id) if store is not None else None
    except SQLAlchemyError as error:
        raise NodeError(f"cannot read the connections: {type(error).__name__}: {str(error).splitlines()[0]}") from None
    if connection is None:
        raise NodeError(f"no connection named {name!r} in workspace {workspace_id!r}; add one with "
                        f"`nodeflow connections set {name} KIND FIELD=VALUE ...`")
    if connection.kind not in kinds:
        raise NodeError(f"connection {name!r} is a {connection.kind} connection; this node needs one of: "
                        f"{', '.join(kinds)}")
    return connection
