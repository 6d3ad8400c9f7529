"""A removal or sign-out made in one process is forgotten at once by every other (through the real Redis):
another worker's kept role let a removed member's tab receive a room's next edit (seen in CI, test_teams)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from nodeflow_app.state import forget_everywhere
from nodeflow_app.state.access import forget_token
from nodeflow_app.state.room_access import forget_member
from tests.redis_server import redis_database

# Another process (a second worker) that keeps a role and a session, and says when they are gone.
OTHER_WORKER = """
import asyncio, sys, time
from nodeflow_app.state import access, room_access
from nodeflow_app.state.forget_everywhere import listening

async def main():
    room_access._roles._items["eddie\\nteam"] = (time.monotonic() + 3600, "editor")  # kept for the whole test
    access._sessions._items["eddie-session"] = (time.monotonic() + 3600, object())
    async with listening():
        print("listening", flush=True)
        gone = set()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            for name, cache, key in (("role", room_access._roles, "eddie\\nteam"),
                                     ("session", access._sessions, "eddie-session")):
                if name not in gone and cache.recent(key) is None:
                    gone.add(name)
                    print("forgot", name, flush=True)
            if len(gone) == 2:
                return
            await asyncio.sleep(0.005)

asyncio.run(main())
"""


@pytest.fixture
def redis_url(monkeypatch) -> str:
    url = redis_database(0)
    monkeypatch.setenv("REFLEX_REDIS_URL", url)
    return url


def other_worker(url: str) -> subprocess.Popen:
    process = subprocess.Popen([sys.executable, "-c", OTHER_WORKER], stdout=subprocess.PIPE, text=True,
                               env={**os.environ, "REFLEX_REDIS_URL": url})
    assert process.stdout.readline().strip() == "listening", "the other worker did not start"
    return process


def test_a_member_removed_here_is_forgotten_by_another_worker_at_once(redis_url):
    process = other_worker(redis_url)
    try:
        started = time.monotonic()
        forget_member("team", "eddie")
        assert process.stdout.readline().strip() == "forgot role"
        # Well before the role would expire on its own there (it was kept for an hour).
        assert time.monotonic() - started < 2
        forget_token("eddie-session")
        assert process.stdout.readline().strip() == "forgot session"
    finally:
        process.kill()
        process.wait()


def test_a_signed_out_token_never_travels_only_its_hash(redis_url):
    import redis

    pubsub = redis.Redis.from_url(redis_url).pubsub(ignore_subscribe_messages=True)
    pubsub.subscribe(forget_everywhere.CHANNEL)
    try:
        forget_token("a-secret-session-token")
        deadline, message = time.monotonic() + 5, None
        while message is None and time.monotonic() < deadline:
            message = pubsub.get_message(timeout=0.1)
        assert message is not None, "nothing was published"
        assert b"a-secret-session-token" not in message["data"]
        assert message["data"].decode() == "session\n" + forget_everywhere.digest("a-secret-session-token")
    finally:
        pubsub.close()


def test_an_unreachable_redis_is_logged_not_raised(monkeypatch, caplog):
    monkeypatch.setenv("REFLEX_REDIS_URL", "redis://127.0.0.1:1/0")  # nothing listens on port 1
    forget_everywhere._clients.pop("redis://127.0.0.1:1/0", None)
    forget_member("team", "eddie")
    assert "could not tell the other workers to forget a role" in caplog.text
