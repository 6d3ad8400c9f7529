"""The real Redis of these machines, for the tests that run NodeFlow on it: NODEFLOW_TEST_REDIS_URL moves it."""

from __future__ import annotations

import os
from urllib.parse import urlsplit

REDIS_URL = os.environ.get("NODEFLOW_TEST_REDIS_URL", "redis://127.0.0.1:6379")


def redis_database(number: int, server: str = REDIS_URL) -> str:
    """The URL of database `number` on `server`: each suite keeps its keys in a database of its own."""
    return urlsplit(server)._replace(path=f"/{number}").geturl()
