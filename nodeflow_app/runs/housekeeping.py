"""Housekeeping, once an hour across all processes: old runs pruned, stored files no record refers to deleted.

Every worker runs the loop; the hour's lease (a `schedule_fire` row of its own, unique like a schedule's due
time) lets one process do the work. A file is deleted only when no record mentions it and it was last written
over an hour ago and before the oldest running run started: a run that stored it a moment ago (or stored
the same content again, which rewrites the file) has written its record by then, and a running run may hold
references in memory only (a Loop's passes, a child run). Only the folders of workspaces the database knows
are swept: run against a database that is not the install's, the pass deletes no file. A retention setting that is no number is
logged, naming it, and nothing is pruned until it is fixed (keeping data is the safe side).
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass

from sqlalchemy import Engine

from nodeflow_app.files import delete_interrupted_writes, delete_unreferenced, old_stored_files
from nodeflow_app.knowledge.sources import UPLOADS_FOLDER
from nodeflow_app.runs.periodic import every
from nodeflow_app.settings import data_dir
from nodeflow_app.store.accounts import AccountStore
from nodeflow_app.store.retention import (
    DAY, Retention, RetentionError, known_workspaces, oldest_running_start, prune_fires, prune_runs,
    referenced_file_ids,
)
from nodeflow_app.store.triggers import TriggerStore

log = logging.getLogger("nodeflow.housekeeping")

INTERVAL = 3600.0  # seconds between passes; the lease is per interval
FIRST_PASS_AFTER = 60.0  # seconds after start: not while the app is starting
FILE_GRACE = 3600.0  # a stored file younger than this is never deleted
LEASE = ("nodeflow:housekeeping", "pass")  # (graph_id, node_id) of the lease rows: no graph id has a colon


@dataclass(frozen=True)
class Report:
    runs: int
    leases: int
    files: int
    file_bytes: int
    sign_ins: int = 0  # ended sessions and old failed sign-ins


def housekeep_once(engine: Engine, owner: str, now: float | None = None) -> Report | None:
    """This interval's pass, if no other process took it; None when another did (or the settings are wrong)."""
    now = time.time() if now is None else now
    if not TriggerStore(engine).claim_fire(*LEASE, now // INTERVAL * INTERVAL, owner):
        return None
    try:
        report = housekeep(engine, now)
    except RetentionError as error:
        log.error("runs are not pruned: %s", error)
        return None
    if report.runs or report.files:
        log.info("housekeeping: %d runs pruned, %d stored files (%d bytes) no record refers to deleted",
                 report.runs, report.files, report.file_bytes)
    return report


def housekeep(engine: Engine, now: float | None = None) -> Report:
    """The pass itself, now (`nodeflow housekeep`); a RetentionError names a setting that is no number."""
    now = time.time() if now is None else now
    runs = prune_runs(engine, Retention.from_environment(), now)
    leases = prune_fires(engine, now - DAY)
    oldest_running = oldest_running_start(engine)
    files, size = _sweep_files(engine, min(now - FILE_GRACE, oldest_running if oldest_running is not None else now))
    return Report(runs, leases, files, size, AccountStore(engine).forget_expired(now))


def _sweep_files(engine: Engine, last_written_before: float) -> tuple[int, int]:
    """Stored files no record refers to, and knowledge uploads a killed process left half written."""
    partial_uploads = delete_interrupted_writes(data_dir() / UPLOADS_FOLDER, last_written_before)
    candidates = old_stored_files(last_written_before, known_workspaces(engine))
    if not candidates:  # nothing old enough: spare the database the look at every record
        return partial_uploads
    files, size = delete_unreferenced(candidates, referenced_file_ids(engine), last_written_before)
    return files + partial_uploads[0], size + partial_uploads[1]


async def run_housekeeping() -> None:
    """The Reflex lifespan task: this worker's housekeeping loop on the process's launcher."""
    from nodeflow_app.runs.launcher import run_launcher

    launcher = await asyncio.to_thread(run_launcher)
    await asyncio.sleep(FIRST_PASS_AFTER)
    await every(INTERVAL, lambda: asyncio.to_thread(housekeep_once, launcher.engine, launcher.owner), log,
                "housekeeping")
