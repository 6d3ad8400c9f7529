"""The real PostgreSQL of these machines, for store tests: a private schema per test, dropped afterwards."""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator

import pytest
from sqlalchemy import text

from nodeflow_app.store.db import make_engine

POSTGRES_URL = os.environ.get("NODEFLOW_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")


@contextlib.contextmanager
def private_schema() -> Iterator[str]:
    """A fresh schema in the shared `test` database (nobody else's tables are touched); fails, never skips."""
    schema = f"nodeflow_test_{uuid.uuid4().hex[:12]}"
    admin = make_engine(POSTGRES_URL)
    try:
        with admin.begin() as conn:
            conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    except Exception as error:  # noqa: BLE001 - the team configuration is tested for real, never skipped
        admin.dispose()
        pytest.fail(f"PostgreSQL not reachable at {POSTGRES_URL} (it runs on these machines): {error}")
    try:
        yield schema
    finally:
        with admin.begin() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()
