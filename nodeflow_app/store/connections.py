"""The connection store: named HTTP and database connections in the app database, encrypted at rest.

Kinds, fields and the lookup nodes use are nodeflow_app/connections.py (helpers); loading this module
registers `lookup` there (the store package loads it). The Fernet key is the provider credentials' key
(nodeflow_app/llm/credentials.py): one key for every secret. Nothing here runs at import but that registration.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from nodeflow_app import connections
from nodeflow_app.connections import DEFAULT_WORKSPACE, Connection, check_fields
from nodeflow_app.contract import NodeError
from nodeflow_app.llm.credentials import SECRET_KEY_ENV, CredentialError, key_file, load_key
from nodeflow_app.settings import db_url
from nodeflow_app.store.db import create_all


# 2: stored since only the instance admin (the Settings page) or the server's operator (the CLI) may store a
# SQLite connection; one of format 1 may have been stored by any workspace owner, so it is not opened.
FORMAT = 2


class StaleConnection(CredentialError):
    """A connection of an older format that is no longer opened; the message says who must store it again."""


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
        plain = {"workspace_id": workspace_id, "name": name, "kind": kind, "fields": check_fields(kind, fields),
                 "format": FORMAT}
        token = self._fernet(create=True).encrypt(json.dumps(plain).encode()).decode("ascii")
        create_all(self.engine)  # every table at the newest schema (migrates an older database)
        with self._session() as session:
            session.merge(ConnectionRow(workspace_id=workspace_id, name=name, kind=kind, secret=token,
                                        updated_at=time.time()))
            session.commit()

    def get(self, name: str, workspace_id: str = DEFAULT_WORKSPACE) -> Connection | None:
        """The decrypted connection, or None when the workspace has none by that name."""
        plain = self._read(name, workspace_id)
        if plain is None:
            return None
        if plain["kind"] == "sqlite" and plain.get("format", 1) < FORMAT:
            raise StaleConnection(f"the SQLite connection {name!r} was stored before only the instance admin could "
                                  "store one (its file lies in the data folder every workspace shares): the "
                                  "instance admin must store it again on the Settings page")
        return Connection(name, plain["kind"], plain["fields"])

    def _read(self, name: str, workspace_id: str) -> dict[str, Any] | None:
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
        return plain

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

    def adopt(self, workspace_id: str) -> int:
        """Connections stored before accounts (workspace "default") join `workspace_id` (the install owner's)
        unless it has one by that name; re-encrypted, since a token names its workspace. How many moved."""
        moved = 0
        for row in self.list(DEFAULT_WORKSPACE):
            # Stored before accounts, by whoever ran the install then: kept whatever their format.
            plain = self._read(row["name"], DEFAULT_WORKSPACE)
            if plain is not None and self._read(row["name"], workspace_id) is None:
                self.set(row["name"], plain["kind"], plain["fields"], workspace_id)
                moved += 1
            self.delete(row["name"], DEFAULT_WORKSPACE)
        return moved

    def _fernet(self, *, create: bool) -> Any:
        if self._key is None:
            return load_key(create=create)  # read each time: the key may be restored or changed meanwhile
        if not hasattr(self._key, "decrypt"):
            from cryptography.fernet import Fernet

            self._key = Fernet(self._key)
        return self._key

    def _has_table(self) -> bool:
        from sqlalchemy import inspect

        schema = (self.engine.get_execution_options().get("schema_translate_map") or {}).get(None)
        return inspect(self.engine).has_table("connection", schema=schema)

    def _session(self) -> Any:
        from nodeflow_app.store.db import session

        return session(self.engine)


# The app's store, and the lookup it registers for nodes ---------------------------------------------

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


def lookup(name: str, workspace_id: str) -> Connection | None:
    """The connection from the app's database; a NodeError when the database cannot be read."""
    from sqlalchemy.exc import SQLAlchemyError

    store = default_store()
    try:
        return store.get(name, workspace_id) if store is not None else None
    except SQLAlchemyError as error:
        raise NodeError(f"cannot read the connections: {type(error).__name__}: {str(error).splitlines()[0]}") from None


connections.use_lookup(lookup)
