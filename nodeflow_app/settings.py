"""Where NodeFlow keeps its data, and the defaults every part of the app agrees on.

Nothing here imports Reflex, so the CLI, the runtime and tests can use it freely. The data folder
holds the database and the key of stored credentials: what NodeFlow creates there is private to the
user running it (folder 0700, files 0600; SQLite gives its -wal and -shm files the database's mode).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

# The repository / app root: the folder holding rxconfig.py.
APP_ROOT = Path(__file__).resolve().parent.parent

# The data folder (SQLite database, uploads, ...). Override with NODEFLOW_DATA_DIR.
DATA_DIR = Path(os.environ.get("NODEFLOW_DATA_DIR") or APP_ROOT / "data").expanduser().resolve()

# The embedded default database. Reflex reads REFLEX_DB_URL over rx.Config's db_url.
DEFAULT_DB_URL = f"sqlite:///{DATA_DIR / 'nodeflow.db'}"


def data_dir() -> Path:
    """NODEFLOW_DATA_DIR as it is now (tests and the CLI may point elsewhere), else the app's data folder."""
    raw = os.environ.get("NODEFLOW_DATA_DIR")
    return Path(raw).expanduser().resolve() if raw else DATA_DIR


def db_url() -> str:
    """The database URL in effect: REFLEX_DB_URL when set, else the SQLite file under the data folder."""
    return os.environ.get("REFLEX_DB_URL") or f"sqlite:///{data_dir() / 'nodeflow.db'}"


def redis_url() -> str | None:
    """The Redis that links the install's processes (REFLEX_REDIS_URL), or None: one process, nothing to link."""
    return os.environ.get("REFLEX_REDIS_URL") or None


def ensure_data_dir() -> Path:
    """Create the data folder if needed (private) and return it."""
    return private_dir(DATA_DIR)


def private_dir(path: Path) -> Path:
    """Create the folder `path` with mode 0700 if it is missing (its parents as usual); return it.

    An existing folder keeps its mode: it may be one the user chose and shares on purpose.
    """
    if not path.is_dir():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.mkdir(mode=0o700, exist_ok=True)
    return path


def private_file(path: Path) -> Path:
    """Create the file `path` empty with mode 0600 if it is missing (in a private folder); an existing
    file loses any group and other access. For files NodeFlow owns: the database, keys."""
    private_dir(path.parent)
    if not path.exists():
        # Never open an existing file: closing any descriptor of a SQLite database releases every POSIX lock
        # this process holds on it, and SQLite then deletes a live -wal/-shm (other processes stop seeing
        # this one's commits). O_EXCL: if another process creates it meanwhile, theirs stands.
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        except FileExistsError:
            pass
    mode = stat.S_IMODE(os.stat(path).st_mode)
    if mode & 0o077:
        os.chmod(path, mode & 0o700)
    return path


def private_sqlite_file(database: str | None) -> None:
    """A SQLite database file (the path part of a sqlite URL) created private before SQLite creates it 0644."""
    if database and database != ":memory:" and not database.startswith("file:"):
        private_file(Path(database).expanduser())
