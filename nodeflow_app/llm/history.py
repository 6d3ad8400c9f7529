"""Conversation history for agents: Agno's session storage in the app's own database (SPEC 7).

The URL is read when first needed (REFLEX_DB_URL, else the SQLite file under the data folder), so
tests and the CLI can point elsewhere. Agno's tables are prefixed `agno_`; the app's migrations
must leave them alone.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.engine import make_url

from nodeflow_app import settings

_dbs: dict[str, Any] = {}


def session_db() -> Any:
    """The Agno db for the app's database, one per URL per process (its engine and tables are reused)."""
    url = settings.db_url()
    db = _dbs.get(url)
    if db is None:
        db = _dbs[url] = _agno_db(url)
    return db


def _agno_db(url: str) -> Any:
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        from agno.db.sqlite import SqliteDb

        settings.private_sqlite_file(parsed.database)
        return SqliteDb(db_url=url)
    if parsed.get_backend_name() == "postgresql":
        from agno.db.postgres import PostgresDb

        return PostgresDb(db_url=parsed.set(drivername="postgresql+psycopg").render_as_string(hide_password=False))
    raise ValueError(f"agent history needs SQLite or PostgreSQL, not {parsed.get_backend_name()} ({url})")


def session_id(chat_id: str, node_id: str) -> str:
    """One Agno session per chat and agent node."""
    return f"{chat_id}:{node_id}"
