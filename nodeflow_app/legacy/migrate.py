"""Convert a graph of the older runtime to a NodeFlow graph, with a report; JSON in, JSON out.

Steps:
1. read the old graph (a malformed one is an error naming the item);
2. check the older runtime's sub-agent rules (any broken rule: an error, nothing is converted);
3. drop `end` nodes (the older runtime ignored them) and unknown types, each with a report line;
4. convert each node (nodes.py) under a unique name, and each edge: `subagent` edges become
   `tools-out -> tools` links, the others flow edges with their handles renamed;
5. validate the result (nodeflow_app.validation): its errors are errors of the report, its warnings
   (a model provider not configured yet) warnings.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from nodeflow_app.runtime.graph import DefinitionSource
from nodeflow_app.validation import validate_graph

from . import nodes
from .report import MigrationReport
from .source import OldEdge, OldGraph, OldNode, read_old_graph
from .subagents import is_subagent_edge, subagent_problems

DEFAULT_NAMES = {"start": "Start", "agent": "Agent", "if": "If", "input": "Approval", "approval": "Approval"}
# Output handles per old type: old handle -> new handle (None: the node's only output).
_APPROVAL_HANDLES = {"approve": "approve", "reject": "reject"}
# The field of the old "previous output" each source type fills; the looked-through types pass theirs on.
_SOURCE_FIELDS = {"start": "text", "agent": "response"}
_LOOKED_THROUGH = frozenset({"if", "input", "approval"})


@dataclass
class Migration:
    graph: dict[str, Any] | None  # None when the report has errors
    report: MigrationReport


def migrate_graph(raw: Any, registry: DefinitionSource, *, provider: str = "openai",
                  fallback_name: str | None = None) -> Migration:
    """The NodeFlow graph for an old one; `provider` prefixes bare model names ("gpt-5" -> "openai:gpt-5").

    The graph keeps the old graph's name, else `fallback_name` (a file name), else "Imported graph".
    """
    report = MigrationReport()
    old = read_old_graph(raw)
    for edge_id, why in subagent_problems(old):
        report.add("error", f"edge {edge_id}", why)
    if not report.ok:
        return Migration(None, report)
    _report_extra_keys(old, report)
    kept = _kept_nodes(old, report)
    names = _unique_names(kept)
    # Indexed once: looking these up by scanning every edge for every node was quadratic (cubic for a chain of Ifs).
    fields = _input_fields(old)
    parents: dict[str, str] = {}
    for edge in old.edges:
        if is_subagent_edge(edge):
            parents.setdefault(edge.target, edge.source)
    new_nodes = [_convert_node(node, names[node.id], fields.get(node.id, set()), parents.get(node.id), provider,
                               registry, report) for node in kept.values()]
    new_edges = [e for e in (_convert_edge(old, edge, kept, report) for edge in old.edges) if e is not None]
    _warn_fan_in(new_edges, names, report)
    graph = {"id": old.id or f"migrated-{uuid.uuid4().hex[:12]}", "name": old.name or fallback_name or "Imported graph",
             "version": 1, "nodes": new_nodes, "edges": new_edges}
    if old.viewport is not None:
        graph["viewport"] = {key: value for key, value in old.viewport.items()
                             if key in ("x", "y", "zoom") and isinstance(value, (int, float))}
    _check_converted(graph, registry, report)
    return Migration(graph if report.ok else None, report)


def _check_converted(graph: dict[str, Any], registry: DefinitionSource, report: MigrationReport) -> None:
    """NodeFlow's own checks on the result: its errors stop the import, its warnings are passed on."""
    for issue in validate_graph(graph, registry)[1]:
        where = f"node {issue.node_id}" if issue.node_id else f"edge {issue.edge_id}" if issue.edge_id else "graph"
        if issue.severity == "error":
            report.add("error", where, f"the converted graph breaks a rule ({issue.rule}): {issue.message}")
        else:
            report.add("warning", where, f"{issue.rule}: {issue.message}")


def _report_extra_keys(old: OldGraph, report: MigrationReport) -> None:
    """Keys outside the old format (React Flow's view keys aside) have no place in NodeFlow: say so."""
    items = [("graph", old.extra), *((f"node {n.id} ({n.type})", n.extra) for n in old.nodes),
             *((f"edge {e.id}", e.extra) for e in old.edges)]
    for where, keys in items:
        if keys:
            report.add("unmapped", where, f"keys {list(keys)}: not part of the older format, no equivalent")


def _kept_nodes(old: OldGraph, report: MigrationReport) -> dict[str, OldNode]:
    kept = {}
    for node in old.nodes:
        where = f"node {node.id} ({node.type})"
        if node.type == "end":
            report.add("unmapped", where, "dropped: the older runtime ignored end nodes (and their edges)")
        elif node.type not in nodes.CONVERTERS:
            report.add("unmapped", where, f"dropped: unknown node type {node.type!r} (the older runtime skipped it)")
        else:
            kept[node.id] = node
    return kept


def _unique_names(kept: dict[str, OldNode]) -> dict[str, str]:
    """Node id -> a unique name: agentName or label, else the type's name; repeats get " 2", " 3"."""
    names: dict[str, str] = {}
    used: set[str] = set()
    next_number: dict[str, int] = {}  # where the search for a free " n" resumes: a fresh count per node was quadratic
    for node in kept.values():
        wanted = next((node.data[key].strip() for key in ("agentName", "label")
                       if isinstance(node.data.get(key), str) and node.data[key].strip()),
                      DEFAULT_NAMES[node.type])
        name, n = wanted, next_number.get(wanted, 2)
        while name in used:
            name, n = f"{wanted} {n}", n + 1
        used.add(name)
        next_number[wanted] = n
        names[node.id] = name
    return names


def _convert_node(node: OldNode, name: str, fields: set[str], parent: str | None, provider: str,
                  registry: DefinitionSource, report: MigrationReport) -> dict:
    where = f"node {node.id} ({node.type})"
    ctx = nodes.Context(node, where, _text_field(fields, report, where), provider, report)
    converted = nodes.CONVERTERS[node.type](ctx)
    for key in sorted(set(node.data) - nodes.USED_KEYS[node.type]):
        ctx.unmapped(key, "no equivalent in NodeFlow")
    role = f"; sub-agent (team member) of {parent}" if parent else ""
    label = registry.definition(converted.type).name
    report.add("mapped", where, f"{label} '{name}' ({converted.type}): {converted.summary}{role}")
    return {"id": node.id, "type": converted.type, "version": 1, "name": name,
            "position": node.position, "data": converted.data}


def _input_fields(old: OldGraph) -> dict[str, set[str]]:
    """Node id -> the fields its input may hold the old "previous output" in: `text` from a Start, `response`
    from an Agent. If and Approval pass their input on unchanged, so they are looked through.

    Each field is passed forward along flow edges until nothing changes, for all nodes at once; a node's set
    grows at most twice, so each edge is followed at most twice (a walk back from every node, scanning every
    edge at each step, was cubic in a chain of Ifs).
    """
    flow = [edge for edge in old.edges if not is_subagent_edge(edge) and edge.source in old.by_id]
    outgoing: dict[str, list[str]] = {}
    fields: dict[str, set[str]] = {}
    pending: list[str] = []
    for edge in flow:
        outgoing.setdefault(edge.source, []).append(edge.target)
        field = _SOURCE_FIELDS.get(old.by_id[edge.source].type)
        if field and field not in fields.setdefault(edge.target, set()):
            fields[edge.target].add(field)
            pending.append(edge.target)
    while pending:
        current = pending.pop()
        if current not in old.by_id or old.by_id[current].type not in _LOOKED_THROUGH:
            continue
        for target in outgoing.get(current, []):
            arrived = fields.setdefault(target, set())
            if not fields[current] <= arrived:
                arrived |= fields[current]
                pending.append(target)
    return fields


def _text_field(fields: set[str], report: MigrationReport, where: str) -> str:
    """The input field holding the old "previous output", from the node's `_input_fields`."""
    if len(fields) > 1:
        report.add("warning", where, "its input comes from both a Start (text) and an Agent (response); "
                                     "'response' is read, so the Start's text reaches it only as JSON")
    return "text" if fields == {"text"} else "response"


def _convert_edge(old: OldGraph, edge: OldEdge, kept: dict[str, OldNode], report: MigrationReport) -> dict | None:
    where = f"edge {edge.id}"
    for end in (edge.source, edge.target):
        if end not in kept:
            why = "a dropped node" if end in old.by_id else "a node that does not exist"
            report.add("unmapped", where, f"dropped: {edge.source} -> {edge.target} touches {why} ({end})")
            return None
    if is_subagent_edge(edge):
        report.add("mapped", where, f"sub-agent {edge.source} -> {edge.target}: link "
                                    f"{edge.target}.tools-out -> {edge.source}.tools")
        return _edge(edge.id, edge.target, "tools-out", edge.source, "tools", "link")
    source, target = kept[edge.source], kept[edge.target]
    if target.type == "start":
        report.add("unmapped", where, f"dropped: an edge into the start node {target.id} (a trigger has no input)")
        return None
    handle, why = _source_handle(source, edge.source_handle)
    if handle is None:
        report.add("unmapped", where, f"dropped: {why}")
        return None
    if edge.target_handle not in (None, "input"):
        report.add("warning", where, f"target handle {edge.target_handle!r} becomes 'input' (the only data input)")
    was = f" (old handle {edge.source_handle!r})" if edge.source_handle not in (None, handle) else ""
    report.add("mapped", where, f"flow edge {edge.source}.{handle} -> {edge.target}.input{was}")
    return _edge(edge.id, edge.source, handle, edge.target, "input", "flow")


def _source_handle(source: OldNode, handle: str | None) -> tuple[str | None, str]:
    """The new output handle for an old edge, or (None, why it cannot be mapped)."""
    if source.type in ("start", "agent"):
        return "output", ""
    if source.type in ("input", "approval"):
        if handle in _APPROVAL_HANDLES:
            return _APPROVAL_HANDLES[handle], ""
        return None, (f"approval {source.id} output {handle!r} is neither approve nor reject; "
                      "the older runtime never followed it")
    count = len(_condition_count(source))
    if handle == "true":
        return "condition-0", ""
    if handle == "false":
        return "else", ""
    if handle and handle.startswith("condition-") and handle[len("condition-"):].isdigit():
        index = int(handle[len("condition-"):])
        if index < count:
            return handle, ""
        return None, f"if {source.id} has {count} condition(s); {handle!r} never fired in the older runtime"
    return None, f"if {source.id} output {handle!r} is not condition-<i>, true or false; it never fired"


def _condition_count(node: OldNode) -> list[Any]:
    listed = node.data.get("conditions")
    return listed if isinstance(listed, list) and listed else [node.data.get("condition")]


def _edge(edge_id: str, source: str, source_handle: str, target: str, target_handle: str, channel: str) -> dict:
    return {"id": edge_id, "source": source, "sourceHandle": source_handle, "target": target,
            "targetHandle": target_handle, "data": {"channel": channel}}


def _warn_fan_in(edges: list[dict], names: dict[str, str], report: MigrationReport) -> None:
    """The older runtime ran a node once per arriving edge; NodeFlow runs it once, with one value."""
    incoming: dict[str, list[str]] = {}
    for edge in edges:
        if edge["data"]["channel"] == "flow":
            incoming.setdefault(edge["target"], []).append(edge["id"])
    for target, edge_ids in incoming.items():
        if len(edge_ids) > 1:
            report.add("warning", f"node {target}", f"'{names[target]}' has {len(edge_ids)} incoming edges "
                       f"({', '.join(edge_ids)}): the older runtime ran it once per arriving branch; NodeFlow runs "
                       "it once and fails if more than one branch delivers (add a Merge node, or copy the node)")
