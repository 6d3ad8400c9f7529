"""The credential store: provider credentials of each workspace in the app database, encrypted with the key of
llm/credentials.py. Workspace "" holds credentials stored before accounts existed (the owner adopts them).

Loading this module registers its lookup with nodeflow_app.llm.credentials (the store package loads it), so
providers find stored credentials without the helper layer importing the store. Nothing here runs at import
but that registration: `stored(provider)` opens the default database on first use and never creates a file
or table.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from nodeflow_app.llm import credentials
from nodeflow_app.llm.credentials import (
    SECRET_KEY_ENV, Credential, CredentialError, _key_source, key_file, load_key,
)
from nodeflow_app.settings import db_url

# 1. The store ---------------------------------------------------------------------------------------

class CredentialStore:
    """Credentials by (workspace, provider) on `engine`, encrypted with `key` (default: `load_key`)."""

    def __init__(self, engine: Any, key: Any = None):
        self.engine = engine
        self._fernet = key
        self._table_ready = False

    def set(self, provider: str, api_key: str | None, base_url: str | None = None, workspace_id: str = "",
            models: tuple[str, ...] = ()) -> None:
        """Store (or replace) `provider`'s credential of `workspace_id`; `models`: what its connection test
        listed (the editor suggests them), which alone makes a row too (the install's URL and key, tested)."""
        api_key, base_url = (api_key or "").strip() or None, (base_url or "").strip() or None
        if api_key is None and base_url is None and not models:
            raise CredentialError(f"nothing to store for {provider!r}: give an API key or a base URL")
        from nodeflow_app.store.models import CredentialRow

        fields = {"provider": provider, "workspace_id": workspace_id, "api_key": api_key, "base_url": base_url}
        plain = json.dumps({**fields, "models": list(models)} if models else fields).encode()
        token = self._key(create=True).encrypt(plain).decode("ascii")
        row = CredentialRow(workspace_id=workspace_id, provider=provider, secret=token, has_api_key=api_key is not None,
                            has_base_url=base_url is not None, updated_at=time.time())
        self._create_table()
        with self._session() as session:
            session.merge(row)
            session.commit()

    def get(self, provider: str, workspace_id: str = "") -> Credential | None:
        """`(api_key, base_url)` decrypted, or None when the workspace stores nothing for `provider`."""
        plain = self._plain(provider, workspace_id)
        return Credential(plain.get("api_key"), plain.get("base_url")) if plain is not None else None

    def models(self, provider: str, workspace_id: str = "") -> tuple[str, ...]:
        """The models `provider`'s last connection test listed for the workspace (none remembered: empty)."""
        plain = self._plain(provider, workspace_id)
        return tuple(str(model) for model in (plain or {}).get("models") or ())

    def _plain(self, provider: str, workspace_id: str) -> dict[str, Any] | None:
        row = self._row(provider, workspace_id)
        if row is None:
            return None
        from cryptography.fernet import InvalidToken

        fernet = self._key(create=False)
        if fernet is None:
            raise CredentialError(f"a credential for {provider!r} is stored but the key file {key_file()} is "
                                  f"missing; restore it, or set {SECRET_KEY_ENV} to the key it was stored with")
        try:
            plain = json.loads(fernet.decrypt(row.secret.encode("ascii")))
        except InvalidToken:
            raise CredentialError(
                f"cannot decrypt the stored credential for {provider!r}: it was encrypted with another key than "
                f"{_key_source()}. Restore the original key (the key file or {SECRET_KEY_ENV}), or store it "
                f"again with `nodeflow credentials set {provider}`") from None
        # A token copied from another provider's or workspace's row (tokens made before workspaces name none).
        if plain.get("provider") != provider or plain.get("workspace_id", workspace_id) != workspace_id:
            owner = plain.get("provider") if plain.get("provider") != provider else "another workspace"
            raise CredentialError(f"the stored credential for {provider!r} belongs to {owner!r}; "
                                  f"store it again with `nodeflow credentials set {provider}`")
        return plain

    def delete(self, provider: str, workspace_id: str = "") -> bool:
        """Remove `provider`'s credential of `workspace_id`; False when there was none."""
        from nodeflow_app.store.models import CredentialRow

        if not self._has_table():
            return False
        with self._session() as session:
            row = session.get(CredentialRow, (workspace_id, provider))
            if row is None:
                return False
            session.delete(row)
            session.commit()
            return True

    def list(self, workspace_id: str = "") -> list[dict[str, Any]]:
        """`{provider, api_key, base_url, updated_at}` per credential of the workspace: whether each field is set,
        never its value."""
        from sqlmodel import select

        from nodeflow_app.store.models import CredentialRow

        if not self._has_table():
            return []
        with self._session() as session:
            rows = session.exec(select(CredentialRow).where(CredentialRow.workspace_id == workspace_id)
                                .order_by(CredentialRow.provider)).all()
            return [{"provider": r.provider, "api_key": r.has_api_key, "base_url": r.has_base_url,
                     "updated_at": r.updated_at} for r in rows]

    def adopt(self, workspace_id: str) -> int:
        """Credentials stored before accounts (workspace "") join `workspace_id` (the install owner's) unless it
        has its own for that provider; re-encrypted, since a token names its workspace. How many moved."""
        moved = 0
        for row in self.list(""):
            credential = self.get(row["provider"], "")
            if credential is not None and self._row(row["provider"], workspace_id) is None:
                self.set(row["provider"], credential.api_key, credential.base_url, workspace_id,
                         self.models(row["provider"], ""))
                moved += 1
            self.delete(row["provider"], "")
        return moved

    def _row(self, provider: str, workspace_id: str) -> Any:
        from nodeflow_app.store.models import CredentialRow

        if not self._has_table():
            return None
        with self._session() as session:
            return session.get(CredentialRow, (workspace_id, provider))

    def _key(self, *, create: bool) -> Any:
        if self._fernet is None:
            self._fernet = load_key(create=create)
        elif not hasattr(self._fernet, "decrypt"):  # a raw key was given
            from cryptography.fernet import Fernet

            self._fernet = Fernet(self._fernet)
        return self._fernet

    def _has_table(self) -> bool:
        """Whether the database has credentials (brought to the newest schema then: an older one keys them
        by provider only). Never creates a table."""
        if not self._table_ready:
            from sqlalchemy import inspect

            from nodeflow_app.store.db import create_all

            schema = (self.engine.get_execution_options().get("schema_translate_map") or {}).get(None)
            self._table_ready = inspect(self.engine).has_table("credential", schema=schema)
            if self._table_ready:
                create_all(self.engine)
        return self._table_ready

    def _create_table(self) -> None:
        if not self._has_table():
            from nodeflow_app.store.db import create_all

            create_all(self.engine)
            self._table_ready = True

    def _session(self) -> Any:
        from nodeflow_app.store.db import session

        return session(self.engine)


# 2. The default store, as providers.py sees it -------------------------------------------------------

_stores: dict[str, CredentialStore] = {}


def default_url() -> str:
    """The app's database URL, read now (REFLEX_DB_URL, else the SQLite file in the data folder)."""
    return db_url()


def default_store(*, create: bool = False) -> CredentialStore | None:
    """The store on the app's database; None when it is a SQLite file that does not exist and not `create`."""
    url = default_url()
    if not create and url.startswith("sqlite:///") and not Path(url.removeprefix("sqlite:///")).exists():
        return None
    store = _stores.get(url)
    if store is None:
        from nodeflow_app.store.db import make_engine

        store = _stores[url] = CredentialStore(make_engine(url))
    # The key may change between calls (tests, a restored key file): read it again each time.
    store._fernet = None
    return store


def stored(provider: str, workspace_id: str = "") -> Credential | None:
    """`provider`'s credential stored for the workspace, or None; a CredentialError when one is stored but cannot
    be decrypted."""
    from sqlalchemy.exc import SQLAlchemyError

    store = default_store()
    try:
        return store.get(provider, workspace_id) if store is not None else None
    except SQLAlchemyError as error:
        where = store.engine.url.render_as_string(hide_password=True)
        raise CredentialError(f"cannot read the credential store in {where}: {type(error).__name__}: "
                              f"{str(error).splitlines()[0]}") from None


credentials.use_lookup(stored)
