"""Who executes which run, and requests for it from anywhere: owners, heartbeats, claims, stop and answer.

Every `running` run has an owner ("host:pid:token" of the process executing it) and a heartbeat that
process refreshes every HEARTBEAT seconds. An owner is gone when its heartbeat is older than STALE_AFTER,
or at once when it ran on this host and its process no longer exists. Recovery and resume touch only
runs whose owner is gone, so several processes can share one database. Heartbeats are written and aged in
the database's clock (`db_clock`), never a host's: a host whose clock is ahead would otherwise take over
runs live elsewhere, and one whose clock is behind would have its own runs taken.

A stop or an answer for a run executing in another process is a row in `run_request`; the owner polls
for its runs' requests (and, when REFLEX_REDIS_URL is set, is woken at once through Redis). A claim discards
the requests still pending for the run it takes: they were for the drive before.
"""

from __future__ import annotations

import json
import os
import socket
import time
import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, Engine, Float, Table, cast, extract, func, insert, literal, select, update

from nodeflow_app.store.models import NodeRunRow, RunRequestRow, RunRow

RUNS: Table = RunRow.__table__  # type: ignore[attr-defined]
NODES: Table = NodeRunRow.__table__  # type: ignore[attr-defined]
REQUESTS: Table = RunRequestRow.__table__  # type: ignore[attr-defined]

HEARTBEAT = 2.0      # seconds between an owner's heartbeats
STALE_AFTER = 15.0   # a heartbeat older than this: the owner is gone
RESUMABLE = ("paused", "interrupted")


class RunBusy(Exception):
    """The run is executing in a live process (or is not in a state that can go on); the message says which."""


@dataclass(frozen=True)
class Request:
    id: int
    run_id: str
    kind: str  # stop | answer
    node_id: str | None
    payload: Any


def process_owner() -> str:
    """This process's owner id: host, pid and a token unique to this process's life."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"


def db_clock(dialect: str) -> ColumnElement[float]:
    """SQL: the database's clock, in seconds since the epoch (any other database than these two: this host's)."""
    if dialect == "sqlite":
        return (func.julianday("now") - 2440587.5) * 86400.0  # unixepoch('subsec') needs SQLite 3.42
    if dialect == "postgresql":
        return cast(extract("epoch", func.clock_timestamp()), Float)
    return literal(time.time(), Float)


def heartbeat_age(dialect: str) -> ColumnElement[float]:
    """SQL: seconds since a run's last heartbeat, by the database's clock (NULL: it never had one)."""
    return (db_clock(dialect) - RUNS.c.heartbeat_at).label("heartbeat_age")


def owner_gone(owner: str | None, heartbeat_age: float | None, me: str) -> bool:
    """Whether the process that owns a `running` run is gone (so the run can be taken over).
    `heartbeat_age`: seconds since its last heartbeat (see `heartbeat_age`), None when it never had one."""
    if owner == me:
        # This process beats for every run it drives. One it claimed (`restore`) whose caller then failed or went
        # away before driving it gets no beats: it is taken back like a gone owner's, not kept `running` for ever.
        return heartbeat_age is not None and heartbeat_age > STALE_AFTER
    if not owner:
        return True  # written before owners existed: its process is long gone
    host, pid, _token = (owner.rsplit(":", 2) + ["", ""])[:3]
    if host == socket.gethostname() and pid.isdigit():
        if int(pid) == os.getpid():  # our pid, another token: an earlier process that had this pid
            return True
        if not _alive(int(pid)):
            return True
    return heartbeat_age is None or heartbeat_age > STALE_AFTER


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, as another user
        return True
    return True


class RunControl:
    """Ownership and requests of runs on `engine`, as process `owner` sees them."""

    def __init__(self, engine: Engine, owner: str):
        self.engine, self.owner = engine, owner
        self._dialect = engine.dialect.name

    # -- ownership -----------------------------------------------------------------------------------

    def heartbeat(self, run_ids: list[str]) -> None:
        """`run_ids` are executing here: say so."""
        if not run_ids:
            return
        with self.engine.begin() as conn:
            conn.execute(update(RUNS).where(RUNS.c.id.in_(run_ids), RUNS.c.status == "running")
                         .values(owner=self.owner, heartbeat_at=db_clock(self._dialect)))

    def recover(self, run_ids: list[str] | None = None) -> list[str]:
        """Runs left `running` by a gone owner become `interrupted`, their running nodes too (their ids)."""
        now = time.time()  # when they stopped, like every run time this host writes
        query = select(RUNS.c.id, RUNS.c.owner, heartbeat_age(self._dialect)).where(RUNS.c.status == "running")
        if run_ids is not None:
            query = query.where(RUNS.c.id.in_(run_ids))
        with self.engine.begin() as conn:
            rows = conn.execute(query).all()
            ids = [r.id for r in rows if owner_gone(r.owner, r.heartbeat_age, self.owner)]
            if ids:
                conn.execute(update(RUNS).where(RUNS.c.id.in_(ids), RUNS.c.status == "running").values(
                    status="interrupted", finished_at=now, duration_ms=(now - RUNS.c.started_at) * 1000,
                    error="the process running it stopped before the run finished"))
                conn.execute(update(NODES).where(NODES.c.run_id.in_(ids), NODES.c.status == "running").values(
                    status="interrupted", updated_at=now))
        return ids

    def claim(self, run_id: str) -> str:
        """Take `run_id` over to continue it here (its status before: paused or interrupted).

        RunBusy when it executes in a live process or cannot go on; LookupError when there is no such run.
        """
        self.recover([run_id])
        now = time.time()
        with self.engine.begin() as conn:
            before = conn.execute(select(RUNS.c.status).where(RUNS.c.id == run_id)).scalar()
            claimed = conn.execute(update(RUNS).where(RUNS.c.id == run_id, RUNS.c.status.in_(RESUMABLE)).values(
                status="running", owner=self.owner, heartbeat_at=db_clock(self._dialect), finished_at=None,
                duration_ms=None,
                error=None)).rowcount
            if claimed:
                # A stop or answer still pending was sent to the run's last drive, which paused or ended before its
                # owner took it; the drive that starts now must not get it (a stale stop cancelled an approved run).
                conn.execute(update(REQUESTS).where(REQUESTS.c.run_id == run_id, REQUESTS.c.handled_at.is_(None))
                             .values(handled_at=now))
                return before
            row = conn.execute(select(RUNS.c.status, RUNS.c.owner).where(RUNS.c.id == run_id)).first()
        if row is None:
            raise LookupError(f"no run '{run_id}' in the database")
        if row.status == "running":
            raise RunBusy(f"run {run_id} is already running (in process {row.owner})")
        raise RunBusy(f"run {run_id} is {row.status}; only a paused or interrupted run can go on")

    def release(self, run_id: str, status: str) -> None:
        """Give a claimed run back in `status` (a restore that failed after the claim)."""
        with self.engine.begin() as conn:
            conn.execute(update(RUNS).where(RUNS.c.id == run_id, RUNS.c.owner == self.owner).values(status=status))

    def owner_of(self, run_id: str) -> tuple[str, str | None, bool] | None:
        """(status, owner, owner is alive) of a run, or None when there is no such run."""
        with self.engine.connect() as conn:
            row = conn.execute(select(RUNS.c.status, RUNS.c.owner, heartbeat_age(self._dialect))
                               .where(RUNS.c.id == run_id)).first()
        if row is None:
            return None
        alive = row.status == "running" and not owner_gone(row.owner, row.heartbeat_age, self.owner)
        return row.status, row.owner, alive

    def cancel_waiting(self, run_id: str) -> bool:
        """A paused or interrupted run (executing nowhere) becomes cancelled; False when it is in another state."""
        now = time.time()
        with self.engine.begin() as conn:
            done = conn.execute(update(RUNS).where(RUNS.c.id == run_id, RUNS.c.status.in_(RESUMABLE)).values(
                status="cancelled", finished_at=now, error="stopped")).rowcount
            if done:
                conn.execute(update(NODES).where(NODES.c.run_id == run_id,
                                                 NODES.c.status.in_(("paused", "interrupted", "running")))
                             .values(status="cancelled", updated_at=now))
        return bool(done)

    # -- requests --------------------------------------------------------------------------------------

    def request(self, run_id: str, kind: str, node_id: str | None = None, payload: Any = None) -> None:
        with self.engine.begin() as conn:
            conn.execute(insert(REQUESTS).values(run_id=run_id, kind=kind, node_id=node_id, created_at=time.time(),
                                                 payload_json=json.dumps(payload, default=str)))

    def take_requests(self, run_ids: list[str]) -> list[Request]:
        """Unhandled requests for `run_ids` (oldest first), marked handled as they are handed out."""
        if not run_ids:
            return []
        with self.engine.begin() as conn:
            rows = conn.execute(select(REQUESTS).where(REQUESTS.c.run_id.in_(run_ids), REQUESTS.c.handled_at.is_(None))
                                .order_by(REQUESTS.c.id)).mappings().all()
            if rows:
                conn.execute(update(REQUESTS).where(REQUESTS.c.id.in_([r["id"] for r in rows]))
                             .values(handled_at=time.time()))
        return [Request(r["id"], r["run_id"], r["kind"], r["node_id"], json.loads(r["payload_json"] or "null"))
                for r in rows]
