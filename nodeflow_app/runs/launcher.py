"""The one place that turns (graph, trigger, payload, who started it, cache policy) into a run (SPEC 14).

Every entry point (the chat, the editor's test runs, the CLI, and later webhooks, schedules, the API)
asks the process's RunLauncher, so each run is persisted, attributed, streamed, stoppable from any
process and resumable after a restart the same way:

1. `start` compiles the graph once, picks the trigger, builds the run through the engine with the
   store's hooks and the cache the policy names: `reuse` (test runs: the graph's cache and pins),
   `record` (chat answers: always execute, record for later test runs) or `none`.
2. While a run executes here it is live: a control thread refreshes its heartbeat and applies stop and
   answer requests recorded for it by other processes (woken through Redis when REFLEX_REDIS_URL is set).
3. `answer`, `stop` and `restore` reach a run wherever it is: live here (applied directly), live in
   another process (a request for it), or executing nowhere (restored here from its record, through the
   engine, after claiming it, so two processes never continue the same run).
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from typing import Any, Literal

from sqlalchemy import Engine

from nodeflow_app import settings
from nodeflow_app.contract import STARTED_BY
from nodeflow_app.runs.caller import USER, current_caller
from nodeflow_app.runs.caches import GraphCaches, graph_caches
from nodeflow_app.runs.graph_runner import StoredGraphRunner
from nodeflow_app.runtime.engine import restore_run, start_plan
from nodeflow_app.runtime.graph import Graph, GraphInvalid, GraphIssue, normalize_or_raise
from nodeflow_app.runtime.plan import Plan, compile_plan
from nodeflow_app.runtime.records import RunHooks
from nodeflow_app.runtime.run import NO_ANSWER, Run, RunError
from nodeflow_app.store.db import create_all, make_engine, process_wide
from nodeflow_app.store.graphs import GraphStore
from nodeflow_app.store.pins import PinStore
from nodeflow_app.store.run_control import HEARTBEAT, Request, RunBusy, RunControl, process_owner
from nodeflow_app.store.runs import PARENT_NODE, PARENT_RUN, RunStore
from nodes._registry import default_registry

log = logging.getLogger(__name__)

CachePolicy = Literal["reuse", "record", "none"]
ANSWER_TIMEOUT_S = 10.0  # how long an answer waits for the loop of the live run it goes to
POLL = 0.25            # seconds between looks for requests to runs executing here (NODEFLOW_RUN_POLL overrides)
REDIS_CHANNEL = "nodeflow:run-requests"

__all__ = ["AnswerRefused", "CachePolicy", "RunBusy", "RunLauncher", "run_launcher"]


class AnswerRefused(RunBusy):
    """The waiting node does not take this answer (its reason); the run stays paused as it was."""


class RunLauncher:
    """Starts, restores, answers and stops runs; one per process (`run_launcher()`), or one per test."""

    def __init__(self, engine_or_url: Engine | str | None = None, *, registry: Any = None,
                 caches: GraphCaches | None = None, redis_url: str | None = None):
        self._owns_engine = not isinstance(engine_or_url, Engine)
        self.engine = engine_or_url if isinstance(engine_or_url, Engine) else make_engine(engine_or_url)
        create_all(self.engine)
        self.owner = process_owner()
        self.store = RunStore(self.engine, owner=self.owner)
        self.control = RunControl(self.engine, self.owner)
        self.pins = PinStore(self.engine)
        self.graphs = GraphStore(self.engine)
        self.registry = registry if registry is not None else default_registry()
        self.caches = caches if caches is not None else graph_caches()
        self.redis_url = redis_url if redis_url is not None else settings.redis_url()
        self.poll = float(os.environ.get("NODEFLOW_RUN_POLL") or POLL)
        self._live: dict[str, tuple[Run, asyncio.AbstractEventLoop]] = {}
        self._left: set[str] = set()  # runs no longer live here whose pending requests the control thread settles
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._closed = threading.Event()
        self._thread: threading.Thread | None = None
        self._redis: Any = None

    def close(self) -> None:
        self._closed.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self._redis is not None:
            self._redis.stop()
        self.store.close()
        if self._owns_engine:
            self.engine.dispose()

    # -- starting --------------------------------------------------------------------------------------

    def plan(self, graph: dict[str, Any] | Graph) -> Plan:
        """The graph normalized and compiled (GraphInvalid with its issues when it cannot run)."""
        return compile_plan(normalize_or_raise(graph, self.registry), self.registry)

    def start(self, graph: dict[str, Any] | Graph | Plan, *, started_by: str, trigger: str | None = None,
              payload: Any = None, cache: CachePolicy = "none", graph_id: str | None = None,
              to_node: str | None = None, context: dict[str, Any] | None = None, persist: bool = True,
              services: dict[str, Any] | None = None, parent: tuple[str, str] | None = None,
              defer_start: bool = False) -> Run:
        """A new (not yet started) run; iterate `run.events()` to drive it. GraphInvalid when it cannot run.

        Its nodes get `services` (default: a graph runner, so Execute Graph can call stored graphs).
        `parent` (run id, node id): the run and node that called this graph; the history links them.
        `defer_start`: the caller waits for the run's end, so a short run is written once, with its end (RunStore.hooks).
        """
        plan = graph if isinstance(graph, Plan) else self.plan(graph)
        graph_id = graph_id or plan.graph.id
        caller = current_caller()
        context = {**(context or {}), STARTED_BY: started_by}
        if parent is not None:
            context[PARENT_RUN], context[PARENT_NODE] = parent
        if caller.user_name:
            context.setdefault(USER, caller.user_name)
        hooks = self._hooks(self.cache(cache, graph_id), persist, defer_start)
        services = self._services(plan, graph_id, caller.workspace_id, services)
        return start_plan(plan, self.registry, trigger=trigger, payload=payload, hooks=hooks, to_node=to_node,
                          context=context, services=services)

    def triggers(self, plan: Plan, started_by: str | None = None) -> list[str]:
        """The plan's trigger nodes (in graph order); with `started_by`, those that entry point starts."""
        return [node_id for node_id, pn in plan.nodes.items() if pn.definition.trigger
                and (started_by is None or started_by in pn.definition.started_by)]

    def entry_trigger(self, plan: Plan, started_by: str) -> str:
        """The one trigger `started_by` (e.g. "chat") starts; GraphInvalid naming the trigger types to add."""
        found = self.triggers(plan, started_by)
        if len(found) == 1:
            return found[0]
        if found:
            names = ", ".join(plan.nodes[n].node.name for n in found)
            message = f"this graph has {len(found)} triggers for {started_by} ({names}); keep one"
        else:
            kinds = [d.name for d in self.registry.definitions() if started_by in d.started_by]
            message = f"add a {' or '.join(kinds) or started_by + ' trigger'} node to start runs from {started_by}"
        raise GraphInvalid([GraphIssue(rule="missing_trigger", message=message)])

    def example_payload(self, plan: Plan, trigger_id: str) -> Any:
        """The trigger's own example payload (its definition declares it), for test runs."""
        return plan.nodes[trigger_id].definition.example_payload

    # -- runs that exist -------------------------------------------------------------------------------

    def restore(self, run_id: str, node_id: str | None = None, payload: Any = NO_ANSWER) -> Run:
        """Claim a paused or interrupted run and rebuild it through the engine, ready for `run.resume`.

        With `node_id`, the node to answer: it must wait in the run's record (a card answered elsewhere no longer
        does) and take `payload` (when given), checked while the run is claimed, so `run.resume(node_id, payload)`
        cannot refuse it afterwards.
        RunBusy when it executes here or in a live process, or cannot go on (or `node_id` waits no more), AnswerRefused
        when `node_id` does not take `payload`;
        LookupError when it does not exist. On any error the run is given back as it was.
        """
        if run_id in self._live:
            raise RunBusy(f"run {run_id} is already running in this process")
        self.store.flush()
        previous = self.control.claim(run_id)
        try:
            record = self.store.get_run(run_id)
            # Claimed, it reads `running`; it goes on from where it was: waiting for an answer, or interrupted.
            waiting = any(n["status"] == "paused" for n in record["nodes"])
            record["status"] = "paused" if waiting else "interrupted"
            # Its nodes act in the graph's workspace again (its knowledge, connections and provider keys).
            workspace = self.graphs.workspace_of(record["graph_id"]) if record.get("graph_id") else None
            plan = self.plan(record["graph"])
            run = restore_run(plan, record, hooks=self._hooks(None, True),
                              services=self._services(plan, record.get("graph_id") or plan.graph.id, workspace))
            if node_id is not None:
                try:
                    run.check_answer(node_id)
                except RunError as error:
                    raise RunBusy(str(error)) from None
                try:
                    run.check_answer(node_id, payload)
                except RunError as error:
                    raise AnswerRefused(str(error)) from None
        except Exception:
            self.control.release(run_id, previous)
            raise
        self.store.adopt(run_id)
        return run

    def answer(self, run_id: str, node_id: str, payload: Any) -> Run | None:
        """Answer the paused node `node_id` of a run, wherever it is.

        Returns None when the answer went to a run executing here or in another process (its driver goes
        on), else the run restored here: drive it with `run.resume(node_id, payload)`.
        """
        live = self._live.get(run_id)
        if live is not None:
            _answer_here(*live, node_id, payload)
            return None
        self.store.flush()  # the database shows what the store still holds (a run that paused a moment ago)
        state = self.control.owner_of(run_id)
        if state is not None and state[2]:
            self.control.request(run_id, "answer", node_id, payload)
            self._publish(run_id)
            return None
        return self.restore(run_id, node_id, payload)

    def stop(self, run_id: str) -> bool:
        """Stop a run wherever it executes; a paused or interrupted one is cancelled. False: nothing to stop."""
        live = self._live.get(run_id)
        if live is not None:
            run, loop = live
            loop.call_soon_threadsafe(run.cancel)
            return True
        self.store.flush()  # the database shows what the store still holds (a run that ended a moment ago)
        state = self.control.owner_of(run_id)
        if state is None:
            return False
        if state[2]:
            self.control.request(run_id, "stop")
            self._publish(run_id)
            return True
        if state[0] == "running":  # its owner is gone: it is interrupted, then cancelled
            self.control.recover([run_id])
        return self.control.cancel_waiting(run_id)

    def is_live(self, run_id: str) -> bool:
        return run_id in self._live

    def recover(self) -> list[str]:
        """At start-up (and any time): runs whose owning process is gone become `interrupted` (their ids)."""
        self.store.flush()
        return self.control.recover()

    # -- internals -------------------------------------------------------------------------------------

    def cache(self, policy: CachePolicy, graph_id: str) -> Any:
        """The cache a run of `graph_id` uses under `policy` (`reuse`: with the database's pins)."""
        if policy == "none":
            return None
        cache = self.caches.get(graph_id)
        if policy == "record":
            return cache.recorder()
        cache.pinned = self.pins.pins(graph_id)
        return cache

    def _services(self, plan: Plan, graph_id: str, workspace_id: str | None,
                  services: dict[str, Any] | None = None) -> dict[str, Any]:
        """What a run's nodes get, the same when it starts and when it goes on after a pause or a restart (a
        restored run without them failed its Execute Graph nodes): a graph runner, so Execute Graph calls stored
        graphs through this launcher (`services` replaces it: a child run's runner knows the graphs that called
        it), and the workspace it acts in (its knowledge, connections and provider keys)."""
        if services is None:
            services = StoredGraphRunner(self, self.graphs).for_graph(graph_id, plan.graph.name).services()
        if workspace_id:
            services = {**services, "workspace_id": workspace_id}
        return services

    def _hooks(self, cache: Any, persist: bool, defer_start: bool = False) -> RunHooks:
        """The store's hooks (when persisting) plus tracking which runs are live here."""
        hooks = self.store.hooks(cache, defer_start=defer_start) if persist else RunHooks(cache=cache)
        persist_run = hooks.on_run

        def on_run(run: Run) -> None:
            if persist_run is not None:
                persist_run(run)
            self._track(run)

        hooks.on_run = on_run
        return hooks

    def _track(self, run: Run) -> None:
        """Live while running here: heartbeats and requests reach it through the control thread."""
        with self._lock:
            if run.status != "running":
                if self._live.pop(run.run_id, None) is not None:
                    self._left.add(run.run_id)  # a request sent while it was live may still be pending: settled
                return
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # not driven yet: `events()` reports `running` again from its loop
                return
            # Not woken: the control thread looks every `poll` seconds (a wake per run cost a query per run).
            self._live[run.run_id] = (run, loop)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._control_loop, name="run-control", daemon=True)
                self._thread.start()

    def _control_loop(self) -> None:
        """Every `poll` seconds (at once when Redis says so): apply requests; every HEARTBEAT: say we are alive."""
        self._subscribe()
        beat = polled = 0.0
        while not self._closed.is_set():
            woken = self._wake.wait(min(self.poll, HEARTBEAT))
            self._wake.clear()
            with self._lock:
                live = dict(self._live)
                left, self._left = self._left, set()
            if not live and not left:
                continue
            now = time.monotonic()
            try:
                if woken or left or now - polled >= self.poll:
                    polled = now
                    for request in self.control.take_requests([*live, *left]):
                        entry = self._live.get(request.run_id)  # now: it may have paused since we looked
                        if entry is None:
                            self._settle(request)
                            continue
                        run, loop = entry
                        if request.kind == "stop":
                            loop.call_soon_threadsafe(run.cancel)
                        elif request.kind == "answer":
                            loop.call_soon_threadsafe(_answer_live, run, request.node_id, request.payload)
                if now - beat >= HEARTBEAT:
                    self.control.heartbeat(list(live))
                    beat = now
            except Exception:  # noqa: BLE001 - a database hiccup (or a closed loop) must not end the control
                log.exception("run control: polling requests failed; trying again")

    def _settle(self, request: Request) -> None:
        """A request for a run that stopped executing here (paused or ended) before we polled; its sender was told
        it was taken. A stop cancels the paused run, as asked. An answer is not applied, only logged: nobody here
        would follow the rest of the run; the node still waits and its card still shows, to be answered again."""
        if request.kind == "stop":
            self.store.flush(deferring=True)  # its pause on record, so that it can be cancelled
            self.control.cancel_waiting(request.run_id)  # only a paused run changes: an ended one has nothing to stop
        else:
            log.warning("answer to run %s node %s not applied: the run paused before it arrived",
                        request.run_id, request.node_id)

    def _publish(self, run_id: str) -> None:
        if self.redis_url is None:
            return
        try:
            import redis

            client = redis.Redis.from_url(self.redis_url)
            try:
                client.publish(REDIS_CHANNEL, run_id)
            finally:
                client.close()
        except Exception as error:  # noqa: BLE001 - the database request stands; the owner polls for it
            log.warning("could not publish a run request through Redis: %s", error)

    def _subscribe(self) -> None:
        """With Redis: a listener thread wakes the control loop as soon as a request is published."""
        if self.redis_url is None:
            return
        try:
            import redis

            pubsub = redis.Redis.from_url(self.redis_url).pubsub(ignore_subscribe_messages=True)
            pubsub.subscribe(**{REDIS_CHANNEL: lambda _message: self._wake.set()})
            self._redis = pubsub.run_in_thread(sleep_time=0.5, daemon=True)
        except Exception as error:  # noqa: BLE001 - polling still works
            log.warning("run control: no Redis subscription (%s); polling the database", error)


def _answer_here(run: Run, loop: asyncio.AbstractEventLoop, node_id: str, payload: Any) -> None:
    """Answer a run live in this process on its loop, and wait for it: RunBusy (saying why) when the node no longer
    waits (two answers at once: the one that came second is refused, not told the run goes on with it)."""
    async def apply() -> None:
        run.answer(node_id, payload)

    try:
        if _running_loop() is loop:
            run.answer(node_id, payload)
        else:
            asyncio.run_coroutine_threadsafe(apply(), loop).result(timeout=ANSWER_TIMEOUT_S)
    except RunError as error:
        raise RunBusy(str(error)) from None
    except TimeoutError:  # its loop is that busy: the caller may try again
        raise RunBusy(f"run {run.run_id} did not take the answer within {ANSWER_TIMEOUT_S:.0f} s") from None


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _answer_live(run: Run, node_id: str, payload: Any) -> None:
    try:
        run.answer(node_id, payload)
    except Exception as error:  # noqa: BLE001 - a stale answer (node no longer waiting) is only logged
        log.warning("answer to run %s node %s not applied: %s", run.run_id, node_id, error)


# The process's RunLauncher on the app database, made on first use (never at import time).
run_launcher = process_wide(RunLauncher)
