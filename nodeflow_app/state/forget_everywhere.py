"""A kept answer forgotten by every process at once: a sign-out, a member removed, a graph moved.

Each process keeps what it read about sessions, roles and graphs' workspaces for a moment (`access.Recent`), so
that a co-editing room's push to many tabs reads no database per tab. The process that changes one of these
forgets its own copy at once; with several workers (Redis), the others kept theirs until it expired: a member
removed went on getting a room's edits through another worker for up to a second (seen in CI). So a forget is
also published on Redis, and every process drops the key when the message arrives, a millisecond later.
Without Redis there is one worker and nothing to tell.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
from typing import Any, Protocol

from nodeflow_app.settings import redis_url

log = logging.getLogger("nodeflow.access")

CHANNEL = "nodeflow:forget"


class Forgets(Protocol):
    def forget_published(self, digest: str) -> None: ...


_caches: dict[str, Forgets] = {}
_clients: dict[str, Any] = {}  # Redis URL -> its client (a connection pool)


def share(name: str, cache: Forgets) -> None:
    """`cache` forgets a key when another process forgets it under `name`."""
    _caches[name] = cache


def digest(key: str) -> str:
    """What travels for `key`: its hash. A session token must not be sent anywhere, even a dead one, even to the
    install's own Redis."""
    return hashlib.sha256(key.encode()).hexdigest()


def tell_others(name: str, key: str) -> None:
    """Every other process forgets `key` of the cache shared as `name` (with Redis; a blocking publish of well
    under a millisecond: these are rare, a sign-out or a removal). The key's `digest` is published, not the key."""
    url = redis_url()
    if url is None:
        return
    try:
        client = _clients.get(url)
        if client is None:
            import redis

            client = _clients[url] = redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=2)
        client.publish(CHANNEL, f"{name}\n{digest(key)}")
    except Exception as error:  # noqa: BLE001 - the others still forget it when their copy expires
        log.warning("could not tell the other workers to forget a %s: %s", name, error)


def _arrived(message: dict[str, Any]) -> None:
    name, _, hashed = message["data"].decode().partition("\n")
    cache = _caches.get(name)
    if cache is not None:
        cache.forget_published(hashed)


@contextlib.asynccontextmanager
async def listening(*_app: Any):
    """A lifespan task: while the app runs, a thread hears what the other processes forgot (with Redis)."""
    thread = None
    url = redis_url()
    if url is not None:
        try:
            import redis

            pubsub = redis.Redis.from_url(url).pubsub(ignore_subscribe_messages=True)
            pubsub.subscribe(**{CHANNEL: _arrived})
            thread = pubsub.run_in_thread(sleep_time=1.0, daemon=True)
        except Exception as error:  # noqa: BLE001 - kept answers then expire on their own
            log.warning("not listening for other workers' forgets: %s", error)
    try:
        yield
    finally:
        if thread is not None:
            thread.stop()
