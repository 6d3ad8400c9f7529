"""One run of a graph: drives its nodes concurrently and streams NodeEvents in order of occurrence.

The run decides in one place (the consumer's coroutine, `Run.events`); node tasks only execute and
report back. Readiness and edges are `scheduling.Schedule`'s, how one node is called (retry, timeout,
streaming, error modes) is `calls`', what a node sees of the run is `links`'. It knows channels, ports
and capabilities, never node types.

1. A run starts at a trigger; its set is the top-level nodes reachable over flow edges.
2. A node becomes ready when every incoming flow edge from the set is resolved (delivered or dead).
3. Ready with a delivered value and its required inputs: it runs; only dead edges: it is skipped.
4. Its outputs deliver along edges whose port has a value; other edges die.
5. A node may ask to wait (pause); `answer` runs it again with the payload.
6. The run is `completed` only when every member settled; a paused node leaves it `paused`.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
import uuid
from collections import deque
from dataclasses import dataclass
from typing import Any, AsyncIterator, Callable

from nodeflow_app.contract import ExecutionResult, NodeError, NodeEvent, WaitForInput, enter_node
from nodeflow_app.runtime.calls import call_node, failure_message, handled_outputs, settled
from nodeflow_app.runtime.coercion import preview
from nodeflow_app.runtime.expressions import resolve
from nodeflow_app.runtime.graph import checked_values
from nodeflow_app.runtime.links import RuntimeApiImpl, Scope, flow_context, materialize
from nodeflow_app.runtime.plan import Plan, PlanNode
from nodeflow_app.runtime.records import RERUN_ON_RESUME, SETTLED, NodeRecord, RunError, RunHooks
from nodeflow_app.runtime.scheduling import FAIL, SKIP, Schedule
from nodeflow_app.runtime.values import plain_and_fine, value_problem

log = logging.getLogger(__name__)

NO_ANSWER = object()  # check_answer without a payload: only whether the node waits
# Nodes a task runs one after another (each readied by the one before) before it lets other work run.
CHAIN_STEPS = 32

__all__ = ["NodeRecord", "Run", "RunError", "RunHooks"]


@dataclass(slots=True)
class _Done:
    node_id: str
    result: ExecutionResult | None
    error: BaseException | None
    duration_ms: float


class Run:
    """A run of `plan` from `trigger_id` with `payload`. Iterate `events()` to drive it.

    `context` is the embedder's opaque per-run context (nodes read it from `ctx.context`; the kernel never
    does); `services` are the embedder's collaborators for nodes.
    """

    def __init__(self, plan: Plan, trigger_id: str | None, payload: Any = None, *, run_id: str | None = None,
                 context: dict[str, Any] | None = None, services: dict[str, Any] | None = None,
                 hooks: RunHooks | None = None, only: set[str] | None = None,
                 members: set[str] | None = None, parent: "Run | None" = None):
        self.plan = plan
        self.trigger_id = trigger_id
        self.payload = payload
        self.run_id = run_id or uuid.uuid4().hex
        self.context = context if context is not None else {}
        self.services = services or {}
        self.hooks = hooks or RunHooks()
        self.parent = parent
        self.status = "pending"
        self.error: str | None = None
        self.started_at = time.time()
        self.finished_at: float | None = None
        self.members = members if members is not None else self._members(trigger_id, only)
        self.records: dict[str, NodeRecord] = {n: NodeRecord() for n in self.members}
        self.signatures: dict[str, str] = {}
        self.schedule = Schedule(plan, self.members)
        self._tasks: dict[str, asyncio.Task] = {}
        self._outbox: deque[NodeEvent] = deque()  # events not yet yielded (the root run's is used)
        self._wake = asyncio.Event()  # set when a node finished or an event is waiting
        self._cancel_requested = False
        self._links: dict[tuple[str, str], asyncio.Future] = {}
        self._sequence = 0
        self._api = RuntimeApiImpl(self)
        self._root: Run = parent._root if parent is not None else self
        self._replaying = False
        self._cleanups: list[Callable[[], Any]] = []
        self._next: list[tuple[PlanNode, dict[str, Any], Any]] | None = None  # see _execute

    # -- public API ---------------------------------------------------------------------------

    @classmethod
    def restore(cls, plan: Plan, trigger_id: str, payload: Any, records: dict[str, NodeRecord], *,
                run_id: str, status: str, **options: Any) -> "Run":
        """Rebuild a run from its persisted node records (e.g. a paused run after a restart).

        Settled nodes are replayed in the order they settled, without executing anything, so the edges
        they resolved are resolved again; paused nodes wait for `answer` as before; nodes that were in
        flight when their process died (`interrupted`) execute again when the run resumes.
        """
        run = cls(plan, trigger_id, payload, run_id=run_id, **options)
        run.status, run._replaying = "running", True
        for node_id, record in sorted(records.items(), key=lambda item: item[1].sequence):
            if node_id not in run.members:
                continue
            run.records[node_id] = record
            if record.status in ("completed", "skipped"):
                outputs = (record.outputs or {}) if record.status == "completed" else {}
                run._resolve_edges(plan.nodes[node_id], outputs)
        run._replaying = False
        run._sequence = max((r.sequence for r in records.values()), default=0)
        run.status = status
        return run

    async def events(self) -> AsyncIterator[NodeEvent]:
        """Run until completed, failed, cancelled or paused, yielding events in order of occurrence."""
        if self.status == "pending":
            self._set_status("running")
            try:
                await self._settle_hook()  # the run is on record before any of its nodes starts (if the hook wants)
            except BaseException:  # the consumer went away meanwhile
                self._finish("cancelled")
                raise
            self._start()
        elif self.status != "running":
            return
        try:
            async for event in self._drive():
                yield event
        finally:
            if self._tasks:  # the consumer went away: nothing may keep running unobserved
                self._cancel_tasks()
                self._finish("cancelled")
                await self._release()

    async def run(self) -> "Run":
        """Drive to the end without looking at events (tests, benchmarks, CLI without output)."""
        async for _ in self.events():
            pass
        return self

    def answer(self, node_id: str, payload: Any) -> None:
        """Continue the paused (or interrupted) node `node_id` with `payload`; nodes interrupted by a dead
        process run again too. Whoever drives `events()` sees the rest; a run that was not going on is
        `running` again and `events()` drives it.
        """
        self.check_answer(node_id, payload)
        record = self.records[node_id]
        if self.status != "running":
            self._set_status("running")
        pn = self.plan.nodes[node_id]
        self._emit(pn, "resumed", payload=payload)
        self._launch(pn, record.inputs or {}, resume_payload=payload)
        for other, rec in self.records.items():
            if other != node_id and rec.status in RERUN_ON_RESUME and other not in self._tasks:
                self._launch(self.plan.nodes[other], rec.inputs or {})
        self._wake.set()

    def check_answer(self, node_id: str, payload: Any = NO_ANSWER) -> None:
        """RunError (saying why) unless `answer(node_id, payload)` would be taken; an embedder checks before it
        commits to driving the run. Every way of answering ends here, so the node's own `answer_problem(payload)`
        (if it has one) refuses a malformed answer while the run stays paused, instead of the node failing it."""
        if self.status in ("completed", "failed", "cancelled"):
            raise RunError(f"run {self.run_id} is {self.status}; only a paused or interrupted run can go on")
        record = self.records.get(node_id)
        if record is None or record.status not in ("paused", *RERUN_ON_RESUME):
            paused = [self.plan.nodes[n].node.name for n, r in self.records.items() if r.status == "paused"]
            raise RunError(f"node '{node_id}' is not waiting for input (paused: {', '.join(paused) or 'none'})")
        pn = self.plan.nodes[node_id]
        answer_problem = getattr(pn.executor, "answer_problem", None)
        problem = answer_problem(payload) if payload is not NO_ANSWER and answer_problem is not None else None
        if problem:
            raise RunError(f"node '{pn.node.name}' does not take this answer: {problem}")

    async def resume(self, node_id: str, payload: Any) -> AsyncIterator[NodeEvent]:
        """`answer` and drive: yields the rest of the run's events."""
        self.answer(node_id, payload)
        async for event in self.events():
            yield event

    def cancel(self) -> None:
        """Cooperative cancel: in-flight node tasks are cancelled; the stream ends with `cancelled`."""
        self._cancel_requested = True
        self._wake.set()

    def save_checkpoint(self, node_id: str, value: Any) -> None:
        """A running node's progress, persisted with its record (see RuntimeApi.checkpoint)."""
        record = self.records.get(node_id)
        if record is None:
            raise RunError(f"node '{node_id}' is not part of this run")
        record.checkpoint = value
        self._record(node_id)

    def outputs_by_name(self) -> dict[str, Any]:
        return {self.plan.nodes[n].node.name: r.outputs for n, r in self.records.items() if r.status == "completed"}

    def paused_nodes(self) -> list[str]:
        return [n for n, r in self.records.items() if r.status == "paused"]

    # -- driving --------------------------------------------------------------------------------

    async def _drive(self) -> AsyncIterator[NodeEvent]:
        """Yield events until no node is in flight. Node tasks do the bookkeeping; this only waits.

        A child run (a container's subgraph) yields nothing: its events go to the root run's outbox.
        """
        outbox = self._outbox if self._root is self else None
        wake = self._wake
        while True:
            while outbox:
                yield outbox.popleft()
            if self._cancel_requested:
                self._cancel_requested = False
                self._cancel_tasks()
                self._finish("cancelled")
                continue
            if not self._tasks:
                break
            wake.clear()
            if outbox or self._cancel_requested:
                continue
            await wake.wait()
        if self.status == "running":
            self._settle()
        await self._release()
        await self._settle_hook()  # its end is on record before the consumer sees it

    async def _settle_hook(self) -> None:
        if self.parent is None and self.hooks.settle is not None:
            await self.hooks.settle(self)

    def _settle(self) -> None:
        """Nothing is in flight: paused if a node waits, completed if every member settled, else failed."""
        if self.paused_nodes():
            self._finish("paused")
            return
        unsettled = [self.plan.nodes[n].node.name for n, r in self.records.items() if r.status not in SETTLED]
        if unsettled:
            self.error = f"the run stopped before {', '.join(sorted(unsettled))} finished"
            self._finish("failed")
            return
        self._finish("completed")

    async def _release(self) -> None:
        """The run stopped (finished or paused): close what nodes opened, forget linked artifacts."""
        cleanups, self._cleanups = self._cleanups, []
        self._links.clear()
        for cleanup in reversed(cleanups):
            try:
                outcome = cleanup()
                if inspect.isawaitable(outcome):
                    await outcome
            except Exception:  # noqa: BLE001 - a failing cleanup must not hide the run's outcome
                log.exception("cleanup of run %s failed", self.run_id)

    def _members(self, trigger_id: str | None, only: set[str] | None) -> set[str]:
        if trigger_id not in self.plan.nodes:
            raise RunError(f"no trigger node '{trigger_id}' in this graph")
        members = self.plan.reachable(trigger_id)
        if only is not None:
            members &= only
        return members

    def _start(self) -> None:
        if self.trigger_id is not None:
            self._ready(self.trigger_id)
        else:  # a subgraph: nodes with no incoming edge from other members start
            for node_id in self.schedule.roots():
                self._ready(node_id)

    def _ready(self, node_id: str) -> None:
        if self._replaying:  # restoring: what happened next is in the records already
            return
        pn = self.plan.nodes[node_id]
        verdict, value = self.schedule.gather(pn, node_id == self.trigger_id)
        if verdict is SKIP:
            self._skip(pn, value if value is not None else self._why_nothing_arrived(pn))
            return
        if verdict is FAIL:
            self._fail(pn, NodeError(value), 0.0)
            return
        cached = self._cached(pn, value) if self.hooks.cache is not None else None
        if cached is not None:
            record = self.records[node_id]
            record.inputs, record.cached = value, True
            self._emit(pn, "started", name=pn.node.name, cached=True)
            self._complete(pn, cached, 0.0)
            return
        self._launch(pn, value)

    def _launch(self, pn: PlanNode, inputs: dict[str, Any], resume_payload: Any = None) -> None:
        node_id = pn.node.id
        record = self.records[node_id]
        record.status, record.inputs, record.wait = "running", inputs, None
        self._emit(pn, "started", name=pn.node.name)
        if self._next is not None and not self._next:  # the first node a finishing node readies: its task goes on
            self._next.append((pn, inputs, resume_payload))
            self._tasks[node_id] = asyncio.current_task()
            return
        self._tasks[node_id] = asyncio.create_task(self._execute(pn, inputs, resume_payload))

    async def _execute(self, pn: PlanNode, inputs: dict[str, Any], resume_payload: Any) -> None:
        """Run a node, then (in the same task) the first node its outcome readied: a chain of nodes costs one
        task, not one per node. Every CHAIN_STEPS nodes the task lets the event loop run other work."""
        task = asyncio.current_task()
        steps = 0
        while True:
            following = await self._execute_one(pn, inputs, resume_payload)
            if following is None or self._tasks.get(following[0].node.id) is not task:
                return  # nothing readied, or it was cancelled meanwhile (a failure cancels every node in flight)
            steps += 1
            if steps % CHAIN_STEPS == 0:
                await asyncio.sleep(0)
            pn, inputs, resume_payload = following

    async def _execute_one(self, pn: PlanNode, inputs: dict[str, Any],
                           resume_payload: Any) -> tuple[PlanNode, dict[str, Any], Any] | None:
        started = time.perf_counter()
        try:
            data, inputs = self._prepare(pn, inputs)
            ctx = flow_context(self, pn, resume_payload)
            enter_node(ctx)  # this task acts for this node's run (its workspace's keys): no node has to say so
            if pn.plain:
                result = await pn.executor.execute(data, inputs, ctx)
                if result.__class__ is not ExecutionResult or result.events:  # else nothing to settle
                    result = settled(pn, result, self._push)
            else:
                result = await call_node(pn, data, inputs, ctx, self._push)
            error = None
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - every node failure becomes a run event
            result, error = None, exc
        # Decide what happens next right here, so the next node starts without waiting for the consumer.
        following: list[tuple[PlanNode, dict[str, Any], Any]] = []
        self._next = following
        try:
            self._finished(_Done(pn.node.id, result, error, (time.perf_counter() - started) * 1000))
        except Exception as exc:  # noqa: BLE001 - a scheduler bug must end the run, never hang it
            log.exception("run %s: scheduling after node %s failed", self.run_id, pn.node.id)
            self.error = f"internal error after node '{pn.node.name}': {type(exc).__name__}: {exc}"
            self._cancel_tasks()
            self._finish("failed")
        finally:
            self._next = None
        self._wake.set()
        return following[0] if following else None

    def _prepare(self, pn: PlanNode, inputs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """Parameters for this call: wire > expression > inline value."""
        data = pn.node.data
        if pn.has_expressions:
            scope = Scope(self, pn, inputs)
            data = {key: resolve(value, scope, parameter=key)
                    if key not in pn.hidden and ((p := pn.definition.parameter(key)) is None or p.expressions)
                    else value for key, value in data.items()}
        wired = [h for h in inputs if h in pn.parameter_sockets] if pn.parameter_sockets else None
        if wired:
            data = {**data, **{h: inputs[h] for h in wired}}
            inputs = {h: v for h, v in inputs.items() if h not in wired}
        if data is not pn.node.data:  # an expression or a wire gave a value the graph's check never saw
            data = checked_values(pn.definition, data, pn.node.data)
        return data, inputs

    # -- outcomes --------------------------------------------------------------------------------

    def _finished(self, done: _Done) -> None:
        pn = self.plan.nodes[done.node_id]
        if self._tasks.pop(done.node_id, None) is None:  # cancelled meanwhile: its outcome no longer counts
            return
        outputs = done.result.outputs if done.error is None else None
        if outputs and not plain_and_fine(outputs) and (problem := value_problem(outputs)):
            # What JSON cannot hold would break the run's record, its resume and every reader downstream.
            done.error = NodeError(f"node '{pn.node.name}' output {problem[2:]}")
        if outputs and not outputs.keys() <= pn.outputs.keys():
            # e.g. a list of routes from an expression, longer than the one the graph made the ports from
            unknown = next(port for port in outputs if port not in pn.outputs)
            done.error = NodeError(f"it sent {preview(outputs[unknown])} to output '{unknown}', which it does not have "
                                   f"(its outputs: {', '.join(pn.outputs) or 'none'})")
        if done.error is not None:
            self._fail(pn, done.error, done.duration_ms)
        elif done.result.wait is not None:
            self._pause(pn, done.result.wait, done.duration_ms)
        else:
            self._complete(pn, done.result.outputs, done.duration_ms)

    def _complete(self, pn: PlanNode, outputs: dict[str, Any], duration_ms: float) -> None:
        record = self.records[pn.node.id]
        record.status, record.outputs, record.duration_ms = "completed", outputs, round(duration_ms, 3)
        if self.hooks.cache is not None and not record.cached:
            self.signatures[pn.node.id] = self.hooks.cache.store(pn, self.signatures.get(pn.node.id), outputs)
        self._record(pn.node.id)
        self._emit(pn, "completed", outputs=outputs, duration_ms=record.duration_ms, cached=record.cached)
        self._resolve_edges(pn, outputs)

    def _fail(self, pn: PlanNode, error: BaseException, duration_ms: float) -> None:
        message = failure_message(error)
        outputs = handled_outputs(pn, message)
        self._emit(pn, "error", error=message, handled=pn.node.settings.error_mode != "stop")
        if outputs is not None:
            self._complete(pn, outputs, duration_ms)
            return
        record = self.records[pn.node.id]
        record.status, record.error, record.duration_ms = "failed", message, round(duration_ms, 3)
        self._record(pn.node.id)
        self.error = f"node '{pn.node.name}' failed: {message}"
        self._cancel_tasks()
        self._finish("failed")

    def _pause(self, pn: PlanNode, wait: WaitForInput, duration_ms: float) -> None:
        record = self.records[pn.node.id]
        record.status, record.wait, record.duration_ms = "paused", wait, round(duration_ms, 3)
        self._record(pn.node.id)
        timed = {} if wait.resume_at is None else {"resume_at": wait.resume_at}
        self._emit(pn, "paused", prompt=wait.prompt, options=wait.options, detail=wait.detail, **timed)

    def _why_nothing_arrived(self, pn: PlanNode) -> str:
        """Name each upstream node whose output port on a wire into `pn` gave no value, and the port it took
        instead (e.g. "'Approval' took Reject, not Approve")."""
        parts: list[str] = []
        for edge in pn.flow_in:
            if edge.source not in self.members:
                continue
            source, record = self.plan.nodes[edge.source], self.records[edge.source]
            name = source.node.name
            if record.status != "completed":
                parts.append(f"'{name}' was {record.status}")
                continue
            label = _port_label(source, edge.sourceHandle)
            taken = [_port_label(source, h) for h in (record.outputs or {}) if h in source.outputs]
            parts.append(f"'{name}' took {', '.join(taken)}, not {label}" if taken
                         else f"'{name}' gave nothing on {label}")
        return "; ".join(dict.fromkeys(parts)) or "no input arrived"

    def _skip(self, pn: PlanNode, reason: str) -> None:
        record = self.records[pn.node.id]
        record.status = "skipped"
        self._record(pn.node.id)
        self._emit(pn, "skipped", reason=reason)
        self._resolve_edges(pn, {})

    def _resolve_edges(self, pn: PlanNode, outputs: dict[str, Any]) -> None:
        if self.status != "running":
            return
        for target_id in self.schedule.deliver(pn, outputs):
            self._ready(target_id)

    def _cancel_tasks(self) -> None:
        for node_id, task in list(self._tasks.items()):
            task.cancel()
            self.records[node_id].status = "cancelled"
            self._record(node_id)
            self._emit(self.plan.nodes[node_id], "cancelled")
        self._tasks.clear()

    def _finish(self, status: str) -> None:
        if self.status in ("completed", "failed", "cancelled"):
            return
        self.finished_at = time.time()
        self._set_status(status)

    def _set_status(self, status: str) -> None:
        self.status = status
        if self.hooks.on_run is not None and self.parent is None:
            self.hooks.on_run(self)

    def _record(self, node_id: str) -> None:
        self._sequence += 1
        record = self.records[node_id]
        record.sequence = self._sequence
        if self.hooks.on_node is not None and self.parent is None:
            self.hooks.on_node(self, node_id, record)

    def _emit(self, pn: PlanNode, event_type: str, **data: Any) -> None:
        self._push(NodeEvent(self.run_id, pn.node.id, pn.node.type, event_type, data))

    def _push(self, event: NodeEvent) -> None:
        root = self._root
        root._outbox.append(event)
        root._wake.set()

    def _cached(self, pn: PlanNode, inputs: dict[str, Any]) -> dict[str, Any] | None:
        cache = self.hooks.cache
        if cache is None:
            return None
        signature = cache.signature(pn, inputs, self.signatures, self.payload if pn.node.id == self.trigger_id else None)
        self.signatures[pn.node.id] = signature
        return cache.lookup(pn, signature)

    # -- services for nodes ----------------------------------------------------------------------

    async def resolve_links(self, node_id: str, handle: str) -> list[Any]:
        """Artifacts of every link wired into (node_id, handle), materialized once per run."""
        pn = self.plan.nodes.get(node_id)
        if pn is None:
            raise RunError(f"no node '{node_id}' in this graph")
        return [await materialize(self, edge.source, edge.sourceHandle) for edge in pn.link_in
                if edge.targetHandle == handle]

    async def run_subgraph(self, node_ids: list[str], input: Any) -> dict[str, Any]:
        """Run `node_ids` (a container's children) once with `input` entering from outside; their outputs by id."""
        members = set(node_ids)
        child = Run(self.plan, None, self.payload, run_id=self.run_id, context=self.context,
                    services=self.services, hooks=RunHooks(cache=None), members=members, parent=self)
        for node_id in members:
            pn = self.plan.nodes[node_id]
            outside = [e for e in pn.flow_in if e.source not in members]
            if child.schedule.pending[node_id] == 0:
                handles = {e.targetHandle for e in outside} or {next(iter(pn.inputs), None)}
                child.schedule.enter(node_id, {h for h in handles if h is not None}, input)
        child._set_status("running")
        child._start()
        try:
            async for _ in child._drive():
                pass
        except BaseException:  # the container was cancelled or failed: its steps stop with it
            child._cancel_tasks()
            raise
        if child.status == "failed":
            raise NodeError(child.error or "a step inside the container failed")
        if child.status == "paused":
            names = ", ".join(self.plan.nodes[n].node.name for n in child.paused_nodes())
            raise NodeError(f"{names} inside the container asked for input; pausing inside a container is not supported")
        return {n: r.outputs for n, r in child.records.items() if r.status == "completed"}

    def status_of(self, node_id: str) -> str:
        """A node's status in this run or, inside a container, in the enclosing run ("pending" if unseen)."""
        record = self.records.get(node_id)
        if (record is None or record.status == "pending") and self.parent is not None:
            return self.parent.status_of(node_id)
        return record.status if record is not None else "pending"

    def output_of(self, node_id: str) -> Any:
        """A node's main value: its first output port (definition order) that carries a value."""
        record = self.records.get(node_id)
        if (record is None or record.status != "completed") and self.parent is not None:
            return self.parent.output_of(node_id)
        if record is None or record.status != "completed":
            raise KeyError(node_id)
        outputs = record.outputs or {}
        for handle in self.plan.nodes[node_id].outputs:
            if handle in outputs:
                return outputs[handle]
        return next(iter(outputs.values()), None)


def _port_label(pn: PlanNode, handle: str) -> str:
    socket = pn.outputs.get(handle)
    return (socket.label or socket.id) if socket is not None else handle
