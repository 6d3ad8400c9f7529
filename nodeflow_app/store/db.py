"""Engines and sessions on NodeFlow's database: REFLEX_DB_URL, else a SQLite file (WAL) under the data folder."""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from contextlib import closing
from pathlib import Path
from typing import Any, Callable, TypeVar

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlmodel import Session

from nodeflow_app import settings

T = TypeVar("T")
log = logging.getLogger(__name__)


def database_url() -> str:
    """The URL in effect: REFLEX_DB_URL when set (the same variable Reflex reads), else data/nodeflow.db."""
    return settings.db_url()


def make_engine(url: str | None = None, **options: Any) -> Engine:
    """An engine on `url` (default: `database_url()`); SQLite gets WAL, foreign keys and a created folder."""
    parsed = make_url(url or database_url())
    if parsed.get_backend_name() == "postgresql":
        engine = create_engine(parsed, pool_pre_ping=True, **options)
        event.listen(engine, "connect", _postgres_commits)
        return engine
    if parsed.get_backend_name() != "sqlite":
        return create_engine(parsed, pool_pre_ping=True, **options)
    settings.private_sqlite_file(parsed.database)
    # The pool hands a connection to one thread at a time; sqlite3's own thread check only gets in the way.
    engine = create_engine(parsed, connect_args={"check_same_thread": False}, **options)
    event.listen(engine, "connect", _sqlite_pragmas)
    if parsed.database and parsed.database != ":memory:":
        _checkpoints.watch(engine, parsed.database)
    return engine


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    # WAL: readers never block the writer. synchronous=NORMAL is durable across a killed process
    # (only a power loss can drop the last commits) and saves an fsync per commit. No automatic
    # checkpoints: the commit that crossed 1,000 WAL pages would copy them into the database and fsync it,
    # in whatever thread committed (often the event loop); _Checkpoints does that in a thread of its own.
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA wal_autocheckpoint=0")
    cursor.close()


class _Checkpoints:
    """One daemon thread that checkpoints the WAL of every SQLite file this process committed to, every
    CHECKPOINT_S seconds. sqlite3 releases the GIL while it copies pages and syncs, so neither the event loop
    nor a request waits for it. Only files with commits since the last pass are visited."""

    CHECKPOINT_S = 0.5

    def __init__(self) -> None:
        self._dirty: set[str] = set()   # files with commits since their last checkpoint
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        # A forked worker (Granian forks them) inherits the engines but not the thread: it starts its own. Never
        # forked in the middle of a checkpoint: SQLite's per-process lock bookkeeping, copied into the child, would
        # say the checkpoint lock is held by a connection the child does not have, and every checkpoint there would
        # be refused as busy for good (its WAL growing without end; seen under load in the forked-worker test).
        self._checkpointing = threading.Lock()
        os.register_at_fork(before=self._checkpointing.acquire, after_in_parent=self._checkpointing.release,
                            after_in_child=self._forget_thread)

    def watch(self, engine: Engine, path: str) -> None:
        def committed(_conn: Any) -> None:
            self._dirty.add(path)  # set.add is atomic: no lock on every commit
            if self._thread is None:
                self._start()

        event.listen(engine, "commit", committed)

    def _start(self) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="sqlite-checkpoints", daemon=True)
                self._thread.start()

    def _forget_thread(self) -> None:
        self._thread, self._lock, self._checkpointing = None, threading.Lock(), threading.Lock()

    def _run(self) -> None:
        while True:
            time.sleep(self.CHECKPOINT_S)
            with self._checkpointing:
                unfinished = [path for path in _drain(self._dirty) if not checkpoint(path)]
            self._dirty.update(unfinished)  # tried again next pass, commit or not


def _drain(paths: set[str]) -> list[str]:
    taken = []
    while paths:
        taken.append(paths.pop())  # set.pop is atomic: a commit may add meanwhile
    return taken


def checkpoint(path: str) -> bool:
    """Copy the WAL's committed pages into the database file (PASSIVE: never waits for readers or writers). False
    when some stayed in the WAL (another connection was busy with it, or a reader's snapshot still needs them)."""
    if not Path(path).exists():
        return True  # gone: nothing left to copy
    try:  # mode=rw: a file deleted meanwhile is not created again
        with closing(sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=rw", uri=True, timeout=1)) as conn:
            busy, in_wal, copied = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    except sqlite3.Error as error:
        log.debug("checkpoint of %s not done: %s", path, error)
        return not Path(path).exists()
    return not busy and copied == in_wal


_checkpoints = _Checkpoints()


def _postgres_commits(dbapi_connection: Any, _record: Any) -> None:
    # The same durability as SQLite's synchronous=NORMAL above: a commit returns without waiting for the WAL
    # flush, so it survives a killed NodeFlow process (and a PostgreSQL restart), and only a crash of the
    # database machine can drop the last ~0.6 s of commits. Waiting for the disk on every run status change
    # held the event loop ~8 ms per commit (62 webhook runs/s; see benchmarks/webhooks.py).
    autocommit = dbapi_connection.autocommit
    dbapi_connection.autocommit = True
    with dbapi_connection.cursor() as cursor:
        cursor.execute("SET synchronous_commit TO OFF")
    dbapi_connection.autocommit = autocommit


def create_all(engine: Engine) -> None:
    """Bring the database to the newest schema: new tables, and Alembic migrations for older databases."""
    from nodeflow_app.store.migrations import prepare

    prepare(engine)


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
