"""Conversation history for agents: Agno session storage in a SQLite file under the data folder.

A separate file from the app's database, so the app's migrations never see Agno's tables.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from nodeflow_app.settings import DATA_DIR

SESSIONS_FILE = "agent_sessions.db"

_dbs: dict[Path, Any] = {}


def data_dir() -> Path:
    """NODEFLOW_DATA_DIR when set (read now, so tests and the CLI can point elsewhere), else the app's."""
    raw = os.environ.get("NODEFLOW_DATA_DIR")
    return Path(raw).expanduser().resolve() if raw else DATA_DIR


def session_db() -> Any:
    """The Agno SqliteDb for the data folder, one per file per process (its engine and tables are reused)."""
    path = data_dir() / SESSIONS_FILE
    db = _dbs.get(path)
    if db is None:
        from agno.db.sqlite import SqliteDb

        path.parent.mkdir(parents=True, exist_ok=True)
        db = _dbs[path] = SqliteDb(db_file=str(path))
    return db


def session_id(chat_id: str, node_id: str) -> str:
    """One Agno session per chat and agent node."""
    return f"{chat_id}:{node_id}"
