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
from typing import Iterator

from sqlalchemy import Engine, Table, and_, delete, exists, func, or_, select
from sqlalchemy.orm import aliased

from nodeflow_app.store.models import (
    ChatMessageRow, GraphRow, GraphVersionRow, NodeRunRow, PinnedOutputRow, RunRequestRow, RunRow,
    ScheduleFireRow, TemplateRow, WebhookTestRow,
)
from nodeflow_app.store.runs import FINISHED

RUNS: Table = RunRow.__table__  # type: ignore[attr-defined]
NODES: Table = NodeRunRow.__table__  # type: ignore[attr-defined]
REQUESTS: Table = RunRequestRow.__table__  # type: ignore[attr-defined]
FIRES: Table = ScheduleFireRow.__table__  # type: ignore[attr-defined]

MAX_AGE_ENV, MAX_PER_GRAPH_ENV = "NODEFLOW_RUNS_MAX_AGE_DAYS", "NODEFLOW_RUNS_MAX_PER_GRAPH"
DEFAULT_MAX_AGE_DAYS, DEFAULT_MAX_PER_GRAPH = 30.0, 10_000
DAY = 86_400.0
BATCH = 500  # runs deleted per transaction: short locks, so runs being written meanwhile barely wait

# The text columns a file reference ({"file_id": ...}) can be written in: run records, graphs (and their
# versions and templates), chat messages, pinned outputs, answers to paused runs and webhook test payloads.
_MAY_HOLD_FILES: tuple[tuple[type, tuple[str, ...]], ...] = (
    (RunRow, ("graph_json", "payload_json", "context_json")),
    (NodeRunRow, ("inputs_json", "outputs_json", "wait_json", "checkpoint_json")),
    (RunRequestRow, ("payload_json",)),
    (GraphRow, ("graph_json",)),
    (GraphVersionRow, ("graph_json",)),
    (TemplateRow, ("graph_json",)),
    (ChatMessageRow, ("blocks_json",)),
    (PinnedOutputRow, ("outputs_json",)),
    (WebhookTestRow, ("payload_json",)),
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
    """Delete the finished runs past the age or beyond the newest `max_per_graph` of their graph, with their
    nodes' records and requests; returns how many runs went."""
    deleted = 0
    if retention.max_age_days > 0:
        cutoff = now - retention.max_age_days * DAY
        old = and_(RUNS.c.started_at < cutoff, func.coalesce(RUNS.c.finished_at, RUNS.c.started_at) < cutoff)
        deleted += _delete_runs(engine, select(RUNS.c.id).where(_prunable(), old))
    if retention.max_per_graph > 0:
        for graph_id in _crowded_graphs(engine, retention.max_per_graph):
            beyond = (select(RUNS.c.id).where(_prunable(), RUNS.c.graph_id == graph_id)
                      .order_by(RUNS.c.started_at.desc(), RUNS.c.id.desc()).offset(retention.max_per_graph))
            deleted += _delete_runs(engine, beyond)
    return deleted


def _prunable():  # noqa: ANN202 - a SQL condition
    """Finished, and not called by a run that is still going (its record of this run must stay readable)."""
    parent = aliased(RUNS)
    parent_going = exists().where(parent.c.id == RUNS.c.parent_run_id, parent.c.status.not_in(FINISHED))
    return and_(RUNS.c.status.in_(FINISHED), or_(RUNS.c.parent_run_id.is_(None), ~parent_going))


def _crowded_graphs(engine: Engine, limit: int) -> list[str]:
    query = (select(RUNS.c.graph_id).where(RUNS.c.status.in_(FINISHED)).group_by(RUNS.c.graph_id)
             .having(func.count() > limit))
    with engine.connect() as conn:
        return list(conn.execute(query).scalars())


def _delete_runs(engine: Engine, ids_query) -> int:  # noqa: ANN001 - a select of run ids
    deleted = 0
    while True:
        with engine.begin() as conn:
            ids = list(conn.execute(ids_query.limit(BATCH)).scalars())
            if not ids:
                return deleted
            # Explicit, not only ON DELETE CASCADE: SQLite enforces foreign keys only when the pragma is on.
            conn.execute(delete(NODES).where(NODES.c.run_id.in_(ids)))
            conn.execute(delete(REQUESTS).where(REQUESTS.c.run_id.in_(ids)))
            conn.execute(delete(RUNS).where(RUNS.c.id.in_(ids)))
        deleted += len(ids)


def prune_fires(engine: Engine, before: float) -> int:
    """Delete schedule leases fired before `before`, except each schedule's latest (a missed run "run once"
    looks back to it). Due times that old are never claimed again."""
    later = aliased(FIRES)
    superseded = exists().where(later.c.graph_id == FIRES.c.graph_id, later.c.node_id == FIRES.c.node_id,
                                later.c.due_at > FIRES.c.due_at)
    with engine.begin() as conn:
        return conn.execute(delete(FIRES).where(FIRES.c.fired_at < before, superseded)).rowcount


def referenced_file_ids(engine: Engine) -> set[str]:
    """Every stored file id some record refers to. Generous on purpose: any 64-hex-digit word in a text that
    mentions a file_id counts, however the text was encoded, so a file in use is never taken for garbage."""
    found: set[str] = set()
    for text in _texts_mentioning_files(engine):
        found.update(_FILE_ID.findall(text))
    return found


def _texts_mentioning_files(engine: Engine) -> Iterator[str]:
    for model, names in _MAY_HOLD_FILES:
        table: Table = model.__table__  # type: ignore[attr-defined]
        for name in names:
            column = table.c[name]
            query = select(column).where(column.contains("file_id"))
            with engine.connect() as conn:
                for text in conn.execution_options(yield_per=200).execute(query).scalars():
                    yield text
