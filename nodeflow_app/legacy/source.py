"""The older runtime's graph as read from JSON: recognising it, and its nodes and edges as plain records.

Its shape (seed 004): `{nodes: [{id, type, position, data}], edges | connections: [{id, source,
sourceHandle, target, targetHandle}]}`; node types start, agent, if, input/approval (and end, which
the older runtime dropped). It has no node names and no edge channels.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

OLD_TYPES = frozenset({"start", "agent", "if", "input", "approval", "end"})
# Types that only the older runtime has (agent and approval exist in both).
_ONLY_OLD = frozenset({"start", "if", "input", "end"})
# What React Flow saves about how a node or edge was drawn or selected: not part of the graph's meaning.
VIEW_KEYS = frozenset({"width", "height", "measured", "selected", "dragging", "positionAbsolute", "sourcePosition",
                       "targetPosition", "style", "className", "zIndex", "hidden", "deletable", "draggable",
                       "selectable", "connectable", "focusable", "type", "animated", "markerEnd", "markerStart"})
_NODE_KEYS = frozenset({"id", "type", "position", "data"})
_EDGE_KEYS = frozenset({"id", "source", "target", "sourceHandle", "targetHandle"})
GRAPH_KEYS = frozenset({"id", "name", "nodes", "edges", "connections", "viewport"})


class LegacyFormatError(ValueError):
    """The file is not a readable graph of the older runtime; the message says what and where."""


@dataclass(frozen=True)
class OldNode:
    id: str
    type: str
    data: dict[str, Any]
    position: dict[str, float]
    extra: tuple[str, ...] = ()  # other keys of the node, neither its meaning's nor React Flow's view keys


@dataclass(frozen=True)
class OldEdge:
    id: str
    source: str
    target: str
    source_handle: str | None
    target_handle: str | None
    extra: tuple[str, ...] = ()


@dataclass
class OldGraph:
    nodes: list[OldNode]
    edges: list[OldEdge]
    name: str | None = None
    id: str | None = None
    viewport: dict[str, Any] | None = None
    extra: tuple[str, ...] = ()  # top-level keys with no place in a NodeFlow graph
    by_id: dict[str, OldNode] = field(init=False)

    def __post_init__(self) -> None:
        self.by_id = {node.id: node for node in self.nodes}


def is_legacy_graph(raw: Any) -> bool:
    """True for a graph of the older runtime: `connections`, an old-only node type, or nameless old nodes."""
    if not isinstance(raw, dict) or not isinstance(raw.get("nodes"), list):
        return False
    if "connections" in raw and "edges" not in raw:
        return True
    nodes = [n for n in raw["nodes"] if isinstance(n, dict)]
    # Only text is looked up: a list or object as a set member raises TypeError.
    types = [n.get("type") if isinstance(n.get("type"), str) else None for n in nodes]
    if any(node_type in _ONLY_OLD for node_type in types):
        return True
    return bool(nodes) and all("name" not in n and node_type in OLD_TYPES for n, node_type in zip(nodes, types))


def read_old_graph(raw: Any) -> OldGraph:
    """The old graph's nodes and edges; a LegacyFormatError names the first malformed item."""
    if not isinstance(raw, dict):
        raise LegacyFormatError(f"a graph is a JSON object, got {type(raw).__name__}")
    nodes_raw = raw.get("nodes")
    if not isinstance(nodes_raw, list):
        raise LegacyFormatError("the graph has no 'nodes' list")
    edges_raw = raw.get("edges", raw.get("connections", []))
    if not isinstance(edges_raw, list):
        raise LegacyFormatError("'edges' (or 'connections') must be a list")
    nodes = [_node(item, index) for index, item in enumerate(nodes_raw)]
    seen: set[str] = set()
    for node in nodes:
        if node.id in seen:
            raise LegacyFormatError(f"two nodes have the id {node.id!r}")
        seen.add(node.id)
    edges = _unique_edge_ids([_edge(item, index) for index, item in enumerate(edges_raw)])
    name = raw.get("name") if isinstance(raw.get("name"), str) and raw["name"].strip() else None
    graph_id = raw.get("id") if isinstance(raw.get("id"), str) and raw["id"].strip() else None
    viewport = raw.get("viewport") if isinstance(raw.get("viewport"), dict) else None
    return OldGraph(nodes, edges, name=name, id=graph_id, viewport=viewport, extra=_extra(raw, GRAPH_KEYS))


def _extra(item: dict[str, Any], known: frozenset[str]) -> tuple[str, ...]:
    return tuple(sorted(str(key) for key in item if key not in known and key not in VIEW_KEYS))


def _node(item: Any, index: int) -> OldNode:
    where = f"nodes[{index}]"
    if not isinstance(item, dict):
        raise LegacyFormatError(f"{where} must be an object, got {type(item).__name__}")
    node_id, node_type = item.get("id"), item.get("type")
    if not isinstance(node_id, (str, int)) or isinstance(node_id, bool) or str(node_id) == "":
        raise LegacyFormatError(f"{where} has no id")
    if not isinstance(node_type, str) or not node_type:
        raise LegacyFormatError(f"{where} (id {node_id!r}) has no type")
    data = item.get("data") if item.get("data") is not None else {}
    if not isinstance(data, dict):
        raise LegacyFormatError(f"{where} (id {node_id!r}): data must be an object, got {type(data).__name__}")
    return OldNode(str(node_id), node_type, data, _position(item.get("position"), f"{where} (id {node_id!r})"),
                   _extra(item, _NODE_KEYS))


def _position(value: Any, where: str) -> dict[str, float]:
    if not isinstance(value, dict):
        return {"x": 0.0, "y": 0.0}
    position = {}
    for axis in ("x", "y"):
        v = value.get(axis)
        try:
            position[axis] = float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0.0
        except OverflowError:  # a whole number no float holds
            raise LegacyFormatError(f"{where}: position.{axis} is too large a number") from None
    return position


def _edge(item: Any, index: int) -> OldEdge:
    where = f"edges[{index}]"
    if not isinstance(item, dict):
        raise LegacyFormatError(f"{where} must be an object, got {type(item).__name__}")
    for end in ("source", "target"):
        if not isinstance(item.get(end), (str, int)) or isinstance(item.get(end), bool):
            raise LegacyFormatError(f"{where} has no {end}")
    edge_id = item.get("id")
    handles = [item.get(key) if isinstance(item.get(key), str) and item.get(key) else None
               for key in ("sourceHandle", "targetHandle")]
    return OldEdge(str(edge_id) if edge_id not in (None, "") else f"e{index}", str(item["source"]),
                   str(item["target"]), handles[0], handles[1], _extra(item, _EDGE_KEYS))


def _unique_edge_ids(edges: list[OldEdge]) -> list[OldEdge]:
    seen: set[str] = set()
    for edge in edges:
        if edge.id in seen:
            raise LegacyFormatError(f"two edges have the id {edge.id!r}")
        seen.add(edge.id)
    return edges
