"""Where NodeFlow keeps its data, and the defaults every part of the app agrees on.

Nothing here imports Reflex, so the CLI, the runtime and tests can use it freely.
"""

from __future__ import annotations

import os
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


def ensure_data_dir() -> Path:
    """Create the data folder if needed and return it."""
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    return DATA_DIR
