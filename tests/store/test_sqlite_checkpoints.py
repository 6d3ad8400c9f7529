"""SQLite's WAL is checkpointed by a thread of its own, never by the commit that happens to cross 1,000 pages
(that commit would copy pages and fsync the database file in whatever thread committed: often the event loop)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from sqlalchemy import text

from nodeflow_app.store.db import make_engine

ROOT = Path(__file__).resolve().parents[2]


def _seen_in_database_file(path: str) -> int:
    """Rows of `t` in the database file itself: `immutable` reads it without the WAL."""
    with sqlite3.connect(f"file:{path}?immutable=1", uri=True) as conn:
        try:
            return conn.execute("SELECT count(*) FROM t").fetchone()[0]
        except sqlite3.OperationalError:  # the table itself is still only in the WAL
            return -1
        except sqlite3.DatabaseError:  # read while a checkpoint writes pages: seen a moment later
            return -2


def test_commits_reach_the_database_file_through_the_background_checkpoint(tmp_path):
    path = str(tmp_path / "nodeflow.db")
    engine = make_engine(f"sqlite:///{path}")
    try:
        with engine.begin() as conn:
            assert conn.execute(text("PRAGMA wal_autocheckpoint")).scalar() == 0  # no commit checkpoints
            conn.execute(text("CREATE TABLE t (v INTEGER)"))
            conn.execute(text("INSERT INTO t VALUES (1), (2), (3)"))
        assert _seen_in_database_file(path) < 3  # committed to the WAL only
        deadline = time.monotonic() + 5
        while _seen_in_database_file(path) != 3 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _seen_in_database_file(path) == 3  # the checkpoint thread copied the pages in
    finally:
        engine.dispose()


def test_pages_a_reader_held_back_are_copied_once_it_ends_without_another_commit(tmp_path):
    """A reader's snapshot keeps the checkpoint from copying pages newer than it; the file stays marked, so the next
    pass after the reader ends copies them (a last commit's pages stayed in the WAL for good)."""
    path = str(tmp_path / "nodeflow.db")
    engine = make_engine(f"sqlite:///{path}")
    reader = sqlite3.connect(path, isolation_level=None)
    try:
        with engine.begin() as conn:
            conn.execute(text("CREATE TABLE t (v INTEGER)"))
        reader.execute("BEGIN")
        assert reader.execute("SELECT count(*) FROM t").fetchone() == (0,)  # its snapshot: no rows
        with engine.begin() as conn:
            conn.execute(text("INSERT INTO t VALUES (1), (2), (3)"))
        time.sleep(1.5)  # three passes: none may copy what the reader's snapshot does not have
        assert _seen_in_database_file(path) < 3
        reader.execute("COMMIT")
        deadline = time.monotonic() + 5
        while _seen_in_database_file(path) != 3 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _seen_in_database_file(path) == 3
    finally:
        reader.close()
        engine.dispose()


def test_a_database_file_that_is_gone_is_skipped(tmp_path):
    from nodeflow_app.store.db import checkpoint

    checkpoint(str(tmp_path / "never-made.db"))  # nothing raised, nothing created
    assert not (tmp_path / "never-made.db").exists()



FORKED_WORKER = """
import os, sys, time
from sqlalchemy import text
from nodeflow_app.store.db import make_engine
from tests.store.test_sqlite_checkpoints import _seen_in_database_file

path = sys.argv[1]
engine = make_engine(f"sqlite:///{path}")
with engine.begin() as conn:  # the parent's thread is running from here on
    conn.execute(text("CREATE TABLE t (v INTEGER)"))
deadline = time.monotonic() + 5
while _seen_in_database_file(path) != 0 and time.monotonic() < deadline:
    time.sleep(0.1)
pid = os.fork()
if pid == 0:  # the worker: commit, then wait for its own checkpoint
    code = 1
    try:
        engine.dispose(close=False)  # the parent's pooled connections stay the parent's
        with engine.begin() as conn:
            conn.execute(text("INSERT INTO t VALUES (1), (2)"))
        end = time.monotonic() + 20  # a pass every 0.5 s; a machine busy with other tests was once slower than 5 s
        while _seen_in_database_file(path) != 2 and time.monotonic() < end:
            time.sleep(0.1)
        code = 0 if _seen_in_database_file(path) == 2 else 3
    finally:
        os._exit(code)
_, status = os.waitpid(pid, 0)
engine.dispose()
sys.exit(os.waitstatus_to_exitcode(status))
"""


def test_a_forked_worker_checkpoints_with_a_thread_of_its_own(tmp_path):
    """Granian forks its workers: a worker inherits the engine and commits, but not the parent's thread.

    The fork happens in a fresh interpreter, as in Granian: forked from pytest's process, whose other threads
    (servers, pools, other tests' checkpoints) may hold a lock at that moment, the child hung for good."""
    done = subprocess.run([sys.executable, "-c", FORKED_WORKER, str(tmp_path / "forked.db")], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
