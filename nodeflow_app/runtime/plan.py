"""A normalized graph compiled for execution: indexes by node and handle, executors, capabilities.

Pure data built once per run (or once per graph version); the scheduler only reads it.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any

from nodeflow_app.runtime.expressions import has_expression
from nodeflow_app.runtime.graph import Edge, Graph, Node, find_node
from nodeflow_app.contract import NodeDefinition, Socket


@dataclass(slots=True)
class PlanNode:
    node: Node
    definition: NodeDefinition
    executor: Any
    streams: bool                     # execute is an async generator
    inputs: dict[str, Socket]
    outputs: dict[str, Socket]
    has_expressions: bool             # some string parameter holds `{{`
    first_output: str | None          # where `continue` mode puts {error}
    parameter_sockets: frozenset[str]  # input handles that are wired parameters (wire > inline value)
    plain: bool                       # no retry, no timeout, not streaming: the lean call path
    required_flow: tuple[Socket, ...]  # flow inputs that must have a value
    hidden: frozenset[str]            # parameters whose show_if the node's data does not meet: not resolved
    flow_in: list[Edge] = field(default_factory=list)
    flow_out: list[Edge] = field(default_factory=list)
    link_in: list[Edge] = field(default_factory=list)


@dataclass(slots=True)
class Plan:
    graph: Graph
    nodes: dict[str, PlanNode]
    by_name: dict[str, str]
    _pending: dict[frozenset[str], dict[str, int]] = field(default_factory=dict)
    _reachable: dict[str, frozenset[str]] = field(default_factory=dict)

    def pending_counts(self, members: set[str]) -> dict[str, int]:
        """Per member, how many incoming flow edges come from other members (cached per member set)."""
        key = frozenset(members)
        counts = self._pending.get(key)
        if counts is None:
            nodes = self.nodes
            counts = {n: sum(1 for e in nodes[n].flow_in if e.source in key) for n in key}
            self._pending[key] = counts
        return counts

    def node_named(self, id_or_name: str) -> PlanNode | None:
        node = find_node(self.graph, id_or_name)
        return self.nodes.get(node.id) if node else None

    def reachable(self, start_id: str) -> set[str]:
        """Top-level nodes reachable from `start_id` over flow edges (container children are run by their container)."""
        cached = self._reachable.get(start_id)
        if cached is None:
            cached = self._reachable[start_id] = frozenset(self._walk(start_id))
        return set(cached)

    def _walk(self, start_id: str) -> set[str]:
        seen = {start_id}
        stack = [start_id]
        while stack:
            for edge in self.nodes[stack.pop()].flow_out:
                target = self.nodes[edge.target]
                if edge.target not in seen and target.node.parentId is None:
                    seen.add(edge.target)
                    stack.append(edge.target)
        return seen

    def ancestors(self, node_id: str) -> set[str]:
        seen: set[str] = set()
        stack = [node_id]
        while stack:
            for edge in self.nodes[stack.pop()].flow_in:
                if edge.source not in seen:
                    seen.add(edge.source)
                    stack.append(edge.source)
        return seen

    def children(self, container_id: str) -> list[str]:
        return [n for n, p in self.nodes.items() if p.node.parentId == container_id]


def compile_plan(graph: Graph, registry: Any) -> Plan:
    """Index a normalized graph. `registry.get(type)` gives `.definition` and `.executor`."""
    nodes: dict[str, PlanNode] = {}
    for node in graph.nodes:
        registered = registry.get(node.type)
        definition = registered.definition
        execute = getattr(registered.executor, "execute", None)
        streams = _STREAMS.get(execute)
        if streams is None:
            streams = _STREAMS.setdefault(execute, inspect.isasyncgenfunction(execute))
        outputs = definition.output_sockets(node.data, node.settings.error_mode == "error_output")
        nodes[node.id] = PlanNode(
            node=node, definition=definition, executor=registered.executor,
            streams=streams,
            inputs=definition.input_sockets(), outputs=outputs,
            has_expressions=_has_expressions(node.data),
            first_output=next((s.id for s in outputs.values() if s.channel == "flow"), None),
            plain=(not streams and node.settings.timeout is None and node.settings.retry.max_attempts == 1),
            parameter_sockets=frozenset(p.id for p in definition.parameters if p.mode in ("hybrid", "input")),
            required_flow=tuple(s for s in definition.input_sockets().values() if s.required and s.channel == "flow"),
            hidden=definition.hidden_parameters(node.data),
        )
    for edge in graph.edges:
        source, target = nodes[edge.source], nodes[edge.target]
        if edge.data.channel == "flow":
            source.flow_out.append(edge)
            target.flow_in.append(edge)
        else:
            target.link_in.append(edge)
    return Plan(graph=graph, nodes=nodes, by_name={n.name: n.id for n in graph.nodes})


_STREAMS: dict[Any, bool] = {}  # executor.execute -> is an async generator (inspect is slow)


def _has_expressions(value: Any) -> bool:
    if isinstance(value, str):
        return has_expression(value)
    if isinstance(value, dict):
        return any(_has_expressions(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_expressions(v) for v in value)
    return False
