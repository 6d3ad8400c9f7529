"""Schema migrations (Alembic), applied when a store opens its database.

- A fresh database gets every table from the models (`SQLModel.metadata.create_all`) and is stamped at the
  newest revision: no migration runs, so opening one stays fast.
- A database made before migrations existed (tables, no `alembic_version`) is stamped at the baseline, the
  schema of that time, then upgraded: it keeps its graphs, chats and runs.
- A database at an older revision is upgraded.
Agno's tables (`agno_*`) are never touched: migrations name only NodeFlow's own tables.
"""

from __future__ import annotations

import contextlib
import fcntl
import threading
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

from sqlalchemy import Engine, inspect

BASELINE = "0001_baseline"
MIGRATION_LOCK = 0x4E6F6465466C6F77  # "NodeFlow": the PostgreSQL advisory lock held while a database is prepared
_done: set[str] = set()
_lock = threading.Lock()


def _config(connection):
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(Path(__file__).parent))
    config.attributes["connection"] = connection
    return config


def context(connection, engine: Engine | None = None):
    """Alembic's view of the database; its version table sits in the engine's translated schema, if any."""
    from alembic.migration import MigrationContext

    schema = _schema(engine or connection.engine) or _schema_of(connection)
    return MigrationContext.configure(connection, opts={"version_table_schema": schema} if schema else {})


def schema() -> str | None:
    """Inside a migration: the schema the connection translates the default one to (PostgreSQL tests), else None.

    Alembic renders ALTER TABLE with the name it is given, so `schema_translate_map` does not reach it."""
    from alembic import op

    return _schema_of(op.get_bind())


def _schema_of(connection) -> str | None:
    return (connection.get_execution_options().get("schema_translate_map") or {}).get(None)


@lru_cache(maxsize=1)
def head() -> str:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option("script_location", str(Path(__file__).parent))
    return ScriptDirectory.from_config(config).get_current_head()


def _schema(engine: Engine) -> str | None:
    return (engine.get_execution_options().get("schema_translate_map") or {}).get(None)


def prepare(engine: Engine) -> None:
    """Bring the database behind `engine` to the newest schema (once per engine URL and schema per process)."""
    from sqlmodel import SQLModel

    from nodeflow_app.store import models  # noqa: F401 - registers the tables

    # An in-memory SQLite database is new for every engine: remember the engine, not the URL.
    memory = engine.dialect.name == "sqlite" and engine.url.database in (None, "", ":memory:")
    key = f"{id(engine) if memory else engine.url}|{_schema(engine)}"
    with _lock:
        if key in _done:
            return
        with _one_process_at_a_time(engine):
            with engine.begin() as conn:
                tables = set(inspect(conn).get_table_names(schema=_schema(engine)))
            from alembic import command

            if "alembic_version" in tables:
                with engine.begin() as conn:
                    current = context(conn, engine).get_current_revision()
                if current != head():
                    _upgrade(engine)
            elif "graph" in tables or "run" in tables:  # made before migrations: the baseline schema
                with engine.begin() as conn:
                    command.stamp(_config(conn), BASELINE)
                _upgrade(engine)
            SQLModel.metadata.create_all(engine)  # tables added by models without a migration yet, if any
            if "alembic_version" not in tables and not ("graph" in tables or "run" in tables):
                with engine.begin() as conn:
                    context(conn, engine).stamp(_script(), "head")
        _done.add(key)


@contextlib.contextmanager
def _one_process_at_a_time(engine: Engine) -> Iterator[None]:
    """The backend workers of an install start together, and two of them creating the tables of a fresh
    database at once would collide (one worker would die at start): PostgreSQL takes an advisory lock,
    a SQLite file a lock on a file beside it (never the database file: closing it would drop SQLite's locks)."""
    if engine.dialect.name == "postgresql":
        with engine.connect() as conn:
            conn.exec_driver_sql(f"SELECT pg_advisory_lock({MIGRATION_LOCK})")
            conn.commit()
            try:
                yield
            finally:
                conn.exec_driver_sql(f"SELECT pg_advisory_unlock({MIGRATION_LOCK})")
                conn.commit()
        return
    path = engine.url.database if engine.dialect.name == "sqlite" else None
    if not path or path == ":memory:" or path.startswith("file:"):
        yield
        return
    with open(f"{path}.migrate-lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _upgrade(engine: Engine) -> None:
    """Run the migrations. On SQLite with foreign keys off: a batch migration copies a table and drops the
    old one, and with the pragma on that drop would cascade into the rows that reference it."""
    from alembic import command

    sqlite = engine.dialect.name == "sqlite"
    with engine.connect() as conn:
        if sqlite:
            conn.exec_driver_sql("PRAGMA foreign_keys=OFF")  # before any statement opens a transaction
            conn.commit()  # ends SQLAlchemy's autobegun transaction (the pragma itself took effect at once)
        try:
            with conn.begin():
                command.upgrade(_config(conn), "head")
        finally:
            if sqlite:
                conn.exec_driver_sql("PRAGMA foreign_keys=ON")
                conn.commit()


def _script():
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option("script_location", str(Path(__file__).parent))
    return ScriptDirectory.from_config(config)
