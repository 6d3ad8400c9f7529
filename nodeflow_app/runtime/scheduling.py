"""Readiness and edges of one run: what each node waits for, what reached it, which nodes become ready.

A node is ready when every incoming flow edge from the run's members is resolved (delivered or dead).
Ready with a delivered value and its required inputs, it runs; with only dead edges, it is skipped.
Values are coerced on the wire; a value that cannot be coerced fails the node that receives it.
"""

from __future__ import annotations

from typing import Any

from nodeflow_app.runtime.coercion import CoercionError, coerce
from nodeflow_app.runtime.plan import Plan, PlanNode

RUN, SKIP, FAIL = "run", "skip", "fail"


class Schedule:
    """Pending edge counts and delivered values of a run's members."""

    __slots__ = ("plan", "members", "pending", "delivered", "undeliverable")

    def __init__(self, plan: Plan, members: set[str]):
        self.plan = plan
        self.members = members
        self.pending = dict(plan.pending_counts(members))
        self.delivered: dict[str, dict[str, list[Any]]] = {n: {} for n in members}
        self.undeliverable = False  # some wire failed coercion in this run

    def roots(self) -> list[str]:
        """Members no other member feeds (where a subgraph starts)."""
        return [node_id for node_id, pending in self.pending.items() if pending == 0]

    def enter(self, node_id: str, handles: set[str], value: Any) -> None:
        """`value` arrives at `handles` of `node_id` from outside the members (a container's input)."""
        self.delivered[node_id] = {h: [value] for h in handles}

    def deliver(self, pn: PlanNode, outputs: dict[str, Any]) -> list[str]:
        """Resolve `pn`'s outgoing edges: a port with a value delivers it, others die. The nodes now ready."""
        ready = []
        members, pending, delivered = self.members, self.pending, self.delivered
        for edge in pn.flow_out:
            target_id = edge.target
            if target_id not in members:
                continue
            if edge.sourceHandle in outputs:
                value = outputs[edge.sourceHandle]
                if edge.data.sourceType != edge.data.targetType:
                    value = self._coerce(edge, value)
                delivered[target_id].setdefault(edge.targetHandle, []).append(value)
            pending[target_id] -= 1
            if pending[target_id] == 0:
                ready.append(target_id)
        return ready

    def gather(self, pn: PlanNode, is_start: bool) -> tuple[str, Any]:
        """(RUN, inputs by handle) for a ready node, or (SKIP, reason) or (FAIL, message).

        A node that nothing reached is (SKIP, None): the run, which knows what upstream did, says why.
        """
        delivered = self.delivered[pn.node.id]
        if not is_start and not delivered:
            return SKIP, None
        for required in pn.required_flow:  # a loop, not a comprehension: this runs once per node per run
            if required.id not in delivered:
                missing = [s.label or s.id for s in pn.required_flow if s.id not in delivered]
                return SKIP, f"required input {', '.join(missing)} has no value"
        inputs: dict[str, Any] = {}
        for handle, values in delivered.items():
            socket = pn.inputs.get(handle)
            bad = self.undeliverable and next((v for v in values if v.__class__ is Undeliverable), None)
            if bad:
                return FAIL, bad.message
            if socket is not None and socket.multiple:
                inputs[handle] = values
            elif len(values) > 1:
                return FAIL, (f"{len(values)} values arrived at input '{handle}' of node '{pn.node.name}', which "
                              f"takes one; add a Merge node to combine the branches")
            else:
                inputs[handle] = values[0]
        return RUN, inputs

    def _coerce(self, edge: Any, value: Any) -> Any:
        try:
            return coerce(value, edge.data.sourceType or "any", edge.data.targetType or "any")
        except CoercionError as error:
            target = self.plan.nodes[edge.target].node.name
            self.undeliverable = True
            return Undeliverable(f"input '{edge.targetHandle}' of node '{target}': {error}")


class Undeliverable:
    """A value that failed coercion on its wire; the receiving node fails with this message."""

    __slots__ = ("message",)

    def __init__(self, message: str):
        self.message = message
