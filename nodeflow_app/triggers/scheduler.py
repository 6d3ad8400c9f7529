"""The scheduler (SPEC 6): one task per worker process fires every due time of the active graphs' Schedule
triggers exactly once across all processes.

Each tick (every second):
1. read the active graphs and the Schedule nodes of their live versions;
2. for each schedule, list the due times since the last tick (a schedule seen for the first time looks back
   to its activation, or to its last fired due time when missed runs are "run once", and fires only the
   latest of those; "skip" looks back one tick only);
3. for each due time, insert its lease row (unique per graph, node and due time): the process whose insert
   succeeds starts the run, every other process skips it.
An error in one schedule (or in reading one graph) is logged; the other schedules of the tick still fire. A
due time whose lease could not be written is tried again next tick (the lease still makes it exactly once).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Callable

from nodeflow_app.runs.caller import Caller, set_caller
from nodeflow_app.runs.detached import drive
from nodeflow_app.runs.launcher import RunLauncher
from nodeflow_app.runs.periodic import every
from nodeflow_app.runtime.graph import GraphInvalid
from nodeflow_app.runtime.plan import Plan
from nodeflow_app.store.graphs import GraphStore
from nodeflow_app.store.triggers import ActiveGraph, TriggerStore
from nodeflow_app.triggers.schedules import STARTED_BY, Spec, parse

log = logging.getLogger("nodeflow.scheduler")

TICK = 1.0  # seconds between looks at the clock


class Scheduler:
    def __init__(self, launcher: RunLauncher, triggers: TriggerStore | None = None, graphs: GraphStore | None = None,
                 *, tick: float = TICK, clock: Callable[[], float] = time.time):
        self.launcher, self.tick, self.clock = launcher, tick, clock
        self.triggers = triggers or TriggerStore(launcher.engine)
        self.graphs = graphs or GraphStore(launcher.engine)
        self._plans: dict[tuple[str, int], Plan | None] = {}
        self._cursor: dict[tuple[str, str], float] = {}  # (graph, node) -> due times up to here are handled
        self.started: list[str] = []  # run ids this process started (tests, logs)

    async def run_forever(self) -> None:
        await every(self.tick, self.tick_once, log, "the scheduler's tick")

    async def tick_once(self) -> list[str]:
        """Fire what is due now; returns the run ids started by this process in this tick."""
        now = self.clock()
        active = await asyncio.to_thread(self.triggers.active_graphs)
        started: list[str] = []
        seen: set[tuple[str, str]] = set()
        for graph in active:
            try:
                plan = await asyncio.to_thread(self._plan, graph.graph_id, graph.version)
                node_ids = self.launcher.triggers(plan, STARTED_BY) if plan is not None else []
            except Exception:  # noqa: BLE001 - one graph's trouble must not stop the others' schedules
                log.exception("schedules of graph %s could not be read; trying again next tick", graph.graph_id)
                seen.update(key for key in self._cursor if key[0] == graph.graph_id)  # keep their cursors
                continue
            for node_id in node_ids:
                seen.add((graph.graph_id, node_id))
                try:
                    started += await self._handle(graph, plan, node_id, now)
                except Exception:  # noqa: BLE001 - one schedule's trouble must not stop the others
                    log.exception("schedule %s of graph %s failed; trying again next tick", node_id, graph.graph_id)
        for key in set(self._cursor) - seen:  # deactivated: seen again later means activated again
            del self._cursor[key]
        return started

    async def _handle(self, graph: ActiveGraph, plan: Plan, node_id: str, now: float) -> list[str]:
        """Fire the due times of one Schedule node; the run ids started."""
        try:
            spec = parse(plan.nodes[node_id].node.data)
        except ValueError:
            return []  # activation refuses invalid schedules; an old bad version just does not fire
        key = (graph.graph_id, node_id)
        started = []
        for due in await self._due(graph, node_id, spec, now):
            # Just before this due time (they are whole seconds) until its lease is claimed, here or by another
            # process: if the claim fails (database locked, a failover), the next tick lists it again.
            self._cursor[key] = due - 1
            run_id = await self._fire(graph, plan, node_id, spec, due)
            if run_id:
                started.append(run_id)
        self._cursor[key] = now
        return started

    async def _due(self, graph: ActiveGraph, node_id: str, spec: Spec, now: float) -> list[float]:
        cursor = self._cursor.get((graph.graph_id, node_id))
        if cursor is not None:
            return spec.due_between(cursor, now)
        if spec.missed == "run_once":
            last = await asyncio.to_thread(self.triggers.last_fired, graph.graph_id, node_id)
            return spec.due_between(max(last or 0.0, graph.activated_at), now)[-1:]
        return spec.due_between(max(now - 2 * self.tick, graph.activated_at), now)

    async def _fire(self, graph: ActiveGraph, plan: Plan, node_id: str, spec: Spec, due: float) -> str | None:
        claimed = await asyncio.to_thread(self.triggers.claim_fire, graph.graph_id, node_id, due,
                                          self.launcher.owner)
        if not claimed:
            return None
        set_caller(Caller(None, "", graph.workspace_id))
        try:
            run = self.launcher.start(plan, started_by=STARTED_BY, trigger=node_id, payload=spec.payload(due),
                                      graph_id=graph.graph_id)
        except GraphInvalid as error:
            log.warning("schedule of graph %s cannot run: %s", graph.graph_id, error)
            return None
        drive(run, run.events())
        await asyncio.to_thread(self.triggers.fired_run, graph.graph_id, node_id, due, run.run_id)
        self.started.append(run.run_id)
        return run.run_id

    def _plan(self, graph_id: str, version: int) -> Plan | None:
        key = (graph_id, version)
        if key not in self._plans:
            stored = self.graphs.get_version(graph_id, version)
            try:
                self._plans[key] = self.launcher.plan(stored.graph) if stored is not None else None
            except GraphInvalid:
                self._plans[key] = None
        return self._plans[key]


async def run_scheduler() -> None:
    """The Reflex lifespan task: this worker's scheduler on the process's launcher."""
    from nodeflow_app.runs.launcher import run_launcher

    await Scheduler(await asyncio.to_thread(run_launcher)).run_forever()
