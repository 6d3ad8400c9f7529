"""Engines and sessions on NodeFlow's database: REFLEX_DB_URL, else a SQLite file (WAL) under the data folder."""

from __future__ import annotations

import threading
from typing import Any, Callable, TypeVar

from sqlalchemy import Engine, create_engine, event, inspect, text
from sqlalchemy.engine import make_url
from sqlmodel import Session, SQLModel

from nodeflow_app import settings

T = TypeVar("T")


def database_url() -> str:
    """The URL in effect: REFLEX_DB_URL when set (the same variable Reflex reads), else data/nodeflow.db."""
    return settings.db_url()


def make_engine(url: str | None = None, **options: Any) -> Engine:
    """An engine on `url` (default: `database_url()`); SQLite gets WAL, foreign keys and a created folder."""
    parsed = make_url(url or database_url())
    if parsed.get_backend_name() != "sqlite":
        return create_engine(parsed, pool_pre_ping=True, **options)
    settings.private_sqlite_file(parsed.database)
    # The pool hands a connection to one thread at a time; sqlite3's own thread check only gets in the way.
    engine = create_engine(parsed, connect_args={"check_same_thread": False}, **options)
    event.listen(engine, "connect", _sqlite_pragmas)
    return engine


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    # WAL: readers never block the writer. synchronous=NORMAL is durable across a killed process
    # (only a power loss can drop the last commits) and saves an fsync per commit.
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def create_all(engine: Engine) -> None:
    """Create every NodeFlow table that is missing (until Alembic migrations take over)."""
    from nodeflow_app.store import models  # noqa: F401 - registers the tables on SQLModel.metadata

    SQLModel.metadata.create_all(engine)
    add_missing_columns(engine)


def add_missing_columns(engine: Engine) -> list[str]:
    """Add the model columns an older database lacks (`table.column` names added), until Alembic takes over.

    Only nullable columns without a default can be added this way; every column added after the first
    release is declared so (see models.py).
    """
    added = []
    existing = inspect(engine)
    # An engine that maps tables into a schema (tests on PostgreSQL) is inspected in that schema.
    schema = (engine.get_execution_options().get("schema_translate_map") or {}).get(None)
    with engine.begin() as conn:
        for table in SQLModel.metadata.sorted_tables:
            if not existing.has_table(table.name, schema=schema):
                continue
            have = {c["name"] for c in existing.get_columns(table.name, schema=schema)}
            for column in table.columns:
                if column.name in have:
                    continue
                kind = column.type.compile(dialect=engine.dialect)
                conn.execute(text(f'ALTER TABLE {table.name} ADD COLUMN {column.name} {kind}'))
                added.append(f"{table.name}.{column.name}")
    return added


def session(engine: Engine) -> Session:
    """A sqlmodel Session on `engine`; use it as a context manager."""
    return Session(engine)


def process_wide(factory: Callable[[], T]) -> Callable[[], T]:
    """`factory()` made once per process, on first use (never at import time), even from several threads."""
    made: list[T] = []
    lock = threading.Lock()

    def get() -> T:
        with lock:
            if not made:
                made.append(factory())
            return made[0]

    get.__doc__ = f"The process's {getattr(factory, '__name__', 'object')}, made on first use."
    return get
