"""What NodeFlow creates in its data folder is private: the folder 0700; the database, its -wal and -shm
files and the credentials key 0600 (whatever the umask lets other programs create)."""

from __future__ import annotations

import os
import stat

import pytest

from nodeflow_app import settings
from nodeflow_app.llm import credentials
from nodeflow_app.store import credentials as credential_store
from nodeflow_app.runtime.engine import start_run
from nodeflow_app.store.db import create_all, make_engine
from nodeflow_app.store.runs import RunStore

from tests.runtime import toys


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    """A data folder that does not exist yet, under the usual umask 022."""
    folder = tmp_path / "nested" / "data"
    monkeypatch.setenv("NODEFLOW_DATA_DIR", str(folder))
    for name in ("REFLEX_DB_URL", credentials.SECRET_KEY_ENV):
        monkeypatch.delenv(name, raising=False)
    old = os.umask(0o022)
    yield folder
    os.umask(old)


async def test_the_data_folder_database_wal_shm_and_key_file_are_private(data_dir):
    engine = make_engine()  # the default: <data dir>/nodeflow.db
    create_all(engine)
    store = RunStore(engine)
    graph = toys.graph([("s", "start"), ("a", "pass")], ["s.out -> a.in"])
    await start_run(graph, toys.registry(), payload=1, hooks=store.hooks()).run()
    with engine.connect():  # WAL mode: -wal and -shm exist while a connection is open
        database = data_dir / "nodeflow.db"
        assert {p.name for p in data_dir.iterdir()} >= {"nodeflow.db", "nodeflow.db-wal", "nodeflow.db-shm"}
        assert mode(data_dir) == 0o700
        for path in (database, data_dir / "nodeflow.db-wal", data_dir / "nodeflow.db-shm"):
            assert mode(path) == 0o600, path
        credential_store.default_store(create=True).set("openai", "sk-test")
        assert mode(data_dir / "secret.key") == 0o600
    assert mode(data_dir.parent) == 0o755  # only the data folder itself is NodeFlow's
    store.close()
    engine.dispose()


def test_an_existing_database_file_is_made_private_and_an_existing_folder_kept(tmp_path, monkeypatch):
    folder = tmp_path / "shared"
    folder.mkdir(mode=0o750)
    database = folder / "nodeflow.db"
    database.touch(mode=0o644)
    os.chmod(database, 0o644)
    engine = make_engine(f"sqlite:///{database}")
    create_all(engine)
    engine.dispose()
    assert mode(database) == 0o600 and mode(folder) == 0o750


def test_the_app_data_folder_is_created_private(tmp_path, monkeypatch):
    monkeypatch.setattr(settings, "DATA_DIR", tmp_path / "data")
    assert settings.ensure_data_dir() == tmp_path / "data" and mode(tmp_path / "data") == 0o700


def test_agent_history_on_sqlite_uses_a_private_file(data_dir):
    from nodeflow_app.llm.history import _agno_db

    _agno_db(f"sqlite:///{data_dir / 'history.db'}")
    assert mode(data_dir) == 0o700 and mode(data_dir / "history.db") == 0o600

