"""The graph being edited: indexed by id, changed only through operations that return an undoable `Change`.

Every operation checks its input against the node definitions and either raises `EditError` (a
sentence for people: why nothing changed) or returns a `Change`: the ops the browser applies as a
patch and the inverse ops that undo it. Undo and redo replay ops, so the browser gets the same
small patches for them. The whole graph is never rebuilt or re-validated per edit (1,000 nodes).
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass
from typing import Any, Iterable

from nodeflow_app.runtime.coercion import can_connect
from nodeflow_app.runtime.graph import (
    DefinitionSource, Edge, Graph, GraphIssue, Node, NodeSettings, Position, Viewport, check, find_cycle, normalize,
    parameter_problem,
)
from nodeflow_app.runtime.values import MAX_DEPTH
from nodeflow_app.contract import NodeDefinition, Socket
from nodeflow_app.secret_values import cleared_by, forget_sealed_node

Op = dict[str, Any]
UNDO_LIMIT = 100
PASTE_OFFSET = 40.0


class EditError(ValueError):
    """An edit that was refused; the message says why, naming the nodes and sockets involved."""


@dataclass
class Change:
    ops: list[Op]
    inverse: list[Op]
    label: str


def joined(earlier: Change, later: Change) -> Change | None:
    """`earlier` then `later` as one change (the inspector saves a field while it is typed in: one undo step per
    burst), or None when `later` did not start from the nodes `earlier` left: someone else changed them in
    between, and undoing the two at once would take their edit back too."""
    left = {op["node"]["id"]: op["node"] for op in earlier.ops if op["op"] == "update_node"}
    found = {op["node"]["id"]: op["node"] for op in later.inverse if op["op"] == "update_node"}
    if not found or any(left.get(node_id) != node for node_id, node in found.items()):
        return None
    return Change(ops=[*earlier.ops, *later.ops], inverse=[*later.inverse, *earlier.inverse], label=earlier.label)


class GraphDocument:
    """Deliberately a plain class, not a dataclass: Reflex wraps dataclass state values in change-tracking
    proxies, which made every dict lookup in here allocate a proxy (15 ms per edit at 1,000 nodes).
    The editor state marks itself dirty by setting its `patch` var on every change anyway."""

    def __init__(self, id: str, name: str, version: int = 1, nodes: dict[str, Node] | None = None,
                 edges: dict[str, Edge] | None = None, viewport: Viewport | None = None, history: bool = True) -> None:
        self.id, self.name, self.version = id, name, version
        # A shared document (a co-editing room) keeps no undo stacks: each person keeps their own Changes.
        self.history = history
        self.nodes: dict[str, Node] = nodes if nodes is not None else {}
        self.edges: dict[str, Edge] = edges if edges is not None else {}
        self.viewport = viewport or Viewport()
        self.undo_stack: list[Change] = []
        self.redo_stack: list[Change] = []

    # Loading and exporting ---------------------------------------------------------------------

    @classmethod
    def from_graph(cls, graph: Graph, history: bool = True) -> "GraphDocument":
        return cls(id=graph.id, name=graph.name, version=graph.version, nodes={n.id: n for n in graph.nodes},
                   edges={e.id: e for e in graph.edges}, viewport=graph.viewport, history=history)

    def to_graph(self) -> Graph:
        """The graph as it stands (no validation: the nodes and edges were checked when they came in)."""
        return Graph.model_construct(id=self.id, name=self.name, version=self.version, nodes=list(self.nodes.values()),
                                     edges=list(self.edges.values()), viewport=self.viewport)

    def to_json(self) -> dict[str, Any]:
        return self.to_graph().model_dump(mode="json")

    def issues(self, definitions: DefinitionSource) -> list[GraphIssue]:
        return normalize(self.to_json(), definitions)[1]

    def node_by_name(self, name: str) -> Node | None:
        return next((n for n in self.nodes.values() if n.name == name), None)

    # Undo and redo -----------------------------------------------------------------------------

    def undo(self) -> list[Op]:
        if not self.undo_stack:
            return []
        change = self.undo_stack.pop()
        self._apply_all(change.inverse)
        self.redo_stack.append(change)
        return change.inverse

    def redo(self) -> list[Op]:
        if not self.redo_stack:
            return []
        change = self.redo_stack.pop()
        self._apply_all(change.ops)
        self.undo_stack.append(change)
        return change.ops

    def revert(self, change: Change) -> Change:
        """Undo `change` on the document as it stands now, when others may have edited it since.

        Only what `change` itself did is taken back: of a node it updated, just the fields (and parameters)
        it changed; a node or edge someone else removed meanwhile stays removed; edges that would hang
        loose go too. Returns the Change applied (revert it again to redo).
        """
        after = {op["node"]["id"]: op["node"] for op in change.ops if op["op"] in ("add_node", "update_node")}
        before: dict[str, Op] = {}
        for op in change.inverse:  # the last inverse update of a node holds the node before the change
            if op["op"] == "update_node":
                before[op["node"]["id"]] = op["node"]
        applied, inverse, merged = [], [], set()
        for op in change.inverse:
            for step in self._rebased(op, after, before, merged):
                applied.append(step)
                inverse.append(self._apply(step))
        for step in self._follow_renames(change.inverse, applied):
            applied.append(step)
            inverse.append(self._apply(step))
        return Change(ops=applied, inverse=[op for op in reversed(inverse) if op], label=change.label)

    def _follow_renames(self, wanted: list[Op], applied: list[Op]) -> list[Op]:
        """A node this undo brought back under a free name ("Fetch 2": someone took "Fetch" meanwhile): the
        expressions of the nodes it brought back or changed meant that node, not the other person's."""
        names = {op["node"]["id"]: op["node"]["name"] for op in wanted if op["op"] in ("add_node", "update_node")}
        renamed = {names[n.id]: n.name for n in (self.nodes.get(op["node"]["id"]) for op in applied
                                                 if op["op"] in ("add_node", "update_node"))
                   if n is not None and names.get(n.id, n.name) != n.name}
        if not renamed:
            return []
        steps = []
        for node_id in dict.fromkeys(op["node"]["id"] for op in applied if op["op"] in ("add_node", "update_node")):
            node = self.nodes[node_id]
            data = node.data
            for old, new in renamed.items():
                data = _replace_strings(data, _reference(old), new)
            if data != node.data:
                steps.append({"op": "update_node", "node": {**_dump(node), "data": data}})
        return steps

    def _rebased(self, op: Op, after: dict[str, Op], before: dict[str, Op], merged: set[str]) -> list[Op]:
        """The ops that carry out one undo op on the current document (none when it no longer applies)."""
        kind = op["op"]
        if kind == "update_node":
            node_id = op["node"]["id"]
            current = self.nodes.get(node_id)
            if current is None or node_id in merged:
                return []
            merged.add(node_id)
            now = _dump(current)
            node = _merge_back(now, after.get(node_id, op["node"]), before[node_id])
            if node["parentId"] and node["parentId"] not in self.nodes:
                # The container I took it out of was deleted since: it stays where it is (the position it had
                # was in that container's frame).
                node = {**node, "parentId": now["parentId"], "position": now["position"]}
            if node["name"] != now["name"] and self.node_by_name(node["name"]) is not None:
                node["name"] = self.unique_name(node["name"])  # someone took my old name meanwhile
            return [] if node == now else [{"op": "update_node", "node": node}]
        if kind == "add_node":
            node = op["node"]
            if node["id"] in self.nodes:
                return []
            if node.get("parentId") and node["parentId"] not in self.nodes:
                node = {**node, "parentId": None}
            if self.node_by_name(node["name"]) is not None:
                node = {**node, "name": self.unique_name(node["name"])}  # someone took its name meanwhile
            return [{**op, "node": node}]
        if kind == "remove_node":
            if op["id"] not in self.nodes:
                return []
            loose = [e.id for e in self.edges.values() if op["id"] in (e.source, e.target)]
            return [{"op": "remove_edge", "id": i} for i in loose] + [op]
        if kind == "add_edge":
            edge = op["edge"]
            ok = edge["id"] not in self.edges and edge["source"] in self.nodes and edge["target"] in self.nodes
            return [op] if ok else []
        if kind == "remove_edge":
            return [op] if op["id"] in self.edges else []
        return []

    # Operations --------------------------------------------------------------------------------

    def add_node(self, definitions: DefinitionSource, node_type: str, position: dict[str, float],
                 name: str | None = None, defaults: dict[str, Any] | None = None) -> Change:
        """A new node with its definition's defaults; `defaults` replaces some of them (e.g. the install's model)."""
        definition = _definition(definitions, node_type)
        data = definition.defaults()
        data.update({k: v for k, v in (defaults or {}).items() if k in data})
        node = Node(id=self._new_node_id(node_type), type=node_type, version=definition.version,
                    name=self.unique_name(name or definition.name), position=Position(**position), data=data)
        return self._commit([{"op": "add_node", "node": _dump(node)}, {"op": "select", "ids": [node.id]}],
                            f"add {definition.name}")

    def paste(self, definitions: DefinitionSource, text: str, position: dict[str, float] | None) -> Change:
        """Add a copied fragment (or a whole exported graph) with fresh ids and names, placed at `position`."""
        nodes, edges = _parse_fragment(text, definitions)
        # Every id first: a child may come before its container (an export keeps the graph's order).
        new_ids: dict[str, str] = {}
        for node in nodes:
            new_ids[node.id] = self._new_node_id(node.type, reserved=new_ids.values())
        # Only top-level nodes move to the pointer: a child's position is relative to its container's frame.
        top = [n for n in nodes if n.parentId not in new_ids]
        origin_x = min(n.position.x for n in top)
        origin_y = min(n.position.y for n in top)
        dx, dy = ((position["x"] - origin_x, position["y"] - origin_y) if position
                  else (PASTE_OFFSET, PASTE_OFFSET))
        taken = {n.name for n in self.nodes.values()}
        ops: list[Op] = []
        for node in nodes:
            name = _unique(node.name, taken)
            taken.add(name)
            x, y = node.position.x, node.position.y
            if node.parentId not in new_ids:
                x, y = x + dx, y + dy
            copy = node.model_copy(update={
                "id": new_ids[node.id], "name": name, "position": Position(x=x, y=y),
                "parentId": new_ids.get(node.parentId) if node.parentId else None,
            })
            ops.append({"op": "add_node", "node": _dump(copy)})
        for edge in edges:
            if edge.source in new_ids and edge.target in new_ids:
                copy = edge.model_copy(update={"id": _new_edge_id(), "source": new_ids[edge.source],
                                               "target": new_ids[edge.target]})
                ops.append({"op": "add_edge", "edge": _dump(copy)})
        ops.append({"op": "select", "ids": list(new_ids.values())})
        return self._commit(ops, f"paste {len(nodes)} node(s)")

    def move(self, moves: Iterable[dict[str, Any]], definitions: DefinitionSource | None = None) -> Change:
        """New positions; a move with a `parentId` key also puts the node into that container (or, None, out).

        A position is relative to the node's container when it has one (React Flow's rule), so a move that
        changes the container gives the position in the new frame of reference.
        """
        ops = []
        for move in moves:
            node = self._node(str(move.get("id")))
            update: dict[str, Any] = {"position": Position(**move["position"])}
            if "parentId" in move:
                update["parentId"] = self._check_parent(definitions, node, move["parentId"])
            if any(getattr(node, key) != value for key, value in update.items()):
                ops.append({"op": "update_node", "node": _dump(node.model_copy(update=update))})
        return self._commit(ops, "move")

    def _check_parent(self, definitions: DefinitionSource | None, node: Node, parent_id: Any) -> str | None:
        """The container `node` may go into (None: out of any); refuses a non-container or a loop of containers."""
        if parent_id in (None, ""):
            return None
        parent = self._node(str(parent_id))
        if definitions is None or not _definition(definitions, parent.type).container:
            raise EditError(f"Cannot put '{node.name}' into '{parent.name}': only a container "
                            "(For Each, Loop) holds other nodes")
        ancestor: Node | None = parent
        while ancestor is not None:
            if ancestor.id == node.id:
                raise EditError(f"Cannot put '{node.name}' into '{parent.name}': '{parent.name}' is inside "
                                f"'{node.name}'")
            ancestor = self.nodes.get(ancestor.parentId) if ancestor.parentId else None
        return parent.id

    def delete(self, node_ids: Iterable[str], edge_ids: Iterable[str] = ()) -> Change:
        doomed = {i for i in node_ids if i in self.nodes}
        # Children go with their container.
        grew = True
        while grew:
            children = {n.id for n in self.nodes.values() if n.parentId in doomed} - doomed
            doomed |= children
            grew = bool(children)
        edges = {i for i in edge_ids if i in self.edges}
        edges |= {e.id for e in self.edges.values() if e.source in doomed or e.target in doomed}
        ops = [{"op": "remove_edge", "id": i} for i in sorted(edges)]
        # Children before their container: the undo adds them back in reverse order, so a container is back before
        # its children are (a revert puts a child whose container is missing at the top level).
        ops += [{"op": "remove_node", "id": i} for i in sorted(doomed, key=lambda i: -self._depth(i))]
        return self._commit(ops, "delete")

    def _depth(self, node_id: str) -> int:
        """How many containers `node_id` is inside."""
        depth, node = 0, self.nodes[node_id]
        # The normalizer and `_check_parent` refuse a loop of containers; bounded all the same, as a loop would hang.
        while node.parentId in self.nodes and depth < len(self.nodes):
            depth, node = depth + 1, self.nodes[node.parentId]
        return depth

    def connect(self, definitions: DefinitionSource, source: str, source_handle: str, target: str,
                target_handle: str) -> Change:
        source_node, target_node = self._node(source), self._node(target)
        where = f"'{source_node.name}'.{source_handle} -> '{target_node.name}'.{target_handle}"
        if source == target:
            raise EditError(f"Cannot connect {where}: a node cannot connect to itself")
        out_socket = _output_socket(definitions, source_node, source_handle)
        in_socket = _input_socket(definitions, target_node, target_handle)
        if out_socket.channel != in_socket.channel:
            raise EditError(f"Cannot connect {where}: {_channel_words(out_socket)} output cannot feed "
                            f"{_channel_words(in_socket)} input")
        ok, reason = can_connect(out_socket.type, in_socket.type)
        if not ok:
            raise EditError(f"Cannot connect {where}: {reason}")
        for edge in self.edges.values():
            if (edge.source, edge.sourceHandle, edge.target, edge.targetHandle) == (
                    source, source_handle, target, target_handle):
                raise EditError(f"{where} is already connected")
        self._refuse_cycle(source_node, target_node, in_socket.channel)
        replaced = [e for e in self.edges.values() if e.target == target and e.targetHandle == target_handle
                    and not in_socket.multiple and in_socket.type != "data"]
        edge = Edge.model_validate({
            "id": _new_edge_id(), "source": source, "sourceHandle": source_handle, "target": target,
            "targetHandle": target_handle,
            "data": {"channel": in_socket.channel, "sourceType": out_socket.type, "targetType": in_socket.type},
        })
        ops = [{"op": "remove_edge", "id": e.id} for e in replaced] + [{"op": "add_edge", "edge": _dump(edge)}]
        return self._commit(ops, "connect")

    def set_parameter(self, definitions: DefinitionSource, node_id: str, parameter_id: str, value: Any, *,
                      keep_invalid: bool = False) -> Change:
        """Set one parameter; an invalid value is refused unless `keep_invalid` (the inspector keeps what was
        typed into a number or json field, so validation and a run report it instead of a stale value running)."""
        node = self._node(node_id)
        definition = _definition(definitions, node.type)
        parameter = definition.parameter(parameter_id)
        if parameter is None or parameter.mode == "output":
            raise EditError(f"Node '{node.name}' ({node.type}) has no editable parameter '{parameter_id}'")
        problem = parameter_problem(parameter, value)
        if problem and not keep_invalid:
            raise EditError(f"{parameter.label}: {problem}")
        # Secrets sent to this URL do not follow it to another origin: they are cleared (secret_values.py).
        cleared = cleared_by(definition, node.data, parameter_id, value)
        updated = node.model_copy(update={"data": {**node.data, parameter_id: value, **cleared}})
        return self._commit(self._update_with_dead_edges(definitions, updated), f"edit {parameter.label}")

    def set_settings(self, definitions: DefinitionSource, node_id: str, settings: NodeSettings) -> Change:
        node = self._node(node_id)
        updated = node.model_copy(update={"settings": settings})
        return self._commit(self._update_with_dead_edges(definitions, updated), "settings")

    def rename(self, node_id: str, name: str) -> Change:
        """Rename a node (names are unique: expressions refer to them) and update expressions that use the old name."""
        node = self._node(node_id)
        name = name.strip()
        if not name:
            raise EditError("A node needs a name")
        if len(name) > 80:
            raise EditError("A node name has at most 80 characters")
        if name == node.name:
            return self._commit([], "rename")
        if self.node_by_name(name) is not None:
            raise EditError(f"Another node is already named '{name}': names are unique in a graph")
        ops = [{"op": "update_node", "node": _dump(node.model_copy(update={"name": name}))}]
        pattern = _reference(node.name)
        for other in self.nodes.values():
            data = _replace_strings(other.data, pattern, name)
            if data != other.data:
                current = ops[0]["node"] if other.id == node_id else _dump(other)
                ops.append({"op": "update_node", "node": {**current, "data": data}})
        return self._commit(ops, "rename")

    def set_viewport(self, viewport: dict[str, float]) -> None:
        """Where the canvas looks: kept with the graph, not an undoable edit."""
        self.viewport = Viewport(**viewport)

    # Names and ids -----------------------------------------------------------------------------

    def unique_name(self, base: str) -> str:
        return _unique(base, {n.name for n in self.nodes.values()})

    def _new_node_id(self, node_type: str, reserved: Iterable[str] = ()) -> str:
        reserved = set(reserved)
        while True:
            candidate = f"{node_type}-{uuid.uuid4().hex[:6]}"
            if candidate not in self.nodes and candidate not in reserved:
                return candidate

    # Internals ---------------------------------------------------------------------------------

    def _node(self, node_id: str) -> Node:
        node = self.nodes.get(node_id)
        if node is None:
            raise EditError(f"No node '{node_id}' in this graph (it may have been deleted)")
        return node

    def _refuse_cycle(self, source: Node, target: Node, channel: str) -> None:
        """A new wire source -> target loops if target already reaches source on the same channel."""
        if channel == "flow" and (source.parentId == target.id or target.parentId == source.id):
            return  # a container and its own children form the loop body
        adjacency: dict[str, list[str]] = {}
        for edge in self.edges.values():
            if edge.data.channel == channel:
                adjacency.setdefault(edge.source, []).append(edge.target)
        adjacency.setdefault(source.id, []).append(target.id)
        cycle = find_cycle(adjacency)
        if cycle and source.id in cycle and target.id in cycle:
            names = " -> ".join(self.nodes[n].name for n in cycle)
            advice = "; use a loop container (For Each) to repeat work" if channel == "flow" else ""
            raise EditError(f"Cannot connect '{source.name}' -> '{target.name}': it would make a loop "
                            f"({names}){advice}")

    def _update_with_dead_edges(self, definitions: DefinitionSource, updated: Node) -> list[Op]:
        """Replace a node; edges from outputs it no longer has (fewer list items, no error output) go."""
        definition = _definition(definitions, updated.type)
        outputs = definition.output_sockets(updated.data, updated.settings.error_mode == "error_output")
        dead = [e.id for e in self.edges.values() if e.source == updated.id and e.sourceHandle not in outputs]
        return [{"op": "remove_edge", "id": i} for i in dead] + [{"op": "update_node", "node": _dump(updated)}]

    def _commit(self, ops: list[Op], label: str) -> Change:
        inverse = self._apply_all(ops)
        change = Change(ops=ops, inverse=inverse, label=label)
        if self.history and any(op["op"] != "select" for op in ops):
            self.undo_stack.append(change)
            del self.undo_stack[:-UNDO_LIMIT]
            self.redo_stack.clear()
        return change

    def _apply_all(self, ops: list[Op]) -> list[Op]:
        """Apply ops in order; return the ops that undo them (in the order to apply)."""
        inverse: list[Op] = []
        for op in ops:
            inverse.append(self._apply(op))
        return [op for op in reversed(inverse) if op]

    def _apply(self, op: Op) -> Op | None:
        kind = op["op"]
        if kind == "add_node":
            node = Node.model_validate(op["node"])
            self.nodes = _insert(self.nodes, node.id, node, op.get("index"))
            return {"op": "remove_node", "id": node.id}
        if kind == "update_node":
            node = Node.model_validate(op["node"])
            before = self.nodes[node.id]
            self.nodes[node.id] = node
            return {"op": "update_node", "node": _dump(before)}
        if kind == "remove_node":
            index = list(self.nodes).index(op["id"])
            return {"op": "add_node", "node": _dump(self.nodes.pop(op["id"])), "index": index}
        if kind == "add_edge":
            edge = Edge.model_validate(op["edge"])
            self.edges = _insert(self.edges, edge.id, edge, op.get("index"))
            return {"op": "remove_edge", "id": edge.id}
        if kind == "remove_edge":
            index = list(self.edges).index(op["id"])
            return {"op": "add_edge", "edge": _dump(self.edges.pop(op["id"])), "index": index}
        return None  # "select": a view hint, nothing to undo


def _insert(items: dict[str, Any], key: str, value: Any, index: int | None) -> dict[str, Any]:
    """Put an item back where it was (undo keeps the graph's order, so exports stay stable)."""
    if index is None or index >= len(items):
        items[key] = value
        return items
    pairs = list(items.items())
    pairs.insert(index, (key, value))
    return dict(pairs)


def _merge_back(current: dict[str, Any], after: dict[str, Any], before: dict[str, Any]) -> dict[str, Any]:
    """`current` with the fields that went from `before` to `after` set back: parameters one by one, and settings
    key by key (the inspector sets them one at a time), so what others changed meanwhile stays."""
    merged = _set_back(current, before, after)
    merged["data"] = _set_back(current["data"], before["data"], after["data"])
    merged["settings"] = _set_back(current["settings"], before["settings"], after["settings"], nested=True)
    return merged


def _set_back(current: dict[str, Any], before: dict[str, Any], after: dict[str, Any],
              nested: bool = False) -> dict[str, Any]:
    """`current` with each key that went from `before` to `after` set back (inner dicts key by key when `nested`)."""
    merged = dict(current)
    for key in set(before) | set(after):
        old, new = before.get(key, _MISSING), after.get(key, _MISSING)
        if old == new:
            continue
        if nested and isinstance(old, dict) and isinstance(new, dict) and isinstance(merged.get(key), dict):
            merged[key] = _set_back(merged[key], old, new, nested)
        elif old is _MISSING:
            merged.pop(key, None)
        else:
            merged[key] = old
    return merged


_MISSING = object()


def _dump(item: Node | Edge) -> dict[str, Any]:
    return item.model_dump(mode="json")


def _new_edge_id() -> str:
    return f"e-{uuid.uuid4().hex[:8]}"


def _unique(base: str, taken: set[str]) -> str:
    base = base.strip() or "Node"
    if base not in taken:
        return base
    stem = re.sub(r" \d+$", "", base)
    index = 2
    while f"{stem} {index}" in taken:
        index += 1
    return f"{stem} {index}"


def _definition(definitions: DefinitionSource, node_type: str) -> NodeDefinition:
    definition = definitions.definition(node_type)
    if definition is None:
        raise EditError(f"Unknown node type '{node_type}' (no such node folder is installed)")
    return definition


def _output_socket(definitions: DefinitionSource, node: Node, handle: str) -> Socket:
    definition = _definition(definitions, node.type)
    sockets = definition.output_sockets(node.data, node.settings.error_mode == "error_output")
    if handle not in sockets:
        raise EditError(f"Node '{node.name}' has no output '{handle}' (it has: {', '.join(sockets) or 'none'})")
    return sockets[handle]


def _input_socket(definitions: DefinitionSource, node: Node, handle: str) -> Socket:
    sockets = _definition(definitions, node.type).input_sockets()
    if handle not in sockets:
        raise EditError(f"Node '{node.name}' has no input '{handle}' (it has: {', '.join(sockets) or 'none'})")
    return sockets[handle]


def _channel_words(socket: Socket) -> str:
    return f"a link ({socket.type})" if socket.channel == "link" else f"a {socket.type}"


def _reference(name: str) -> re.Pattern[str]:
    """`$('name')` or `$("name")` in an expression."""
    return re.compile(r"""\$\(\s*(['"])""" + re.escape(name) + r"""\1\s*\)""")


def _replace_strings(value: Any, pattern: re.Pattern[str], name: str) -> Any:
    quoted = lambda match: f"$({match.group(1)}{name}{match.group(1)})"  # noqa: E731
    if isinstance(value, str):
        return pattern.sub(quoted, value)
    if isinstance(value, dict):
        return {k: _replace_strings(v, pattern, name) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace_strings(v, pattern, name) for v in value]
    return value


def _parse_fragment(text: str, definitions: DefinitionSource) -> tuple[list[Node], list[Edge]]:
    """Nodes and edges from clipboard text: a copied fragment or an exported graph, normalized."""
    try:
        raw = json.loads(text)
    except (json.JSONDecodeError, TypeError):
        raise EditError("The clipboard does not hold NodeFlow nodes (copy nodes with Ctrl+C first)") from None
    except RecursionError:
        raise EditError(f"Cannot paste: the clipboard's JSON is nested deeper than {MAX_DEPTH} levels") from None
    except ValueError:  # a whole number of over 4,300 digits
        raise EditError("Cannot paste: the clipboard holds a whole number of over 4,300 digits") from None
    if not isinstance(raw, dict) or not isinstance(raw.get("nodes"), list) or not raw["nodes"]:
        raise EditError("The clipboard does not hold NodeFlow nodes (copy nodes with Ctrl+C first)")
    # The graph less what the schema refuses (`check`): a broken edge is dropped, a broken node refuses.
    graph, _whole, issues = check({"nodes": raw["nodes"], "edges": raw.get("edges") or []}, definitions)
    blocking = [i for i in issues if i.edge_id is None]
    if blocking or graph is None:
        raise EditError("Cannot paste: " + "; ".join(i.message for i in (blocking or issues)[:3]))
    # A clipboard never holds a sealed value NodeFlow put there (copies carry them emptied): one that does is text
    # from elsewhere, and gets no use of a secret.
    nodes = [n.model_copy(update={"data": forget_sealed_node(definitions.definition(n.type), n.data)})
             for n in graph.nodes]
    return nodes, [e for e in graph.edges if not any(i.edge_id == e.id for i in issues)]
