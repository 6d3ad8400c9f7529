"""The difference between two versions of a graph (graph JSON in SPEC 2's format), and the canvas view of it.

Rules: nodes are matched by id, edges by id. A node is *changed* when its name, type, type version,
container (`parentId`), a parameter of `data` or a key of `settings` differs; each such difference is
one `FieldChange`. A node whose only difference is its position is *moved*: moves are listed apart
(`GraphDiff.moved`) and never highlighted, since dragging a node changes nothing it does. A parameter
missing on one side and equal to its type's default on the other is no change (the editor fills in
defaults that an imported graph left out). An edge is changed when one of its ends or its channel differs
(its socket types are derived from the nodes, so they are not compared).
Pure functions on plain dicts: no reflex, no store.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Mapping

ADDED, REMOVED, CHANGED = "added", "removed", "changed"
VALUE_CHARS = 80  # a parameter value in a change line is cut here: the panel has one line per change
_NODE_FIELDS = ("name", "type", "version", "parentId")
_EDGE_FIELDS = ("source", "sourceHandle", "target", "targetHandle")


@dataclass(frozen=True)
class FieldChange:
    """One differing field of a node: `name`, a parameter id, or `settings.<key>`."""

    field: str
    old: Any
    new: Any

    def line(self) -> str:
        return f"{self.field}: {value_text(self.old)} -> {value_text(self.new)}"


@dataclass(frozen=True)
class NodeDiff:
    id: str
    name: str  # the newer name (the older one for a removed node)
    status: str  # added | removed | changed
    changes: tuple[FieldChange, ...] = ()


@dataclass(frozen=True)
class GraphDiff:
    """What changed from `old` to `new`: nodes and edges by status, and the nodes that only moved."""

    nodes: list[NodeDiff] = field(default_factory=list)
    edges: dict[str, str] = field(default_factory=dict)  # edge id -> added | removed | changed
    moved: list[str] = field(default_factory=list)  # names of nodes whose position alone differs

    @property
    def empty(self) -> bool:
        return not (self.nodes or self.edges or self.moved)

    def node_marks(self) -> dict[str, str]:
        return {n.id: n.status for n in self.nodes}


Defaults = Mapping[str, Mapping[str, Any]]  # node type -> {parameter id: default value}


def diff_graphs(old: dict[str, Any], new: dict[str, Any], defaults: Defaults | None = None) -> GraphDiff:
    """The difference from graph `old` to graph `new`: new first, then removed nodes, in graph order."""
    old_nodes, new_nodes = _by_id(old.get("nodes")), _by_id(new.get("nodes"))
    nodes: list[NodeDiff] = []
    moved: list[str] = []
    for node_id, node in new_nodes.items():
        before = old_nodes.get(node_id)
        if before is None:
            nodes.append(NodeDiff(node_id, node.get("name", node_id), ADDED))
            continue
        changes = node_changes(before, node, (defaults or {}).get(node.get("type"), {}))
        if changes:
            nodes.append(NodeDiff(node_id, node.get("name", node_id), CHANGED, changes))
        elif before.get("position") != node.get("position"):
            moved.append(node.get("name", node_id))
    nodes += [NodeDiff(i, n.get("name", i), REMOVED) for i, n in old_nodes.items() if i not in new_nodes]
    return GraphDiff(nodes, edge_changes(old.get("edges"), new.get("edges")), moved)


def node_changes(old: dict[str, Any], new: dict[str, Any],
                 defaults: Mapping[str, Any] | None = None) -> tuple[FieldChange, ...]:
    """Field-level changes of one node, position aside: the node's own fields, then parameters, then settings."""
    changes = [FieldChange(key, old.get(key), new.get(key)) for key in _NODE_FIELDS if old.get(key) != new.get(key)]
    changes += _dict_changes(old.get("data") or {}, new.get("data") or {}, "", defaults or {})
    changes += _dict_changes(old.get("settings") or {}, new.get("settings") or {}, "settings.", {})
    return tuple(changes)


def edge_changes(old: list[dict[str, Any]] | None, new: list[dict[str, Any]] | None) -> dict[str, str]:
    old_edges, new_edges = _by_id(old), _by_id(new)
    marks = {i: ADDED for i in new_edges if i not in old_edges}
    marks.update({i: CHANGED for i, e in new_edges.items()
                  if i in old_edges and _edge_key(old_edges[i]) != _edge_key(e)})
    marks.update({i: REMOVED for i in old_edges if i not in new_edges})
    return marks


def diff_view(old: dict[str, Any], new: dict[str, Any], diff: GraphDiff) -> dict[str, Any]:
    """One graph for the canvas: `new` plus the removed nodes and edges of `old` (drawn as ghosts).

    Returns `{graph, marks: {nodes: {id: status}, edges: {id: status}}}`.
    """
    new_ids = {n["id"] for n in new.get("nodes") or []}
    removed = [n for n in old.get("nodes") or [] if n["id"] not in new_ids]
    new_edge_ids = {e["id"] for e in new.get("edges") or []}
    gone_edges = [e for e in old.get("edges") or [] if e["id"] not in new_edge_ids]
    graph = {**new, "nodes": [*(new.get("nodes") or []), *removed], "edges": [*(new.get("edges") or []), *gone_edges]}
    return {"graph": graph, "marks": {"nodes": diff.node_marks(), "edges": diff.edges}}


def value_text(value: Any) -> str:
    """A parameter value on one line: strings quoted, everything else as compact JSON, cut at VALUE_CHARS."""
    if value is None:
        return "—"
    text = json.dumps(value, ensure_ascii=False, default=str)
    text = text.replace("\\n", "⏎")
    return text if len(text) <= VALUE_CHARS else text[:VALUE_CHARS - 1] + "…"


def _dict_changes(old: dict[str, Any], new: dict[str, Any], prefix: str,
                  defaults: Mapping[str, Any]) -> list[FieldChange]:
    keys = [*old, *(k for k in new if k not in old)]
    pairs = ((k, old.get(k, defaults.get(k)), new.get(k, defaults.get(k))) for k in keys)
    return [FieldChange(prefix + k, before, after) for k, before, after in pairs if before != after]


def _edge_key(edge: dict[str, Any]) -> tuple[Any, ...]:
    return (*(edge.get(k) for k in _EDGE_FIELDS), (edge.get("data") or {}).get("channel"))


def _by_id(items: list[dict[str, Any]] | None) -> dict[str, dict[str, Any]]:
    return {item["id"]: item for item in items or []}
