"""One run of a graph: a scheduler that streams NodeEvents while it executes nodes concurrently.

The scheduler decides in one place (the consumer's coroutine, `Run.events`); node tasks only execute
and report back through a queue. It knows channels, ports and capabilities, never node types.

1. A run starts at a trigger; its set is the top-level nodes reachable over flow edges.
2. A node becomes ready when every incoming flow edge from the set is resolved (delivered or dead).
3. Ready with a delivered value and its required inputs: it runs; only dead edges: it is skipped.
4. Its outputs deliver along edges whose port has a value; other edges die.
5. A node may ask to wait (pause); `resume` runs it again with the payload.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import inspect
import logging
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Callable

from nodeflow_app.runtime.coercion import CoercionError, coerce
from nodeflow_app.runtime.expressions import ExpressionError, NodeUnavailable, resolve
from nodeflow_app.runtime.graph import Edge
from nodeflow_app.runtime.plan import Plan, PlanNode
from nodeflow_app.runtime.values import value_problem
from nodeflow_app.contract import ERROR_HANDLE, ExecutionResult, FlowContext, NodeError, NodeEvent, WaitForInput

log = logging.getLogger(__name__)
_link_path: contextvars.ContextVar[tuple[tuple[str, str], ...]] = contextvars.ContextVar("link_path", default=())


class RunError(Exception):
    """A problem of the run itself (bad resume, unknown node), not of one node."""


@dataclass(slots=True)
class NodeRecord:
    """What happened to one node in this run; persisted as it changes."""

    status: str = "pending"  # running | completed | failed | skipped | paused | cancelled
    inputs: dict[str, Any] | None = None
    outputs: dict[str, Any] | None = None
    error: str | None = None
    duration_ms: float | None = None
    cached: bool = False
    wait: WaitForInput | None = None
    sequence: int = 0  # order of the last status change, for replay after a restart


@dataclass(slots=True)
class _Done:
    node_id: str
    result: ExecutionResult | None
    error: BaseException | None
    duration_ms: float


@dataclass
class RunHooks:
    """Optional collaborators: persistence and the reactive output cache."""

    on_node: Callable[["Run", str, NodeRecord], None] | None = None
    on_run: Callable[["Run"], None] | None = None
    cache: Any = None  # nodeflow_app.runtime.cache.OutputCache


class Run:
    """A run of `plan` from `trigger_id` with `payload`. Iterate `events()` to drive it."""

    def __init__(self, plan: Plan, trigger_id: str | None, payload: Any = None, *, run_id: str | None = None,
                 chat_id: str | None = None, services: dict[str, Any] | None = None,
                 hooks: RunHooks | None = None, only: set[str] | None = None,
                 members: set[str] | None = None, parent: "Run | None" = None):
        self.plan = plan
        self.trigger_id = trigger_id
        self.payload = payload
        self.run_id = run_id or uuid.uuid4().hex
        self.chat_id = chat_id
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
        self._pending = dict(plan.pending_counts(self.members))
        self._delivered: dict[str, dict[str, list[Any]]] = {n: {} for n in self.members}
        self._tasks: dict[str, asyncio.Task] = {}
        self._outbox: deque[NodeEvent] = deque()  # events not yet yielded (the root run's is used)
        self._wake = asyncio.Event()  # set when a node finished or an event is waiting
        self._cancel_requested = False
        self._undeliverable = False  # some wire failed coercion in this run
        self._links: dict[tuple[str, str], asyncio.Future] = {}
        self._sequence = 0
        self._api = _RuntimeApi(self)
        self._root: Run = parent._root if parent is not None else self
        self._replaying = False
        self._cleanups: list[Callable[[], Any]] = []

    # -- public API ---------------------------------------------------------------------------

    @classmethod
    def restore(cls, plan: Plan, trigger_id: str, payload: Any, records: dict[str, NodeRecord], *,
                run_id: str, status: str, **options: Any) -> "Run":
        """Rebuild a run from its persisted node records (e.g. a paused run after a restart).

        Finished nodes are replayed in the order they finished, without executing anything, so the
        edges they resolved are resolved again; paused nodes wait for `resume` as before.
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

    async def resume(self, node_id: str, payload: Any) -> AsyncIterator[NodeEvent]:
        """Continue a paused node with the answer `payload`; yields the rest of the run's events."""
        record = self.records.get(node_id)
        if record is None or record.status != "paused":
            paused = [self.plan.nodes[n].node.name for n, r in self.records.items() if r.status == "paused"]
            raise RunError(f"node '{node_id}' is not waiting for input (paused: {', '.join(paused) or 'none'})")
        self._set_status("running")
        pn = self.plan.nodes[node_id]
        self._emit(pn, "resumed", payload=payload)
        self._launch(pn, record.inputs or {}, resume_payload=payload)
        async for event in self._drive():
            yield event

    def cancel(self) -> None:
        """Cooperative cancel: in-flight node tasks are cancelled; the stream ends with `cancelled`."""
        self._cancel_requested = True
        self._wake.set()

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
            self._finish("paused" if self.paused_nodes() else "completed")
        await self._release()

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
            for node_id, pending in self._pending.items():
                if pending == 0:
                    self._ready(node_id)

    def _ready(self, node_id: str) -> None:
        if self._replaying:  # restoring: what happened next is in the records already
            return
        pn = self.plan.nodes[node_id]
        delivered = self._delivered[node_id]
        if node_id != self.trigger_id and not delivered:
            self._skip(pn, self._why_nothing_arrived(pn))
            return
        missing = [s.label or s.id for s in pn.required_flow if s.id not in delivered]
        if missing:
            self._skip(pn, f"required input {', '.join(missing)} has no value")
            return
        inputs: dict[str, Any] = {}
        for handle, values in delivered.items():
            socket = pn.inputs.get(handle)
            undeliverable = self._undeliverable and next((v for v in values if v.__class__ is _Undeliverable), None)
            if undeliverable:
                self._fail(pn, NodeError(undeliverable.message), 0.0)
                return
            if socket is not None and socket.multiple:
                inputs[handle] = values
            elif len(values) > 1:
                self._fail(pn, NodeError(
                    f"{len(values)} values arrived at input '{handle}' of node '{pn.node.name}', which takes one; "
                    f"add a Merge node to combine the branches"), 0.0)
                return
            else:
                inputs[handle] = values[0]
        cached = self._cached(pn, inputs) if self.hooks.cache is not None else None
        if cached is not None:
            record = self.records[node_id]
            record.inputs, record.cached = inputs, True
            self._emit(pn, "started", name=pn.node.name, cached=True)
            self._complete(pn, cached, 0.0)
            return
        self._launch(pn, inputs)

    def _launch(self, pn: PlanNode, inputs: dict[str, Any], resume_payload: Any = None) -> None:
        node_id = pn.node.id
        record = self.records[node_id]
        record.status, record.inputs, record.wait = "running", inputs, None
        self._emit(pn, "started", name=pn.node.name)
        self._tasks[node_id] = asyncio.create_task(self._execute(pn, inputs, resume_payload))

    async def _execute(self, pn: PlanNode, inputs: dict[str, Any], resume_payload: Any) -> None:
        started = time.perf_counter()
        try:
            data, inputs = self._prepare(pn, inputs)
            ctx = FlowContext(pn.node.id, pn.node.type, self.run_id, self._api, self.chat_id,
                              self.payload, resume_payload, self.services)
            if pn.plain:
                result = await pn.executor.execute(data, inputs, ctx)
                if result.__class__ is not ExecutionResult:
                    result = self._checked(pn, result)
                for event in result.events:
                    self._push(event)
            else:
                result = await self._attempts(pn, data, inputs, ctx)
            error = None
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - every node failure becomes a run event
            result, error = None, exc
        # Decide what happens next right here, so the next node starts without waiting for the consumer.
        try:
            self._finished(_Done(pn.node.id, result, error, (time.perf_counter() - started) * 1000))
        except Exception as exc:  # noqa: BLE001 - a scheduler bug must end the run, never hang it
            log.exception("run %s: scheduling after node %s failed", self.run_id, pn.node.id)
            self.error = f"internal error after node '{pn.node.name}': {type(exc).__name__}: {exc}"
            self._cancel_tasks()
            self._finish("failed")
        self._wake.set()

    async def _attempts(self, pn: PlanNode, data: dict, inputs: dict, ctx: FlowContext) -> ExecutionResult:
        """Run the executor with the node's timeout, retrying per its policy before any error routing."""
        settings = pn.node.settings
        policy = settings.retry
        delay = policy.initial_interval
        for attempt in range(1, policy.max_attempts + 1):
            try:
                if settings.timeout is None:
                    return await self._call(pn, data, inputs, ctx)
                async with asyncio.timeout(settings.timeout):
                    return await self._call(pn, data, inputs, ctx)
            except (asyncio.CancelledError, ExpressionError, CoercionError):
                raise
            except Exception as exc:
                if isinstance(exc, TimeoutError):
                    exc = NodeError(f"node '{pn.node.name}' timed out after {settings.timeout:g} s")
                if attempt == policy.max_attempts:
                    raise exc
                self._push(ctx.event("progress", message=f"attempt {attempt} failed: {exc}; retrying",
                                     attempt=attempt))
                await asyncio.sleep(min(delay, policy.max_interval))
                delay *= policy.backoff_factor
        raise AssertionError("unreachable")

    async def _call(self, pn: PlanNode, data: dict, inputs: dict, ctx: FlowContext) -> ExecutionResult:
        if not pn.streams:
            result = await pn.executor.execute(data, inputs, ctx)
        else:
            result = None
            handed_over = 0.0
            # aclosing: a cancel that lands outside the generator still closes it (and its HTTP stream).
            async with contextlib.aclosing(pn.executor.execute(data, inputs, ctx)) as stream:
                async for item in stream:
                    if item.__class__ is not NodeEvent:
                        result = item
                        continue
                    self._push(item)
                    # A fast stream may never suspend (its data is already buffered): step aside every
                    # few ms so the consumer sees events as they are made, not in late batches.
                    now = time.perf_counter()
                    if now - handed_over > 0.002:
                        handed_over = now
                        try:
                            await asyncio.sleep(0)
                        except asyncio.CancelledError:  # re-deliver it where the stream waits, so the
                            asyncio.current_task().cancel()  # stream's own cleanup (HTTP close) runs
        result = self._checked(pn, result)
        for event in result.events:
            self._push(event)
        return result

    @staticmethod
    def _checked(pn: PlanNode, result: Any) -> ExecutionResult:
        if not isinstance(result, ExecutionResult):
            raise NodeError(f"node '{pn.node.name}' returned {type(result).__name__}, not an ExecutionResult")
        return result

    def _prepare(self, pn: PlanNode, inputs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """Parameters for this call: wire > expression > inline value."""
        data = pn.node.data
        if pn.has_expressions:
            scope = _Scope(self, pn, inputs)
            data = {key: resolve(value, scope, parameter=key)
                    if (p := pn.definition.parameter(key)) is None or p.expressions else value
                    for key, value in data.items()}
        wired = [h for h in inputs if h in pn.parameter_sockets] if pn.parameter_sockets else None
        if wired:
            data = {**data, **{h: inputs[h] for h in wired}}
            inputs = {h: v for h, v in inputs.items() if h not in wired}
        return data, inputs

    # -- outcomes --------------------------------------------------------------------------------

    def _finished(self, done: _Done) -> None:
        pn = self.plan.nodes[done.node_id]
        if self._tasks.pop(done.node_id, None) is None:  # cancelled meanwhile: its outcome no longer counts
            return
        if done.error is None and done.result.outputs and (problem := value_problem(done.result.outputs)):
            # What JSON cannot hold would break the run's record, its resume and every reader downstream.
            done.error = NodeError(f"node '{pn.node.name}' output {problem[2:]}")
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
        message = str(error) if isinstance(error, (NodeError, ExpressionError, CoercionError)) else (
            f"{type(error).__name__}: {error}")
        mode = pn.node.settings.error_mode
        self._emit(pn, "error", error=message, handled=mode != "stop")
        if mode == "continue" and pn.first_output:
            self._complete(pn, {pn.first_output: {"error": message}}, duration_ms)
            return
        if mode == "error_output":
            self._complete(pn, {ERROR_HANDLE: {"error": message, "node": pn.node.name}}, duration_ms)
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
        self._emit(pn, "paused", prompt=wait.prompt, options=wait.options, detail=wait.detail)

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
        """Deliver each output along its edges; an edge from a port without a value is dead."""
        if self.status != "running":
            return
        for edge in pn.flow_out:
            target_id = edge.target
            if target_id not in self.members:
                continue
            if edge.sourceHandle in outputs:
                value = outputs[edge.sourceHandle]
                if edge.data.sourceType != edge.data.targetType:
                    value = self._coerce(edge, value)
                self._delivered[target_id].setdefault(edge.targetHandle, []).append(value)
            self._pending[target_id] -= 1
            if self._pending[target_id] == 0:
                self._ready(target_id)

    def _coerce(self, edge: Edge, value: Any) -> Any:
        try:
            return coerce(value, edge.data.sourceType or "any", edge.data.targetType or "any")
        except CoercionError as error:
            target = self.plan.nodes[edge.target].node.name
            self._undeliverable = True
            return _Undeliverable(f"input '{edge.targetHandle}' of node '{target}': {error}")

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
        artifacts = []
        for edge in pn.link_in:
            if edge.targetHandle == handle:
                artifacts.append(await self._materialize(edge.source, edge.sourceHandle))
        return artifacts

    async def _materialize(self, node_id: str, handle: str) -> Any:
        key = (node_id, handle)
        path = _link_path.get()
        if key in path:
            names = " -> ".join(f"{self.plan.nodes[n].node.name}.{h}" for n, h in path + (key,))
            raise NodeError(f"link cycle: {names}")
        future = self._root._links.get(key)
        if future is not None:
            return await future
        future = asyncio.get_running_loop().create_future()
        self._root._links[key] = future
        token = _link_path.set(path + (key,))
        try:
            pn = self.plan.nodes[node_id]
            materialize = getattr(pn.executor, "materialize", None)
            if materialize is None:
                raise NodeError(f"node '{pn.node.name}' ({pn.node.type}) cannot provide links")
            data = resolve(pn.node.data, _Scope(self, pn, {})) if pn.has_expressions else pn.node.data
            ctx = FlowContext(node_id, pn.node.type, self.run_id, self._api, self.chat_id,
                              self.payload, None, self.services)
            artifact = await materialize(data, handle, ctx)
        except BaseException as error:
            future.set_exception(error)
            future.exception()  # retrieved here; concurrent waiters re-raise it themselves
            raise
        finally:
            _link_path.reset(token)
        future.set_result(artifact)
        return artifact

    async def run_subgraph(self, node_ids: list[str], input: Any) -> dict[str, Any]:
        """Run `node_ids` (a container's children) once with `input` entering from outside; their outputs by id."""
        members = set(node_ids)
        child = Run(self.plan, None, self.payload, run_id=self.run_id, chat_id=self.chat_id,
                    services=self.services, hooks=RunHooks(cache=None), members=members, parent=self)
        for node_id in members:
            pn = self.plan.nodes[node_id]
            outside = [e for e in pn.flow_in if e.source not in members]
            if child._pending[node_id] == 0:
                handles = {e.targetHandle for e in outside} or {next(iter(pn.inputs), None)}
                child._delivered[node_id] = {h: [input] for h in handles if h is not None}
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


class _Undeliverable:
    """A value that failed coercion on its wire; the receiving node fails with this message."""

    __slots__ = ("message",)

    def __init__(self, message: str):
        self.message = message


@dataclass(slots=True)
class _Scope:
    """What expressions of one node may see: upstream nodes that ran, its direct input, the trigger."""

    run: Run
    pn: PlanNode
    inputs: dict[str, Any]
    _ancestors: set[str] | None = field(default=None)

    def node_output(self, name: str) -> Any:
        node_id = self.run.plan.by_name.get(name)
        if node_id is None:
            raise NodeUnavailable(name, f"there is no node named '{name}' in this graph")
        if self._ancestors is None:
            self._ancestors = self.run.plan.ancestors(self.pn.node.id)
            parent = self.run.plan.nodes.get(self.pn.node.parentId or "")
            if parent is not None:
                self._ancestors |= self.run.plan.ancestors(parent.node.id) | {parent.node.id}
        if node_id not in self._ancestors:
            raise NodeUnavailable(name, self._not_upstream(name, node_id))
        try:
            return self.run.output_of(node_id)
        except KeyError:
            status = self.run.status_of(node_id)
            raise NodeUnavailable(name, f"'{name}' is upstream but did not run in this run ({status})") from None

    def _not_upstream(self, name: str, node_id: str) -> str:
        ran = self.run.status_of(node_id) == "completed"
        return (f"'{name}' {'ran, but it ' if ran else ''}is not upstream of '{self.pn.node.name}', so "
                f"its output is not visible here; wire it (directly or through other nodes) into "
                f"'{self.pn.node.name}'")

    def direct_input(self) -> Any:
        for handle in self.pn.inputs:
            if handle in self.inputs:
                return self.inputs[handle]
        return next(iter(self.inputs.values()), None)

    def trigger_output(self) -> Any:
        run = self.run
        while run.parent is not None:
            run = run.parent
        if run.trigger_id is None:
            raise KeyError("$trigger")
        return run.output_of(run.trigger_id)


class _RuntimeApi:
    """The RuntimeApi a node sees (nodeflow_app.contract.RuntimeApi)."""

    __slots__ = ("_run",)

    def __init__(self, run: Run):
        self._run = run

    def get_node(self, node_id: str) -> dict[str, Any]:
        return self._run.plan.nodes[node_id].node.model_dump()

    def incoming_edges(self, node_id: str, *, channel: str | None = None,
                       target_handle: str | None = None) -> list[dict[str, Any]]:
        edges = self._run.plan.graph.edges
        return [e.model_dump() for e in edges if e.target == node_id
                and (channel is None or e.data.channel == channel)
                and (target_handle is None or e.targetHandle == target_handle)]

    def outgoing_edges(self, node_id: str, *, channel: str | None = None,
                       source_handle: str | None = None) -> list[dict[str, Any]]:
        edges = self._run.plan.graph.edges
        return [e.model_dump() for e in edges if e.source == node_id
                and (channel is None or e.data.channel == channel)
                and (source_handle is None or e.sourceHandle == source_handle)]

    def children(self, node_id: str) -> list[str]:
        return self._run.plan.children(node_id)

    async def resolve_links(self, node_id: str, target_handle: str) -> list[Any]:
        return await self._run.resolve_links(node_id, target_handle)

    async def run_subgraph(self, node_ids: list[str], input: Any) -> dict[str, Any]:
        return await self._run.run_subgraph(node_ids, input)

    def emit(self, event: NodeEvent) -> None:
        self._run._push(event)

    def on_finish(self, cleanup: Callable[[], Any]) -> None:
        self._run._root._cleanups.append(cleanup)
