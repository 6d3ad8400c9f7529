"""Reactive re-runs: node outputs cached by signature, pinned outputs, and which nodes are stale.

A node's signature hashes its type, version, parameters and settings with the signatures of its
direct flow parents (so everything upstream, transitively) and, for the trigger, the payload.
A node with side effects never reuses a cached output, and its signature after running includes a
hash of what it produced, so downstream nodes are reused only when it produced the same thing.
`recorder()` is a view for runs that must really execute (a chat answer): it records, never reuses.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from nodeflow_app.runtime.plan import Plan, PlanNode

_DEAD = "dead"


def _digest(*parts: Any) -> str:
    text = json.dumps(parts, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


class OutputCache:
    """Last outputs by signature (one graph's, usually), plus outputs pinned by node id as test data.

    With `max_entries`, the least recently stored outputs are forgotten first.
    """

    def __init__(self, max_entries: int | None = None) -> None:
        self._outputs: dict[str, dict[str, Any]] = {}
        self.pinned: dict[str, dict[str, Any]] = {}
        self.max_entries = max_entries

    # -- used by the scheduler -----------------------------------------------------------------

    def signature(self, pn: PlanNode, inputs: dict[str, Any], upstream: dict[str, str], payload: Any) -> str:
        if pn.node.id in self.pinned:
            return _digest("pinned", self.pinned[pn.node.id])
        return computed_signature(pn, upstream, payload)

    def lookup(self, pn: PlanNode, signature: str) -> dict[str, Any] | None:
        pinned = self.pinned.get(pn.node.id)
        if pinned is not None:
            return pinned
        if pn.definition.side_effects:
            return None
        return self._outputs.get(signature)

    def store(self, pn: PlanNode, signature: str | None, outputs: dict[str, Any]) -> str | None:
        """Remember outputs; returns the signature downstream nodes should see."""
        if signature is None:
            return None
        if pn.definition.side_effects:
            return _digest(signature, outputs)
        self._outputs.pop(signature, None)  # re-inserted last: the most recent
        self._outputs[signature] = outputs
        if self.max_entries is not None and len(self._outputs) > self.max_entries:
            del self._outputs[next(iter(self._outputs))]
        return signature

    def recorder(self) -> "RecordingCache":
        """A view that records into this cache but never reuses an output or a pin."""
        return RecordingCache(self)

    # -- used by editors -----------------------------------------------------------------------

    def pin(self, node_id: str, outputs: dict[str, Any]) -> None:
        self.pinned[node_id] = outputs

    def unpin(self, node_id: str) -> None:
        self.pinned.pop(node_id, None)

    def stale_nodes(self, plan: Plan, trigger_id: str, payload: Any) -> set[str]:
        """Nodes reachable from the trigger whose outputs would be recomputed by a re-run.

        Static view: a node downstream of a side-effect node counts as stale (it may be reused at run
        time if the side-effect node produces the same output again).
        """
        members = plan.reachable(trigger_id)
        signatures: dict[str, str] = {}
        stale: set[str] = set()
        for node_id in _topological(plan, members):
            pn = plan.nodes[node_id]
            signature = self.signature(pn, {}, signatures, payload if node_id == trigger_id else None)
            signatures[node_id] = signature
            parent_stale = any(e.source in stale for e in pn.flow_in if e.source in members)
            if parent_stale or self.lookup(pn, signature) is None:
                stale.add(node_id)
        return stale


class RecordingCache:
    """Hooks a run that must really execute every node into a cache, so later test runs can reuse its outputs."""

    def __init__(self, cache: OutputCache) -> None:
        self.cache = cache

    def signature(self, pn: PlanNode, inputs: dict[str, Any], upstream: dict[str, str], payload: Any) -> str:
        return computed_signature(pn, upstream, payload)

    def lookup(self, pn: PlanNode, signature: str) -> None:
        return None

    def store(self, pn: PlanNode, signature: str | None, outputs: dict[str, Any]) -> str | None:
        return self.cache.store(pn, signature, outputs)


def computed_signature(pn: PlanNode, upstream: dict[str, str], payload: Any) -> str:
    """What a node's outputs depend on: its type, version, parameters, settings, its parents' signatures, the payload."""
    node = pn.node
    parents = sorted((e.targetHandle, upstream.get(e.source, _DEAD), e.sourceHandle) for e in pn.flow_in)
    return _digest(node.type, node.version, node.data, node.settings.model_dump(), parents, payload)


def _topological(plan: Plan, members: set[str]) -> list[str]:
    pending = {n: sum(1 for e in plan.nodes[n].flow_in if e.source in members) for n in members}
    ready = [n for n, count in pending.items() if count == 0]
    order = []
    while ready:
        node_id = ready.pop()
        order.append(node_id)
        for edge in plan.nodes[node_id].flow_out:
            if edge.target in pending:
                pending[edge.target] -= 1
                if pending[edge.target] == 0:
                    ready.append(edge.target)
    return order
