"""What the database keeps: finished runs up to an age and a number per graph, the schedules' leases of the last
day, and which stored files any record still refers to.

Like n8n's execution pruning, the history of runs does not grow without end: a webhook called a few times a
second writes millions of runs a month. Runs still going (running, paused for an answer) are never pruned,
nor a finished run whose calling run is still going. `NODEFLOW_RUNS_MAX_AGE_DAYS` (30) and
`NODEFLOW_RUNS_MAX_PER_GRAPH` (10,000) set the limits; 0 turns either off.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Iterator

from sqlalchemy import ColumnElement, Engine, Select, Table, and_, delete, exists, func, or_, select
from sqlalchemy.orm import aliased

from nodeflow_app.files import DEFAULT_WORKSPACE
from nodeflow_app.store.models import (
    ChatMessageRow, GraphRow, GraphVersionRow, NodeRunRow, PinnedOutputRow, RunRequestRow, RunRow,
    ScheduleFireRow, TemplateRow, WebhookTestRow, WorkspaceRow,
)
from nodeflow_app.store.runs import FINISHED, waits_for_answer

RUNS: Table = RunRow.__table__  # type: ignore[attr-defined]
NODES: Table = NodeRunRow.__table__  # type: ignore[attr-defined]
REQUESTS: Table = RunRequestRow.__table__  # type: ignore[attr-defined]
FIRES: Table = ScheduleFireRow.__table__  # type: ignore[attr-defined]

MAX_AGE_ENV, MAX_PER_GRAPH_ENV = "NODEFLOW_RUNS_MAX_AGE_DAYS", "NODEFLOW_RUNS_MAX_PER_GRAPH"
DEFAULT_MAX_AGE_DAYS, DEFAULT_MAX_PER_GRAPH = 30.0, 10_000
DAY = 86_400.0
BATCH = 500  # runs deleted per transaction: short locks, so runs being written meanwhile barely wait

# The text columns a file reference can be written in, and whether only texts that mention "file_id" count.
# A bare file id (a parameter, a pin, a payload may hold one: `files.file_path` takes it) is found in every
# text but the run records' big ones: there a reference is an output of the node that stored the file (with
# its file_id key), kept as long as the run that also holds any bare copy of it.
_MAY_HOLD_FILES: tuple[tuple[type, tuple[str, ...], bool], ...] = (
    (RunRow, ("graph_json",), True),
    (RunRow, ("payload_json", "context_json"), False),
    (NodeRunRow, ("inputs_json", "outputs_json", "wait_json", "checkpoint_json"), True),
    (RunRequestRow, ("payload_json",), False),
    (GraphRow, ("graph_json",), False),
    (GraphVersionRow, ("graph_json",), False),
    (TemplateRow, ("graph_json",), False),
    (ChatMessageRow, ("blocks_json",), False),
    (PinnedOutputRow, ("outputs_json",), False),
    (WebhookTestRow, ("payload_json",), False),
)
_FILE_ID = re.compile(r"(?<![0-9a-f])[0-9a-f]{64}(?![0-9a-f])")


class RetentionError(ValueError):
    """A retention setting that is no number; the message names the variable."""


@dataclass(frozen=True)
class Retention:
    max_age_days: float  # 0: no age limit
    max_per_graph: int  # 0: no count limit

    @classmethod
    def from_environment(cls) -> Retention:
        return cls(_setting(MAX_AGE_ENV, DEFAULT_MAX_AGE_DAYS, float),
                   int(_setting(MAX_PER_GRAPH_ENV, DEFAULT_MAX_PER_GRAPH, int)))


def _setting(name: str, default: float, kind: type) -> float:
    raw = os.environ.get(name, "").strip()
    try:
        value = kind(raw) if raw else default
    except ValueError:
        value = -1
    if value < 0 or value != value:  # NaN
        raise RetentionError(f"{name} must be a number of {'days' if kind is float else 'runs'} (0 keeps all), "
                             f"got {raw!r}")
    return value


def prune_runs(engine: Engine, retention: Retention, now: float) -> int:
    """Delete the finished runs past the age, and beyond the newest `max_per_graph` of their graph (those that
    finished within the last day excepted: a caller may still be polling for the result), with their nodes'
    records and requests; returns how many runs went."""
    deleted = 0
    if retention.max_age_days > 0:
        cutoff = now - retention.max_age_days * DAY
        old = and_(RUNS.c.started_at < cutoff, func.coalesce(RUNS.c.finished_at, RUNS.c.started_at) < cutoff)
        deleted += _delete_runs(engine, select(RUNS.c.id).where(_prunable(), old))
    if retention.max_per_graph > 0:
        for graph_id in _crowded_graphs(engine, retention.max_per_graph):
            newest_kept = _nth_newest_start(engine, graph_id, retention.max_per_graph)
            if newest_kept is None:
                continue
            beyond = and_(RUNS.c.graph_id == graph_id, RUNS.c.started_at < newest_kept,
                          func.coalesce(RUNS.c.finished_at, RUNS.c.started_at) < now - DAY)
            deleted += _delete_runs(engine, select(RUNS.c.id).where(_prunable(), beyond))
    return deleted


def going(runs: Any = RUNS) -> ColumnElement[bool]:
    """A run still going: running, paused, or interrupted while a node waited for an answer (it can still be
    answered: see RunControl and ChatStore.mark_interrupted). `runs`: the run table or an alias of it."""
    return or_(runs.c.status.not_in(FINISHED), and_(runs.c.status == "interrupted", waits_for_answer(runs.c.id)))


def _prunable() -> ColumnElement[bool]:
    """Not going, and not called by a run that is still going (its record of this run must stay readable)."""
    parent = aliased(RUNS)
    parent_going = exists().where(parent.c.id == RUNS.c.parent_run_id, going(parent))
    return and_(~going(), or_(RUNS.c.parent_run_id.is_(None), ~parent_going))


def _crowded_graphs(engine: Engine, limit: int) -> list[str]:
    query = (select(RUNS.c.graph_id).where(RUNS.c.status.in_(FINISHED)).group_by(RUNS.c.graph_id)
             .having(func.count() > limit))
    with engine.connect() as conn:
        return list(conn.execute(query).scalars())


def _nth_newest_start(engine: Engine, graph_id: str, n: int) -> float | None:
    """When the graph's n-th newest finished run started (read once: the deletes then walk the index below it)."""
    query = (select(RUNS.c.started_at).where(RUNS.c.graph_id == graph_id, RUNS.c.status.in_(FINISHED))
             .order_by(RUNS.c.started_at.desc()).offset(n - 1).limit(1))
    with engine.connect() as conn:
        return conn.execute(query).scalar()  # None: pruned meanwhile (another pass, `nodeflow housekeep`)


def _delete_runs(engine: Engine, ids_query: Select) -> int:
    deleted = 0
    while True:
        with engine.begin() as conn:
            ids = list(conn.execute(ids_query.limit(BATCH)).scalars())
            if not ids:
                return deleted
            # The run rows first, checked again: one resumed or taken over meanwhile stays whole.
            gone = conn.execute(delete(RUNS).where(RUNS.c.id.in_(ids), _prunable())).rowcount
            # Explicit, not only ON DELETE CASCADE: SQLite enforces foreign keys only when the pragma is on.
            for table in (NODES, REQUESTS):
                conn.execute(delete(table).where(table.c.run_id.in_(ids), ~exists().where(RUNS.c.id == table.c.run_id)))
        if not gone:
            return deleted
        deleted += gone


def prune_fires(engine: Engine, before: float) -> int:
    """Delete schedule leases fired before `before`, except each schedule's latest (a missed run "run once"
    looks back to it). Due times that old are never claimed again."""
    later = aliased(FIRES)
    superseded = exists().where(later.c.graph_id == FIRES.c.graph_id, later.c.node_id == FIRES.c.node_id,
                                later.c.due_at > FIRES.c.due_at)
    with engine.begin() as conn:
        return conn.execute(delete(FIRES).where(FIRES.c.fired_at < before, superseded)).rowcount


def referenced_file_ids(engine: Engine) -> set[str]:
    """Every stored file id some record refers to. Generous on purpose: any 64-hex-digit word counts, however
    the text was encoded, so a file in use is never taken for garbage."""
    found: set[str] = set()
    for text in _texts_that_may_hold_files(engine):
        found.update(_FILE_ID.findall(text))
    return found


def oldest_running_start(engine: Engine) -> float | None:
    """When the oldest running run started: files stored since may be held by it in memory only (a Loop's
    passes, a child run), so none of them is taken for garbage while it runs. (A paused run does not hold the
    sweep back: what it resumes from is on record, and an approval nobody answers must not stop it for ever.)"""
    with engine.connect() as conn:
        return conn.execute(select(func.min(RUNS.c.started_at)).where(RUNS.c.status == "running")).scalar()


def known_workspaces(engine: Engine) -> set[str]:
    """The workspaces whose stored files this database speaks for: its workspaces, and "default" (runs before
    accounts) when it holds any graph or run. A database that is not the install's (a shell without its
    REFLEX_DB_URL, a fresh file) knows none of them, so the sweep leaves every file alone."""
    with engine.connect() as conn:
        known = set(conn.execute(select(WorkspaceRow.__table__.c.id)).scalars())  # type: ignore[attr-defined]
        graphs: Table = GraphRow.__table__  # type: ignore[attr-defined]
        if conn.execute(select(RUNS.c.id).limit(1)).first() or conn.execute(select(graphs.c.id).limit(1)).first():
            known.add(DEFAULT_WORKSPACE)
    return known


def _texts_that_may_hold_files(engine: Engine) -> Iterator[str]:
    for model, names, mentioning_only in _MAY_HOLD_FILES:
        table: Table = model.__table__  # type: ignore[attr-defined]
        for name in names:
            column = table.c[name]
            query = select(column).where(column.contains("file_id") if mentioning_only else column.is_not(None))
            with engine.connect() as conn:
                yield from conn.execution_options(yield_per=200).execute(query).scalars()
