"""The run repository: runs and their nodes written as they happen, and read back as plain records.

It never builds a run: the launcher restores runs from `get_run` records through the engine.

Writes are batched. A kernel callback only remembers the latest record of each (run, node); a flush
serializes what changed and upserts it in one transaction. Flushes happen:
1. when `flush_interval` has passed, checked on each callback;
2. on a timer `flush_interval` after a change, so the last changes before a long wait reach the disk;
3. on every run status change: at once outside an event loop; in an event loop, once the loop's current
   pass ends (`call_soon`), so the status changes of every run that changed meanwhile share one transaction
   (group commit). The kernel awaits `settle` as a run's stream starts and before it ends, which waits for
   that flush: a run row exists before its first node starts, and a paused or finished run is on disk
   before the caller sees it end. A run whose caller waits for its end only (`hooks(defer_start=True)`)
   skips the first wait: the store's own flushes leave it out while it is running and younger than
   `flush_interval`, so a short run is written once, with its end (one row instead of an insert, an update
   and nodes written as `running` first).
Nodes in flight are written as `running` by the next flush, so a crash leaves them visible.

Two locks. `_lock` guards the queue and the store's bookkeeping and is only ever held for memory work, so a
kernel callback on the event loop never waits for a database write. `_write_lock` is held by a flush from its
swap of the queue to the end of its write, so flushes reach the database in the order they took the queue, and
a reader's `flush` returns once its own changes and every earlier one are written. The loop never waits for a
flush another thread (a page reading a run) is writing: its own flush looks again a moment later.

One run's bad data never costs another run its records: values are escaped so any database can
hold them (see "values the database cannot hold" below), and a batch the database still refuses is
written again run by run; a run whose own rows fail is set aside, its error recorded on its row.
A lost connection or a locked database is not a bad run: the whole batch waits for the next flush.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable

from sqlalchemy import (ColumnElement, Connection, Dialect, Engine, Exists, Table, and_, bindparam, exists, select,
                        update)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError

from nodeflow_app.contract import STARTED_BY, WaitForInput
from nodeflow_app.runtime.plan import PlanNode
from nodeflow_app.runtime.records import NodeRecord, RunHooks
from nodeflow_app.runtime.values import MAX_DEPTH, MAX_INT_BITS
from nodeflow_app.store.db import make_engine
from nodeflow_app.store.encoding import json_text, plain_text
from nodeflow_app.store.models import NodeRunRow, RunRow
from nodeflow_app.store.run_control import RunControl, db_clock, process_owner

Run = Any  # a nodeflow_app.runtime.run.Run, as the kernel hands it to the hooks (read only)

log = logging.getLogger(__name__)

RUNS: Table = RunRow.__table__  # type: ignore[attr-defined]
NODES: Table = NodeRunRow.__table__  # type: ignore[attr-defined]

PARENT_RUN, PARENT_NODE = "parent_run_id", "parent_node_id"  # run context keys of a run a graph called
FINISHED = frozenset({"completed", "failed", "cancelled", "interrupted"})
RETRY_S = 0.001  # how soon the loop's flush looks again when another thread's flush is writing


def waits_for_answer(run_id: ColumnElement[str]) -> Exists:
    """SQL: the run `run_id` names has a paused node, so it can still be answered and go on, even when it is
    `interrupted` (its process stopped). Chat answers and pruning decide by this one condition."""
    return exists().where(NODES.c.run_id == run_id, NODES.c.status == "paused")
_RUN_STATE = ("status", "error", "finished_at", "duration_ms")
_NODE_STATE = tuple(c.name for c in NODES.columns if not c.primary_key)
_SUMMARY = tuple(c for c in RUNS.columns if c.name not in ("graph_json", "payload_json", "context_json"))


class RunNotFound(LookupError):
    """No run with this id in the database."""


class RunStore:
    """Persists runs through `hooks()`, and reads them back (`get_run`, `list_runs`).

    `owner` ("host:pid:token", see run_control.py) is written on every run this store inserts.
    """

    def __init__(self, engine_or_url: Engine | str | None = None, flush_interval: float = 0.05, *,
                 owner: str | None = None):
        self.owner = owner or process_owner()
        self._owns_engine = not isinstance(engine_or_url, Engine)
        self.engine: Engine = engine_or_url if isinstance(engine_or_url, Engine) else make_engine(engine_or_url)
        self.flush_interval = flush_interval
        self._nodes: dict[tuple[str, str], tuple[Run, str, NodeRecord]] = {}  # changed since the last flush
        self._runs: dict[str, Run] = {}      # runs whose status changed since the last flush
        self._active: dict[str, Run] = {}    # running here: their in-flight nodes get written as `running`
        self._in_flight: dict[str, set[str]] = {}  # run_id -> nodes already written as `running`
        self._inserted: set[str] = set()     # runs whose full row (graph, payload) is already written
        self._aside: set[str] = set()        # runs whose rows the database refused: no longer written
        self._deferred: dict[str, float] = {}  # run_id -> until when its start waits to be written with its end
        self._last_flush = 0.0
        self._timer: asyncio.TimerHandle | None = None
        self._timer_loop: asyncio.AbstractEventLoop | None = None
        self._soon: tuple[asyncio.AbstractEventLoop, asyncio.Future] | None = None  # the flush after this pass
        self._lock = threading.RLock()  # the queue and the bookkeeping: memory work only (see the module doc)
        self._write_lock = threading.Lock()  # one flush at a time, from its swap of the queue to its commit
        # Writes go through one connection held while runs go on here: no pool checkout per flush (on
        # PostgreSQL a pre-ping round trip each time). A flush that finds nothing to write and no run going
        # on gives it back; a write that fails drops it (the next one reconnects). Used under `_write_lock`.
        self._conn: Connection | None = None
        dialect, schemas = self.engine.dialect, self.engine.get_execution_options().get("schema_translate_map")
        # A run's first heartbeat is its insert (see run_control.py: heartbeats are in the database's clock).
        self._upsert_runs = _upserter(RUNS, dialect, ("id",), _RUN_STATE, clock=("heartbeat_at",), schemas=schemas)
        self._upsert_nodes = _upserter(NODES, dialect, ("run_id", "node_id"), _NODE_STATE, schemas=schemas)
        self._update_runs = update(RUNS).where(RUNS.c.id == bindparam("run_id")).values(
            {name: bindparam(name) for name in _RUN_STATE})

    # -- writing (kernel callbacks) ----------------------------------------------------------------

    def hooks(self, cache: Any = None, *, defer_start: bool = False) -> RunHooks:
        """Kernel hooks that persist a run as it goes; `cache` passes through (the reactive output cache).

        `defer_start`: for a run whose caller waits for its end, the start is not written on its own: a run that
        ends within `flush_interval` is written once, with its end; a longer one as usual from then on.
        """
        on_run = self._on_deferred_run if defer_start else self._on_run
        return RunHooks(on_node=self._on_node, on_run=on_run, cache=cache, settle=self.settle)

    def _on_deferred_run(self, run: Run) -> None:
        if run.status == "running" and run.run_id not in self._inserted:
            with self._lock:
                self._deferred.setdefault(run.run_id, time.monotonic() + self.flush_interval)
        self._on_run(run)

    def _held(self, run: Run) -> bool:
        """A running run whose start is deferred (see `hooks`): nothing waits for its write yet."""
        return run.status == "running" and run.run_id in self._deferred

    def _on_node(self, run: Run, node_id: str, record: NodeRecord) -> None:
        with self._lock:  # a flush from another thread (a reader) swaps the queue
            self._nodes[(run.run_id, node_id)] = (run, node_id, record)
        if time.monotonic() - self._last_flush >= self.flush_interval:
            self._flush_soon()
        self._schedule()

    def _on_run(self, run: Run) -> None:
        with self._lock:
            self._runs[run.run_id] = run
            if run.status == "running":
                self._active[run.run_id] = run
            else:
                self._active.pop(run.run_id, None)
        if not self._held(run):
            self._flush_soon()
        if run.status == "running":
            self._schedule()  # the nodes it launches next are written as `running` soon after

    async def settle(self, run: Run) -> None:
        """Return once the run's last status change is written (or its write failed: see `flush`)."""
        with self._lock:
            # Queued, or maybe in the flush another thread (a reader) took it in and is writing: the loop's
            # next flush ends after that one.
            waits = not self._held(run) and (run.run_id in self._runs or self._write_lock.locked())
        future = self._flush_soon() if waits else None
        if future is not None:
            await asyncio.shield(future)

    def _flush_soon(self) -> asyncio.Future | None:
        """In an event loop: one flush once the loop's current pass ends, for every change queued until then
        (its future is done after it); elsewhere: flush now."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.flush()
            return None
        with self._lock:
            if self._soon is None or self._soon[0] is not loop:
                self._soon = (loop, loop.create_future())
                loop.call_soon(self._flush_now, self._soon)
            return self._soon[1]

    def _flush_now(self, soon: tuple[asyncio.AbstractEventLoop, asyncio.Future]) -> None:
        loop, future = soon
        if not self._write_lock.acquire(blocking=False):
            # Another thread (a reader) is writing: the loop goes on with its runs and looks again shortly. What
            # is queued meanwhile still joins this flush.
            loop.call_later(RETRY_S, self._flush_now, soon)
            return
        try:
            with self._lock:
                if self._soon is soon:
                    self._soon = None
            self._flush_queue(deferring=True)
        finally:
            self._write_lock.release()
            if not future.done():
                future.set_result(None)
        self._schedule()

    def _schedule(self) -> None:
        """At most one pending timer flush (per event loop: a closed loop's timer never fires)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # outside asyncio: the next callback or status change flushes
            return
        if self._timer is None or self._timer_loop is not loop:
            self._timer_loop = loop
            self._timer = loop.call_later(self.flush_interval, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        self._flush_soon()

    def flush(self, *, deferring: bool = False) -> None:
        """Write everything that changed since the last flush: one transaction, else one per run. Returns once
        it and every flush before it are written. `deferring`: runs whose start is deferred and still young wait."""
        with self._write_lock:
            self._flush_queue(deferring)
        self._schedule()  # a flush that finds nothing left (and no run going on) gives the connection back

    def _flush_queue(self, deferring: bool) -> None:
        """`flush` with `_write_lock` held: the queue is taken under `_lock`, the database written without it."""
        with self._lock:
            self._last_flush = time.monotonic()
            nodes, self._nodes = self._nodes, {}
            runs, self._runs = self._runs, {}
            batch, refused = self._batch(nodes, runs, deferring)
            idle = not self._active
        for write, error in refused:
            self._set_aside(write, error)
        if not batch:
            if idle:  # the connection goes back to the pool
                self._release_connection()
            return
        try:
            self._write(batch)
        except Exception as error:  # noqa: BLE001 - a write must never fail the run that triggered it
            self._write_each_run(batch, error)
        else:
            self._written(batch)

    def _batch(self, nodes: dict, runs: dict[str, Run],
               deferring: bool) -> tuple[dict[str, _RunWrite], list[tuple[_RunWrite, Exception]]]:
        """What to write, per run, and the runs whose rows cannot even be built, with the reason (to set aside).
        `deferring`: a run whose start is deferred waits while it runs and is young (see `hooks`)."""
        now = time.time()
        refused: list[tuple[_RunWrite, Exception]] = []
        batch: dict[str, _RunWrite] = {}
        for key, change in nodes.items():
            write = batch.get(key[0])
            if write is None:
                write = batch[key[0]] = _RunWrite(change[0])
            write.nodes[key] = change
        for run_id, run in runs.items():
            write = batch.get(run_id)
            if write is None:
                write = batch[run_id] = _RunWrite(run)
            write.status = True
        for run_id, run in self._active.items():
            if run_id not in batch:
                batch[run_id] = _RunWrite(run)
        if self._deferred:
            self._hold_young(batch, deferring)
        for run_id in list(batch):
            if run_id in self._aside:
                if batch.pop(run_id).run.status in FINISHED:
                    self._aside.discard(run_id)  # it will not change again
                continue
            try:
                batch[run_id].build(self.owner, self._inserted, self._in_flight.get(run_id, ()),
                                  run_id in self._active, now)
            except Exception as error:  # noqa: BLE001 - e.g. a value whose str() raises
                refused.append((batch.pop(run_id), error))
        return {run_id: write for run_id, write in batch.items() if not write.empty}, refused

    def _hold_young(self, batch: dict[str, _RunWrite], deferring: bool) -> None:
        """Runs whose start is deferred, still running and young, go back to the queue unwritten."""
        now = time.monotonic()
        for run_id, until in list(self._deferred.items()):
            write = batch.get(run_id)  # every running run is in the batch (see above)
            if deferring and write is not None and self._held(write.run) and now < until:
                del batch[run_id]
                self._requeue([write])
            else:
                del self._deferred[run_id]

    def _write(self, batch: dict[str, _RunWrite]) -> None:
        inserts = [row for w in batch.values() for row in w.inserts]
        updates = [row for w in batch.values() for row in w.updates]
        node_rows = [row for w in batch.values() for row in w.node_rows]  # started rows included
        if self._conn is None:
            self._conn = self.engine.connect()
        conn = self._conn
        try:
            with conn.begin():
                if inserts:
                    self._upsert_runs(conn, inserts)
                if updates:
                    conn.execute(self._update_runs, updates)
                if node_rows:
                    self._upsert_nodes(conn, node_rows)
        except Exception:
            self._release_connection()  # a lost connection is not used again
            raise

    def _release_connection(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except Exception:  # noqa: BLE001 - a dead connection: nothing to give back
                log.debug("run store: closing the write connection failed", exc_info=True)

    def _write_each_run(self, batch: dict[str, _RunWrite], error: Exception) -> None:
        """The batch failed. A lost connection or a locked database: everything is retried by the next
        flush. Anything else: each run is written in its own transaction, so only a run whose own rows the
        database refuses is set aside (its error recorded) and no other run loses a record."""
        if _transient(error):
            log.warning("could not write run state, will retry: %s", _first_line(error))
            self._requeue(batch.values())
            return
        for write in batch.values():
            try:
                self._write({write.run.run_id: write})
            except Exception as run_error:  # noqa: BLE001 - see above
                if _transient(run_error):
                    self._requeue([write])
                else:
                    self._set_aside(write, run_error)
                continue
            self._written({write.run.run_id: write})

    def _requeue(self, writes: Any) -> None:
        with self._lock:  # a change queued since the batch was taken is newer: it stays
            for write in writes:
                for key, value in write.nodes.items():
                    self._nodes.setdefault(key, value)
                if write.status:
                    self._runs.setdefault(write.run.run_id, write.run)

    def _set_aside(self, write: _RunWrite, error: BaseException) -> None:
        """Stop writing this run and record why on its row (a minimal row if it has none yet)."""
        run = write.run
        message = plain_text(f"the run's records could not be stored: {_first_line(error)}")
        log.error("run %s set aside: %s", run.run_id, message)
        with self._lock:
            if run.status not in FINISHED:  # until it finishes, later changes of this run are not written
                self._aside.add(run.run_id)
            self._active.pop(run.run_id, None)
            self._in_flight.pop(run.run_id, None)
            self._inserted.discard(run.run_id)
        now = time.time()
        state = {"status": "failed", "error": message, "finished_at": now,
                 "duration_ms": round((now - run.started_at) * 1000, 3)}
        try:
            with self.engine.begin() as conn:
                if conn.execute(update(RUNS).where(RUNS.c.id == run.run_id).values(state)).rowcount == 0:
                    graph = run.plan.graph
                    conn.execute(RUNS.insert().values(
                        id=run.run_id, graph_id=plain_text(graph.id), graph_version=graph.version, graph_json="null",
                        trigger_id=plain_text(run.trigger_id), started_at=run.started_at, owner=self.owner,
                        heartbeat_at=now, **state))
        except Exception:  # noqa: BLE001 - the database itself is failing: logged, nothing more to do
            log.exception("could not record that run %s was set aside", run.run_id)

    def _written(self, batch: dict[str, _RunWrite]) -> None:
        with self._lock:
            for run_id, write in batch.items():
                if write.status:
                    self._inserted.add(run_id)
                for row in write.started:
                    self._in_flight.setdefault(run_id, set()).add(row["node_id"])
                for (_, node_id), (_, _, record) in write.nodes.items():
                    if record.status != "running" and run_id in self._in_flight:
                        self._in_flight[run_id].discard(node_id)
                if write.status and write.run.status in FINISHED:
                    self._inserted.discard(run_id)
                    self._in_flight.pop(run_id, None)

    def close(self) -> None:
        """Flush, stop the timer and release the engine if this store created it."""
        self.flush()
        with self._write_lock:
            self._release_connection()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._owns_engine:
            self.engine.dispose()

    def mark_interrupted(self) -> list[str]:
        """Runs left `running` by a process that is gone become `interrupted` (see RunControl.recover)."""
        self.flush()
        return RunControl(self.engine, self.owner).recover()

    def adopt(self, run_id: str) -> None:
        """A run restored from its record: its row exists, so later writes update it."""
        with self._lock:
            self._inserted.add(run_id)

    # -- reading -----------------------------------------------------------------------------------

    def list_runs(self, graph_id: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
        """The latest runs (optionally of one graph), newest first, without graph and payload.

        Each has `trigger_name`: the trigger node's name in that run (None before the trigger ran).
        """
        self.flush()
        trigger = and_(NODES.c.run_id == RUNS.c.id, NODES.c.node_id == RUNS.c.trigger_id)
        query = (select(*_SUMMARY, NODES.c.node_name.label("trigger_name")).select_from(RUNS.outerjoin(NODES, trigger))
                 .order_by(RUNS.c.started_at.desc()).limit(limit))
        if graph_id is not None:
            query = query.where(RUNS.c.graph_id == graph_id)
        with self.engine.connect() as conn:
            return [dict(r) for r in conn.execute(query).mappings()]

    def child_runs(self, run_id: str) -> list[dict[str, Any]]:
        """The runs `run_id`'s Execute Graph nodes started, oldest first: id, graph_id, parent_node_id, status."""
        self.flush()
        query = (select(RUNS.c.id, RUNS.c.graph_id, RUNS.c.parent_node_id, RUNS.c.status)
                 .where(RUNS.c.parent_run_id == run_id).order_by(RUNS.c.started_at))
        with self.engine.connect() as conn:
            return [dict(r) for r in conn.execute(query).mappings()]

    def last_payload(self, graph_id: str, trigger_id: str) -> tuple[bool, Any]:
        """(found, payload) of the latest run of `graph_id` started at `trigger_id`."""
        self.flush()
        query = (select(RUNS.c.payload_json).where(RUNS.c.graph_id == graph_id, RUNS.c.trigger_id == trigger_id)
                 .order_by(RUNS.c.started_at.desc()).limit(1))
        with self.engine.connect() as conn:
            row = conn.execute(query).first()
        return (False, None) if row is None else (True, _loads(row[0]))

    def open_runs(self, graph_id: str) -> list[str]:
        """A graph's runs that are not over: running, paused, or interrupted while a node waits for an answer."""
        self.flush()
        query = select(RUNS.c.id).where(RUNS.c.graph_id == graph_id, RUNS.c.status.in_(("running", "paused")) | (
            (RUNS.c.status == "interrupted") & waits_for_answer(RUNS.c.id)))
        with self.engine.connect() as conn:
            return list(conn.execute(query).scalars())

    def due_pauses(self, now: float, limit: int = 100) -> list[tuple[str, str]]:
        """(run id, node id) of paused nodes whose `resume_at` has come, earliest first, in runs still waiting
        (paused, or interrupted by a restart)."""
        self.flush()
        query = (select(NODES.c.run_id, NODES.c.node_id).join(RUNS, RUNS.c.id == NODES.c.run_id)
                 .where(NODES.c.status == "paused", NODES.c.resume_at <= now,
                        RUNS.c.status.in_(("paused", "interrupted")))
                 .order_by(NODES.c.resume_at).limit(limit))
        with self.engine.connect() as conn:
            return [tuple(row) for row in conn.execute(query)]

    def graph_of(self, run_id: str) -> str | None:
        """The graph a run belongs to (None: no such run); access checks find the run's workspace with it."""
        self.flush()  # a run started a moment ago may still be in the write buffer
        with self.engine.connect() as conn:
            return conn.execute(select(RUNS.c.graph_id).where(RUNS.c.id == run_id)).scalar()

    def get_run(self, run_id: str) -> dict[str, Any] | None:
        """One run with its graph, payload and nodes (in the order they last changed), or None."""
        self.flush()
        with self.engine.connect() as conn:
            row = conn.execute(select(RUNS).where(RUNS.c.id == run_id)).mappings().first()
            if row is None:
                return None
            nodes = _node_rows(conn, run_id)
        run = {c.name: row[c.name] for c in _SUMMARY}
        run["graph"], run["payload"] = _loads(row["graph_json"]), _loads(row["payload_json"])
        run["context"] = _loads(row["context_json"]) or {}
        run["nodes"] = [_node_dict(r, inputs, outputs) for r, inputs, outputs in nodes]
        return run


# -- rows -------------------------------------------------------------------------------------------

@dataclass(slots=True)
class _RunWrite:
    """One run's share of a flush: the changes queued since the last one, then the rows built from them."""

    run: Run
    nodes: dict[tuple[str, str], tuple[Run, str, NodeRecord]] = field(default_factory=dict)
    status: bool = False  # the run's status changed
    inserts: list[dict[str, Any]] = field(default_factory=list)
    updates: list[dict[str, Any]] = field(default_factory=list)
    node_rows: list[dict[str, Any]] = field(default_factory=list)
    started: list[dict[str, Any]] = field(default_factory=list)  # nodes in flight the database does not show yet

    def build(self, owner: str | None, inserted: set[str], in_flight: Any, active: bool, now: float) -> None:
        run = self.run
        if self.status:
            if run.run_id in inserted:
                self.updates.append(_run_state(run))
            else:
                self.inserts.append(_run_row(run, owner))
        self.node_rows = [_node_row(run, node_id, record, now) for _, node_id, record in self.nodes.values()]
        if active:
            self.started = [_node_row(run, node_id, record, now) for node_id, record in run.records.items()
                            if record.status == "running" and node_id not in in_flight
                            and (run.run_id, node_id) not in self.nodes]
        self.node_rows += self.started

    @property
    def empty(self) -> bool:
        return not (self.inserts or self.updates or self.node_rows)


def _run_state(run: Run) -> dict[str, Any]:
    finished = run.finished_at if run.status in FINISHED else None
    return {"run_id": run.run_id, "status": run.status, "error": plain_text(run.error), "finished_at": finished,
            "duration_ms": round((finished - run.started_at) * 1000, 3) if finished is not None else None}


def _run_row(run: Run, owner: str | None) -> dict[str, Any]:
    graph = run.plan.graph
    row = _run_state(run)
    row["id"] = row.pop("run_id")
    row.update(graph_id=graph.id, graph_version=graph.version, graph_json=_graph_json(graph),
               trigger_id=run.trigger_id, payload_json=_dumps(run.payload), started_at=run.started_at,
               started_by=run.context.get(STARTED_BY), started_by_user=run.context.get("user"),
               context_json=_dumps(run.context), owner=owner,
               parent_run_id=run.context.get(PARENT_RUN), parent_node_id=run.context.get(PARENT_NODE))
    return row


_GRAPH_JSON: dict[int, tuple[weakref.ref, str]] = {}  # id(graph) -> (the graph, its JSON)


def _graph_json(graph: Any) -> str:
    """The graph's JSON, made once per graph object: the runs of a webhook or schedule share their version's
    graph (a graph a run holds is never changed in place; an edit makes a new one)."""
    known = _GRAPH_JSON.get(id(graph))
    if known is not None and known[0]() is graph:
        return known[1]
    text = graph.model_dump_json()
    if len(_GRAPH_JSON) >= 256:
        _GRAPH_JSON.clear()
    _GRAPH_JSON[id(graph)] = (weakref.ref(graph), text)
    return text


def _node_row(run: Run, node_id: str, record: NodeRecord, now: float) -> dict[str, Any]:
    pn = run.plan.nodes[node_id]
    inputs, refs = _split_inputs(run, pn, record.inputs) if record.inputs else (record.inputs, None)
    wait = record.wait
    return {"run_id": run.run_id, "node_id": node_id, "node_type": pn.node.type, "node_name": plain_text(pn.node.name),
            "status": record.status, "inputs_json": _dumps(inputs), "input_refs_json": _dumps(refs),
            "outputs_json": _dumps(record.outputs), "error": plain_text(record.error), "duration_ms": record.duration_ms,
            "sequence": record.sequence, "cached": record.cached, "updated_at": now,
            "checkpoint_json": _dumps(record.checkpoint),
            "wait_json": None if wait is None else _dumps(_wait(wait)),
            "resume_at": wait.resume_at if wait is not None and record.status == "paused" else None}


def _wait(wait: WaitForInput) -> dict[str, Any]:
    """A pause as its record keeps it; `resume_at` only for a timed one."""
    kept = {"prompt": wait.prompt, "options": wait.options, "detail": wait.detail}
    return kept if wait.resume_at is None else {**kept, "resume_at": wait.resume_at}


def _split_inputs(run: Run, pn: PlanNode, inputs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """Inputs that are (the very object of) an upstream output become references; the rest stay values."""
    values: dict[str, Any] = {}
    refs: dict[str, Any] = {}
    for handle, value in inputs.items():
        sources = [(e.source, e.sourceHandle) for e in pn.flow_in if e.targetHandle == handle]
        socket = pn.inputs.get(handle)
        if sources and socket is not None and socket.multiple and isinstance(value, list):
            items = [_source_of(item, sources, run.records) for item in value]
            if any(items):
                refs[handle] = {"items": items}
                value = [None if ref else item for item, ref in zip(value, items)]
        elif sources and (ref := _source_of(value, sources, run.records)) is not None:
            refs[handle] = {"from": ref}
            continue
        values[handle] = value
    return values, refs or None


def _source_of(value: Any, sources: list[tuple[str, str]], records: dict[str, NodeRecord]) -> list[str] | None:
    for node_id, port in sources:
        record = records.get(node_id)
        outputs = record.outputs if record is not None else None
        if outputs and port in outputs and outputs[port] is value:
            return [node_id, port]
    return None


def _inputs(row: Any, outputs: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """A node's inputs as the kernel had them: stored values plus references resolved to upstream outputs."""
    inputs = _loads(row["inputs_json"])
    refs = _loads(row["input_refs_json"])
    if not refs:
        return inputs
    inputs = dict(inputs or {})

    def output(ref: list[str]) -> Any:
        return (outputs.get(ref[0]) or {}).get(ref[1])

    for handle, ref in refs.items():
        if "from" in ref:
            inputs[handle] = output(ref["from"])
        else:
            stored = inputs.get(handle) or [None] * len(ref["items"])
            inputs[handle] = [output(r) if r else v for v, r in zip(stored, ref["items"])]
    return inputs


def _node_rows(conn: Any, run_id: str) -> list[tuple[Any, dict[str, Any] | None, dict[str, Any] | None]]:
    """(row, inputs, outputs) of every node of a run, in the order they last changed."""
    rows = conn.execute(select(NODES).where(NODES.c.run_id == run_id)
                        .order_by(NODES.c.sequence, NODES.c.node_id)).mappings().all()
    outputs = {r["node_id"]: _loads(r["outputs_json"]) for r in rows}
    return [(r, _inputs(r, outputs), outputs[r["node_id"]]) for r in rows]


def _node_dict(row: Any, inputs: dict[str, Any] | None, outputs: dict[str, Any] | None) -> dict[str, Any]:
    node = {k: v for k, v in row.items() if not k.endswith("_json")}
    node.update(cached=bool(row["cached"]), inputs=inputs, outputs=outputs, wait=_loads(row["wait_json"]),
                checkpoint=_loads(row["checkpoint_json"]))
    return node


def _upserter(table: Table, dialect: Dialect, keys: tuple[str, ...], changing: tuple[str, ...],
              clock: tuple[str, ...] = (), schemas: dict[str | None, str] | None = None
              ) -> Callable[[Any, list[dict[str, Any]]], None]:
    """`write(conn, rows)`: insert rows, or update `changing` where the key exists (one statement when possible).
    `clock`: columns an insert sets to the database's clock (`db_clock`). Rows hold every other column. `schemas`:
    the engine's `schema_translate_map` (PostgreSQL in a schema of its own)."""
    if dialect.name in ("sqlite", "postgresql"):
        insert = (sqlite if dialect.name == "sqlite" else postgresql).insert(table).values(
            {c: db_clock(dialect.name) for c in clock})
        statement = insert.on_conflict_do_update(index_elements=list(keys),
                                                 set_={c: insert.excluded[c] for c in changing})
        return _compiled_once(statement, [c.name for c in table.columns if c.name not in clock], dialect, schemas)
    by_key = update(table).where(*(table.c[k] == bindparam(f"key_{k}") for k in keys)).values(
        {c: bindparam(c) for c in changing})

    def write(conn: Any, rows: list[dict[str, Any]]) -> None:  # any other database: update, else insert
        for row in rows:
            if conn.execute(by_key, {**row, **{f"key_{k}": row[k] for k in keys}}).rowcount == 0:
                conn.execute(table.insert().values({c: db_clock(dialect.name) for c in clock}), row)
    return write


def _compiled_once(statement: Any, columns: list[str], dialect: Dialect,
                   schemas: dict[str | None, str] | None) -> Callable[[Any, list[dict[str, Any]]], None]:
    """`write(conn, rows)` of an insert of `columns`, compiled here once: the driver gets its SQL and each row's
    values converted by their column's type as SQLAlchemy's own execute would (a float column's `to_float`, a
    boolean's check). `conn.execute(statement, rows)` looked the compiled statement up and rebuilt every row's
    parameters on each write: ~5% of a webhook call's CPU on SQLite (benchmarks/README.md, session 19). Through
    `exec_driver_sql`, so its errors are SQLAlchemy's as before (a lost connection, a locked database: see
    `_transient`)."""
    compiled = statement.compile(dialect=dialect, column_keys=columns, schema_translate_map=schemas,
                                 render_schema_translate=bool(schemas))
    sql, binds, positional = compiled.string, compiled.binds, compiled.positiontup is not None
    fixed: dict[str, Any] = {}  # parameters of the statement itself (the clock's), converted once
    convert: dict[str, Callable[[Any], Any]] = {}
    for name, bind in binds.items():
        process = bind.type.bind_processor(dialect)
        if name not in columns:
            fixed[name] = process(bind.value) if process is not None else bind.value
        elif process is not None:
            convert[name] = process
    order = list(compiled.positiontup if positional else binds)

    def parameters(row: dict[str, Any]) -> Any:
        values = [fixed[name] if name in fixed else convert[name](row[name]) if name in convert else row[name]
                  for name in order]
        return tuple(values) if positional else dict(zip(order, values))

    return lambda conn, rows: conn.exec_driver_sql(sql, [parameters(row) for row in rows])


# -- values the database cannot hold ------------------------------------------------------------------
#
# Run values come from outside, so nothing may make a row unwritable: NUL and lone surrogates are
# escaped (store/encoding.py); cycles, values nested deeper than MAX_DEPTH, whole numbers str() refuses
# and non-JSON objects degrade to strings rather than failing the write.


def _dumps(value: Any) -> str | None:
    """JSON text the database can hold; anything JSON cannot hold degrades to its string."""
    if value is None:
        return None
    try:
        return json_text(value)
    except (TypeError, ValueError, RecursionError):  # non-string keys, cycles, deep nesting, huge numbers
        return json_text(_plain(value, set()))


def _plain(value: Any, path: set[int]) -> Any:
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:  # str() refuses it
        return f"<a whole number of {value.bit_length()} bits>"
    if isinstance(value, (dict, list, tuple, set, frozenset)):
        if id(value) in path:
            return "<circular>"
        if len(path) >= MAX_DEPTH:
            return f"<nested deeper than {MAX_DEPTH} levels>"
        path = path | {id(value)}
        if isinstance(value, dict):
            return {str(k): _plain(v, path) for k, v in value.items()}
        return [_plain(v, path) for v in value]
    return value


def _loads(text: str | None) -> Any:
    return None if text is None else json.loads(text)



def _first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


def _transient(error: BaseException) -> bool:
    """A lost connection or a locked database: the same write may well succeed a moment later."""
    return isinstance(error, (OperationalError, InterfaceError)) or (
        isinstance(error, DBAPIError) and error.connection_invalidated)
