"""Activation and the rows behind live triggers (SPEC 6): which version of a graph is live, its webhook
addresses, the editor's webhook test listeners, and the schedule's leases.

A graph is active when `graph.active_version` is set: webhooks and schedules run that stored version, never
the editor's unsaved edits. Activating writes the version and the graph's webhook addresses in one
transaction (an address another graph uses refuses it); deactivating removes them.
A schedule fires a due time only after inserting its `schedule_fire` row: the unique (graph, node, due time)
makes that insert the lease, so each due time runs once across every worker and process.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, Table, delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from nodeflow_app.store.db import create_all, make_engine, process_wide
from nodeflow_app.store.models import GraphRow, ScheduleFireRow, WebhookRow, WebhookTestRow

GRAPHS: Table = GraphRow.__table__  # type: ignore[attr-defined]
HOOKS: Table = WebhookRow.__table__  # type: ignore[attr-defined]
TESTS: Table = WebhookTestRow.__table__  # type: ignore[attr-defined]
FIRES: Table = ScheduleFireRow.__table__  # type: ignore[attr-defined]


_changes = [0]  # activations in this process: cached webhook lookups older than the last one are stale


def changes() -> int:
    """How many activations and deactivations this process made (a cache of live webhooks keys on it)."""
    return _changes[0]


class AddressTaken(ValueError):
    """A webhook address of the graph is already live in another graph."""


@dataclass(frozen=True)
class LiveHook:
    """A webhook address of an active graph, with what a call needs to start its run."""

    hook_id: str
    graph_id: str
    node_id: str
    version: int
    workspace_id: str | None


@dataclass(frozen=True)
class ActiveGraph:
    graph_id: str
    version: int
    activated_at: float
    workspace_id: str | None


@dataclass(frozen=True)
class TestCall:
    """A webhook test listener: what it listens for, and the call (payload, run id) once it came."""

    graph_id: str
    node_id: str
    expires_at: float
    payload: Any
    run_id: str | None
    called: bool


class TriggerStore:
    def __init__(self, engine_or_url: Engine | str | None = None):
        self.engine: Engine = engine_or_url if isinstance(engine_or_url, Engine) else make_engine(engine_or_url)
        create_all(self.engine)

    # -- activation ------------------------------------------------------------------------------------

    def activate(self, graph_id: str, version: int, hooks: dict[str, str]) -> None:
        """Make `version` live with its webhook addresses ({hook_id: node_id}); AddressTaken if one is used."""
        try:
            with self.engine.begin() as conn:
                conn.execute(delete(HOOKS).where(HOOKS.c.graph_id == graph_id))
                for hook_id, node_id in hooks.items():
                    conn.execute(insert(HOOKS).values(hook_id=hook_id, graph_id=graph_id, node_id=node_id))
                changed = conn.execute(update(GRAPHS).where(GRAPHS.c.id == graph_id).values(
                    active_version=version, activated_at=time.time())).rowcount
                if not changed:
                    raise KeyError(graph_id)
        except IntegrityError:
            raise AddressTaken("a webhook address of this graph is live in another graph") from None
        finally:
            _changes[0] += 1

    def deactivate(self, graph_id: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(delete(HOOKS).where(HOOKS.c.graph_id == graph_id))
            conn.execute(update(GRAPHS).where(GRAPHS.c.id == graph_id).values(active_version=None,
                                                                             activated_at=None))
        _changes[0] += 1

    def active_version(self, graph_id: str) -> int | None:
        with self.engine.connect() as conn:
            return conn.execute(select(GRAPHS.c.active_version).where(GRAPHS.c.id == graph_id)).scalar()

    def active_versions(self, graph_ids: list[str]) -> dict[str, int]:
        """{graph id: live version} for those of `graph_ids` that are active (the graph list's switches)."""
        query = select(GRAPHS.c.id, GRAPHS.c.active_version).where(
            GRAPHS.c.id.in_(graph_ids), GRAPHS.c.active_version.is_not(None))
        with self.engine.connect() as conn:
            return dict(conn.execute(query).all())

    def active_graphs(self) -> list[ActiveGraph]:
        query = select(GRAPHS.c.id, GRAPHS.c.active_version, GRAPHS.c.activated_at, GRAPHS.c.workspace_id).where(
            GRAPHS.c.active_version.is_not(None))
        with self.engine.connect() as conn:
            return [ActiveGraph(r[0], r[1], r[2] or 0.0, r[3]) for r in conn.execute(query).all()]

    def live_hook(self, hook_id: str) -> LiveHook | None:
        """The active graph a webhook address belongs to (None: unknown address, or graph inactive)."""
        query = (select(HOOKS.c.graph_id, HOOKS.c.node_id, GRAPHS.c.active_version, GRAPHS.c.workspace_id)
                 .join(GRAPHS, GRAPHS.c.id == HOOKS.c.graph_id).where(HOOKS.c.hook_id == hook_id))
        with self.engine.connect() as conn:
            row = conn.execute(query).first()
        if row is None or row.active_version is None:
            return None
        return LiveHook(hook_id, row.graph_id, row.node_id, row.active_version, row.workspace_id)

    # -- webhook test listeners -------------------------------------------------------------------------

    def listen(self, hook_id: str, graph_id: str, node_id: str, seconds: float) -> None:
        """Wait for the next call of the test address (a new listener replaces an earlier one)."""
        with self.engine.begin() as conn:
            conn.execute(delete(TESTS).where(TESTS.c.hook_id == hook_id))
            conn.execute(insert(TESTS).values(hook_id=hook_id, graph_id=graph_id, node_id=node_id,
                                              expires_at=time.time() + seconds))

    def test_listener(self, hook_id: str) -> TestCall | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(TESTS).where(TESTS.c.hook_id == hook_id)).mappings().first()
        if row is None:
            return None
        called = row["payload_json"] is not None
        return TestCall(row["graph_id"], row["node_id"], row["expires_at"],
                        json.loads(row["payload_json"]) if called else None, row["run_id"], called)

    def take_test_call(self, hook_id: str, payload: Any) -> TestCall | None:
        """Record a call for the waiting listener; None when nobody listens (or it expired, or was served)."""
        with self.engine.begin() as conn:
            taken = conn.execute(update(TESTS).where(
                TESTS.c.hook_id == hook_id, TESTS.c.payload_json.is_(None), TESTS.c.expires_at > time.time())
                .values(payload_json=json.dumps(payload, default=str))).rowcount
        return self.test_listener(hook_id) if taken else None

    def test_run(self, hook_id: str, run_id: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(update(TESTS).where(TESTS.c.hook_id == hook_id).values(run_id=run_id))

    def stop_listening(self, hook_id: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(delete(TESTS).where(TESTS.c.hook_id == hook_id))

    # -- schedule leases --------------------------------------------------------------------------------

    def claim_fire(self, graph_id: str, node_id: str, due_at: float, owner: str) -> bool:
        """Take the lease of one due time; False when another process (or this one) already has it."""
        try:
            with self.engine.begin() as conn:
                conn.execute(insert(FIRES).values(graph_id=graph_id, node_id=node_id, due_at=due_at,
                                                  fired_at=time.time(), owner=owner))
            return True
        except IntegrityError:
            return False

    def fired_run(self, graph_id: str, node_id: str, due_at: float, run_id: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(update(FIRES).where(FIRES.c.graph_id == graph_id, FIRES.c.node_id == node_id,
                                             FIRES.c.due_at == due_at).values(run_id=run_id))

    def last_fired(self, graph_id: str, node_id: str) -> float | None:
        query = select(func.max(FIRES.c.due_at)).where(FIRES.c.graph_id == graph_id, FIRES.c.node_id == node_id)
        with self.engine.connect() as conn:
            return conn.execute(query).scalar()

    def fires(self, graph_id: str) -> list[dict[str, Any]]:
        query = select(FIRES).where(FIRES.c.graph_id == graph_id).order_by(FIRES.c.due_at, FIRES.c.node_id)
        with self.engine.connect() as conn:
            return [dict(r) for r in conn.execute(query).mappings().all()]


# The process's TriggerStore on the app database, opened on first use (never at import time).
trigger_store = process_wide(TriggerStore)
