"""Hourly housekeeping: one process per hour prunes old runs and deletes stored files no record refers to."""

from __future__ import annotations

import logging
import os
import time

import pytest
from sqlalchemy import insert

from nodeflow_app import files
from nodeflow_app.contract import NodeError
from nodeflow_app.runs.housekeeping import INTERVAL, Report, housekeep_once
from nodeflow_app.store.db import create_all, make_engine
from nodeflow_app.store.models import WorkspaceRow
from nodeflow_app.store.retention import DAY

from tests.store import test_retention
from tests.store.test_retention import run_ids

NOW = time.time()
HOUR_AGO = NOW - 3601


def add_run(*args, **options) -> None:
    test_retention.add_run(*args, **options, now=NOW)


@pytest.fixture
def engine(tmp_path, monkeypatch):
    monkeypatch.setenv("NODEFLOW_DATA_DIR", str(tmp_path / "data"))
    for name in ("NODEFLOW_RUNS_MAX_AGE_DAYS", "NODEFLOW_RUNS_MAX_PER_GRAPH", "NODEFLOW_FILES_QUOTA_GB"):
        monkeypatch.delenv(name, raising=False)
    engine = make_engine(f"sqlite:///{tmp_path / 'nodeflow.db'}")
    create_all(engine)
    with engine.begin() as conn:  # the workspaces whose files the tests store: this database speaks for them
        for workspace in ("w1", "w2"):
            conn.execute(insert(WorkspaceRow.__table__).values(id=workspace, name=workspace, created_at=NOW))
    yield engine
    engine.dispose()


def stored(content: bytes, workspace: str = "w1", *, written: float = HOUR_AGO) -> dict:
    reference = files.store_bytes(content, "f.bin", "application/octet-stream", workspace)
    path = files.files_dir(workspace) / reference["file_id"]
    os.utime(path, (written, written))
    return reference


def test_old_runs_are_pruned_and_files_only_they_referred_to_are_deleted(engine):
    kept, dropped = stored(b"kept"), stored(b"dropped", "w2")
    young = stored(b"young", written=NOW - 60)  # no record yet: its run may be writing it this moment
    add_run(engine, "recent", "completed", 1, outputs={"body": kept})
    add_run(engine, "old", "completed", 40, outputs={"body": dropped})

    report = housekeep_once(engine, "me", NOW)

    assert report == Report(runs=1, leases=0, files=1, file_bytes=len(b"dropped"), sign_ins=0)
    assert run_ids(engine) == {"recent"}
    assert files.file_path(kept, workspace="w1").read_bytes() == b"kept"
    assert files.file_path(young, workspace="w1").read_bytes() == b"young"
    with pytest.raises(NodeError, match="no stored file"):
        files.file_path(dropped, workspace="w2")


def test_a_file_stored_again_just_now_is_not_deleted_although_no_record_has_it_yet(engine):
    again = stored(b"same bytes", written=NOW - 5 * DAY)
    files.store_bytes(b"same bytes", "again.bin", "application/octet-stream", "w1")  # a run stores it again

    assert housekeep_once(engine, "me", NOW).files == 0
    assert files.file_path(again, workspace="w1").read_bytes() == b"same bytes"


async def test_the_same_content_streamed_again_is_not_deleted_although_no_record_has_it_yet(engine):
    async def chunks():
        yield b"streamed bytes"

    first = await files.store_stream(chunks(), "a.bin", "application/octet-stream", 1000, "w1")
    path = files.files_dir("w1") / first["file_id"]
    os.utime(path, (NOW - 5 * DAY, NOW - 5 * DAY))
    await files.store_stream(chunks(), "again.bin", "application/octet-stream", 1000, "w1")  # the HTTP Request node

    assert housekeep_once(engine, "me", NOW).files == 0
    assert path.read_bytes() == b"streamed bytes"


def test_a_database_that_is_not_the_installs_deletes_no_file(engine, tmp_path):
    """`nodeflow housekeep` in a shell without the server's REFLEX_DB_URL opens another (or a fresh) database:
    no record there refers to the install's files, yet none of them may go."""
    stored(b"the install's")
    top = files.files_dir("w1").parent
    (top / ("c" * 64)).write_bytes(b"an older version's")
    os.utime(top / ("c" * 64), (HOUR_AGO, HOUR_AGO))
    other = make_engine(f"sqlite:///{tmp_path / 'another.db'}")
    create_all(other)

    assert housekeep_once(other, "me", NOW).files == 0
    assert len(list(top.rglob("*"))) == 3  # w1/, its file and the older version's
    other.dispose()


def test_a_paused_run_does_not_hold_the_sweep_back(engine):
    """An approval nobody answers must not stop the deletion of unreferenced files for ever."""
    stored(b"unreferenced")
    add_run(engine, "waits", "paused", 20, finished=False)

    assert housekeep_once(engine, "me", NOW).files == 1


def test_files_are_kept_while_a_run_that_started_before_them_still_goes(engine):
    """A Loop's passes and a child run hold their outputs in memory only until they finish."""
    held = stored(b"held by a running loop", written=NOW - 2 * 3600)
    add_run(engine, "loop", "running", 3 / 24, finished=False)  # started three hours ago

    assert housekeep_once(engine, "me", NOW).files == 0
    assert files.file_path(held, workspace="w1").exists()
    with engine.begin() as conn:
        conn.execute(test_retention.RUNS.update().values(status="completed", finished_at=NOW))

    assert housekeep_once(engine, "me", NOW + INTERVAL).files == 1


def test_a_file_moved_aside_and_found_written_again_is_put_back(engine):
    """The sweep moves a file aside before it deletes it: one stored again at that moment is put back whole."""
    folder = files.files_dir("w1")
    path = folder / ("b" * 64)
    path.write_bytes(b"fresh")

    assert files._remove_unless_rewritten(path, NOW - 3600) is None
    assert path.read_bytes() == b"fresh" and [p.name for p in folder.iterdir()] == [path.name]


def test_interrupted_writes_and_unreferenced_files_of_the_older_layout_go_and_other_files_stay(engine):
    add_run(engine, "recent", "completed", 1)  # the install's database: it has runs
    top = files.files_dir("w1").parent
    for name in (".incoming-abc12_yz", "a" * 64, "notes.txt"):
        (top / name).write_bytes(b"x")
        os.utime(top / name, (HOUR_AGO, HOUR_AGO))
    (top / "w1" / ".incoming-def45678").write_bytes(b"y")
    os.utime(top / "w1" / ".incoming-def45678", (HOUR_AGO, HOUR_AGO))

    assert housekeep_once(engine, "me", NOW).files == 3
    assert sorted(p.name for p in top.rglob("*")) == ["notes.txt", "w1"]


def test_knowledge_uploads_a_killed_process_left_half_written_go_and_whole_ones_stay(engine, tmp_path):
    collection = tmp_path / "data" / "uploads" / "w1" / "docs"
    collection.mkdir(parents=True)
    names = ((".incoming-old12345", HOUR_AGO), (".incoming-now12345", NOW - 5), ("guide.md", HOUR_AGO),
             (".incoming-notes.md", HOUR_AGO))  # a person's own file, named so
    for name, written in names:
        (collection / name).write_bytes(b"12345")
        os.utime(collection / name, (written, written))

    assert housekeep_once(engine, "me", NOW) == Report(runs=0, leases=0, files=1, file_bytes=5)
    assert sorted(p.name for p in collection.iterdir()) == [".incoming-notes.md", ".incoming-now12345", "guide.md"]


def test_ended_sessions_and_old_failed_sign_ins_are_forgotten(engine):
    from nodeflow_app.store.accounts import AccountError, AccountStore

    accounts = AccountStore(engine)
    accounts.create_user("Ada", "ada@example.org", "a long enough password")
    ended, _ = accounts.sign_in("ada@example.org", "a long enough password", seconds=5)
    live, _ = accounts.sign_in("ada@example.org", "a long enough password")
    for email in ("eve@example.org", "mallory@example.org"):
        with pytest.raises(AccountError):
            accounts.sign_in(email, "guess")

    later = time.time() + 16 * 60  # past the window of the failed sign-ins just made
    assert housekeep_once(engine, "me", later).sign_ins == 3

    assert accounts.user_for_session(live) is not None
    assert accounts.forget_expired(later) == 0


def test_one_process_does_each_hours_pass(engine):
    add_run(engine, "old", "completed", 40)
    assert housekeep_once(engine, "other process", NOW) is not None
    add_run(engine, "old again", "completed", 40)

    assert housekeep_once(engine, "me", NOW) is None  # the same hour: taken
    assert run_ids(engine) == {"old again"}
    assert housekeep_once(engine, "me", NOW + INTERVAL).runs == 1
    assert run_ids(engine) == set()


def test_a_bad_setting_is_logged_by_name_and_nothing_is_pruned(engine, monkeypatch, caplog):
    monkeypatch.setenv("NODEFLOW_RUNS_MAX_AGE_DAYS", "a month")
    add_run(engine, "old", "completed", 400)
    stored(b"unreferenced")

    with caplog.at_level(logging.ERROR, "nodeflow.housekeeping"):
        assert housekeep_once(engine, "me", NOW) is None

    assert "NODEFLOW_RUNS_MAX_AGE_DAYS must be a number" in caplog.text
    assert run_ids(engine) == {"old"}
    assert len(list(files.files_dir("w1").iterdir())) == 1


def test_a_workspace_at_its_quota_stores_again_once_runs_that_used_its_files_are_pruned(engine, monkeypatch):
    monkeypatch.setenv("NODEFLOW_FILES_QUOTA_GB", str(1000 / 1024 ** 3))  # 1,000 bytes
    old = stored(b"o" * 900)
    add_run(engine, "old", "completed", 40, outputs={"body": old})
    with pytest.raises(NodeError, match="quota .* deleted within the hour"):
        files.store_bytes(b"n" * 200, "new.bin", "application/octet-stream", "w1")

    housekeep_once(engine, "me", NOW)

    assert files.store_bytes(b"n" * 200, "new.bin", "application/octet-stream", "w1")["size"] == 200


def test_every_worker_starts_housekeeping_with_the_app():
    from nodeflow_app.nodeflow_app import app, keep_house

    assert keep_house in app._lifespan_tasks


def test_nodeflow_housekeep_does_the_pass_now_and_names_a_bad_setting(engine, tmp_path, monkeypatch, capsys):
    from nodeflow_app.cli import main

    monkeypatch.setenv("REFLEX_DB_URL", f"sqlite:///{tmp_path / 'nodeflow.db'}")
    add_run(engine, "old", "completed", 40)
    stored(b"unreferenced")
    housekeep_once(engine, "server", NOW)  # the server's pass of this hour: the command does not wait for the next
    add_run(engine, "old too", "completed", 40)
    stored(b"unreferenced too")

    assert main(["housekeep"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"database sqlite:///{tmp_path / 'nodeflow.db'}, data folder {tmp_path / 'data'}",
        "1 run pruned, 1 stored file no record refers to deleted (16 bytes), 0 expired sign-in records forgotten"]
    assert run_ids(engine) == set()
    monkeypatch.setenv("NODEFLOW_RUNS_MAX_PER_GRAPH", "many")
    assert main(["housekeep"]) == 2
    assert capsys.readouterr().err.strip() == (
        "nodeflow housekeep: NODEFLOW_RUNS_MAX_PER_GRAPH must be a number of runs (0 keeps all), got 'many'")
    monkeypatch.setenv("REFLEX_DB_URL", f"sqlite:///{tmp_path / 'missing.db'}")
    assert main(["housekeep"]) == 2
    assert "no NodeFlow database at sqlite:///" in capsys.readouterr().err
    assert not (tmp_path / "missing.db").exists()
    monkeypatch.setenv("REFLEX_DB_URL", "postgresql+psycopg://nobody:secret@127.0.0.1:1/none")
    assert main(["housekeep"]) == 2
    captured = capsys.readouterr()
    assert "nodeflow housekeep: cannot use the database: " in captured.err and "secret" not in captured.out + captured.err
