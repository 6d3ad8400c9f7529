"""What a running node sees of its run: the RuntimeApi, link materialization, and the expression scope."""

from __future__ import annotations

import asyncio
import contextvars
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from nodeflow_app.contract import FlowContext, NodeError, NodeEvent
from nodeflow_app.runtime.expressions import NodeUnavailable, resolve
from nodeflow_app.runtime.graph import checked_values
from nodeflow_app.runtime.plan import PlanNode

if TYPE_CHECKING:  # annotations only: run.py imports this module
    from nodeflow_app.runtime.run import Run

_link_path: contextvars.ContextVar[tuple[tuple[str, str], ...]] = contextvars.ContextVar("link_path", default=())


async def materialize(run: "Run", node_id: str, handle: str) -> Any:
    """The artifact `node_id` provides on `handle`, made once per run; a cycle of links is an error naming it."""
    key = (node_id, handle)
    path = _link_path.get()
    if key in path:
        names = " -> ".join(f"{run.plan.nodes[n].node.name}.{h}" for n, h in path + (key,))
        raise NodeError(f"link cycle: {names}")
    links = run._root._links
    future = links.get(key)
    if future is not None:
        return await future
    future = asyncio.get_running_loop().create_future()
    links[key] = future
    token = _link_path.set(path + (key,))
    try:
        pn = run.plan.nodes[node_id]
        provide = getattr(pn.executor, "materialize", None)
        if provide is None:
            raise NodeError(f"node '{pn.node.name}' ({pn.node.type}) cannot provide links")
        data = pn.node.data
        if pn.has_expressions:
            data = checked_values(pn.definition, resolve(data, Scope(run, pn, {})), pn.node.data)
        artifact = await provide(data, handle, flow_context(run, pn))
    except BaseException as error:
        future.set_exception(error)
        future.exception()  # retrieved here; concurrent waiters re-raise it themselves
        raise
    finally:
        _link_path.reset(token)
    future.set_result(artifact)
    return artifact


@dataclass(slots=True)
class Scope:
    """What expressions of one node may see: upstream nodes that ran, its direct input, the trigger."""

    run: "Run"
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
        run = self.run._root
        if run.trigger_id is None:
            raise KeyError("$trigger")
        return run.output_of(run.trigger_id)


class RuntimeApiImpl:
    """The RuntimeApi a node sees (nodeflow_app.contract.RuntimeApi)."""

    __slots__ = ("_run",)

    def __init__(self, run: "Run"):
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

    @property
    def pauses_on_record(self) -> bool:
        run = self._run  # a store records each node's state (a run nobody persists only tracks its own status)
        return run.parent is None and run.hooks.on_node is not None

    def checkpoint(self, node_id: str, value: Any) -> None:
        self._run._root.save_checkpoint(node_id, value)

    def on_finish(self, cleanup: Callable[[], Any]) -> None:
        self._run._root._cleanups.append(cleanup)


def flow_context(run: "Run", pn: PlanNode, resume_payload: Any = None) -> FlowContext:
    record = run.records.get(pn.node.id)
    return FlowContext(pn.node.id, pn.node.type, run.run_id, run._api, run.context, run.payload, resume_payload,
                       run.services, record.checkpoint if record is not None else None)
