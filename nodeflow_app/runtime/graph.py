"""The graph as data (pydantic) and the one normalizer every boundary uses (save, load, import, run).

`normalize` never guesses: it upgrades node parameters only through the migrations a definition
declares, fills parameter defaults, and reports every broken rule as a `GraphIssue`.
"""

from __future__ import annotations

import math
from operator import attrgetter
from typing import Any, Callable

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from nodeflow_app.runtime.coercion import can_connect
from nodeflow_app.runtime.expressions import place
from nodeflow_app.runtime.values import text_problem, value_problem
from nodeflow_app.contract import Channel, ErrorMode, NodeDefinition, NodeError, Parameter, Socket


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class Position(_Model):
    x: float = 0.0
    y: float = 0.0


class RetryPolicy(_Model):
    max_attempts: int = Field(default=1, ge=1, le=20)
    initial_interval: float = Field(default=1.0, ge=0)
    backoff_factor: float = Field(default=2.0, ge=1)
    max_interval: float = Field(default=30.0, ge=0)


class NodeSettings(_Model):
    """Per-node run settings, the same for every node type."""

    error_mode: ErrorMode = "stop"
    retry: RetryPolicy = Field(default_factory=RetryPolicy)
    timeout: float | None = Field(default=None, gt=0)


class Node(_Model):
    id: str = Field(min_length=1)
    type: str = Field(min_length=1)
    version: int = Field(default=1, ge=1)
    name: str = Field(min_length=1)
    position: Position = Field(default_factory=Position)
    data: dict[str, Any] = Field(default_factory=dict)
    parentId: str | None = None
    settings: NodeSettings = Field(default_factory=NodeSettings)


class EdgeData(_Model):
    channel: Channel
    sourceType: str | None = None
    targetType: str | None = None


class Edge(_Model):
    id: str = Field(min_length=1)
    source: str
    sourceHandle: str
    target: str
    targetHandle: str
    data: EdgeData


class Viewport(_Model):
    x: float = 0.0
    y: float = 0.0
    zoom: float = 1.0


class Graph(_Model):
    id: str = "graph"
    name: str = "Untitled"
    version: int = 1
    nodes: list[Node] = Field(default_factory=list)
    edges: list[Edge] = Field(default_factory=list)
    viewport: Viewport = Field(default_factory=Viewport)


class GraphIssue(BaseModel):
    """One broken rule: a code to test against, a sentence for people, and where."""

    rule: str
    message: str
    node_id: str | None = None
    edge_id: str | None = None
    parameter: str | None = None  # the node's parameter at fault, when one is

    def __str__(self) -> str:
        where = f"node {self.node_id}" if self.node_id else f"edge {self.edge_id}" if self.edge_id else "graph"
        return f"{where}: [{self.rule}] {self.message}"


class GraphInvalid(ValueError):
    """Raised by `normalize_or_raise`; carries every issue found."""

    def __init__(self, issues: list[GraphIssue]):
        self.issues = issues
        super().__init__("invalid graph:\n" + "\n".join(f"  {issue}" for issue in issues))


class DefinitionSource:
    """Anything with `definition(node_type) -> NodeDefinition | None` (the registry)."""

    def definition(self, node_type: str) -> NodeDefinition | None: ...  # pragma: no cover


def normalize(raw: dict[str, Any] | Graph, registry: DefinitionSource, *,
              trigger: str | None = None) -> tuple[Graph | None, list[GraphIssue]]:
    """Validate a graph against every rule; return the normalized graph (None if unreadable) and issues.

    `trigger` (a node id or name) adds the rules of a run that starts there. A graph the schema refuses in part
    is unreadable, and the rest of it is checked too: every problem is listed at once (see `check`).
    """
    graph, whole, issues = check(raw, registry, trigger=trigger)
    return (graph if whole else None), issues


def check(raw: dict[str, Any] | Graph, registry: DefinitionSource, *,
          trigger: str | None = None) -> tuple[Graph | None, bool, list[GraphIssue]]:
    """`normalize` for checkers that go on to look at the graph: (the graph normalized, whether it is whole,
    every issue). Not whole: the schema refused some of its nodes, edges or fields (or they hold a value JSON
    cannot), which the issues name, and the graph is the rest of it, checked by every other rule (never one to
    run). None when no part of it can be read."""
    graph, issues = _parse(raw)
    whole = graph is not None
    if graph is None:
        rest = _readable_part(raw)
        graph = None if rest is None else _parse(rest)[0]
        if graph is None:
            return None, False, issues
    _upgrade_and_fill(graph, registry, issues)
    nodes = {n.id: n for n in graph.nodes}
    _check_unique(graph, nodes, issues)
    _check_parents(graph, registry, nodes, issues)
    _check_edges(graph, registry, nodes, issues)
    _check_flow_cycles(graph, nodes, issues)
    _check_link_cycles(graph, issues)
    if trigger is not None and (whole or find_node(graph, trigger) is not None):  # else it may be a refused node
        issues.extend(trigger_issues(graph, registry, trigger))
    return graph, whole, issues


def normalize_or_raise(raw: dict[str, Any] | Graph, registry: DefinitionSource, *,
                       trigger: str | None = None) -> Graph:
    graph, issues = normalize(raw, registry, trigger=trigger)
    if issues or graph is None:
        raise GraphInvalid(issues)
    return graph


def find_node(graph: Graph, id_or_name: str) -> Node | None:
    return next((n for n in graph.nodes if n.id == id_or_name), None) or next(
        (n for n in graph.nodes if n.name == id_or_name), None)


# 1. Shape -------------------------------------------------------------------------------------

def _parse(raw: dict[str, Any] | Graph) -> tuple[Graph | None, list[GraphIssue]]:
    if isinstance(raw, Graph):
        return raw.model_copy(deep=True), []
    if not isinstance(raw, dict):
        return None, [GraphIssue(rule="schema", message=f"a graph is a JSON object, got {type(raw).__name__}")]
    try:
        graph = Graph.model_validate(raw)
    except ValidationError as error:
        # A value JSON cannot hold (NaN, a NUL, deep nesting) is often what broke the schema: name it first.
        return None, _value_issues(raw) or [_schema_issue(raw, e) for e in error.errors()]
    if _values_fine(graph):
        return graph, []
    issues = _value_issues(raw)
    return (None, issues) if issues else (graph, [])


def _readable_part(raw: Any) -> dict[str, Any] | None:
    """The graph without what the schema (or a value JSON cannot hold) refuses: those nodes and edges, the edges
    to a refused node (that edge is not at fault), and other fields (their defaults instead). None when nothing
    was refused or the nodes or edges are not lists."""
    if not isinstance(raw, dict) or not isinstance(raw.get("nodes", []), list) or not isinstance(
            raw.get("edges", []), list):
        return None
    fields = {key: value for key, value in raw.items() if key not in ("nodes", "edges")}
    rest = {key: value for key, value in fields.items() if _readable(Graph, {key: value})}
    nodes, refused = [], set()
    for node in raw.get("nodes", []):
        if _readable(Node, node):
            nodes.append(node)
        elif isinstance(node, dict) and isinstance(node.get("id"), str):
            refused.add(node["id"])
    edges = [edge for edge in raw.get("edges", []) if _readable(Edge, edge)
             and edge["source"] not in refused and edge["target"] not in refused]
    if len(rest) == len(fields) and len(nodes) == len(raw.get("nodes", [])) and len(edges) == len(
            raw.get("edges", [])):
        return None
    return {**rest, "nodes": nodes, "edges": edges}


def _readable(model: type[BaseModel], item: Any) -> bool:
    try:
        model.model_validate(item)
    except ValidationError:
        return False
    return value_problem(item, strict_text=True) is None


def _text_of(model: type[BaseModel]) -> Callable[[BaseModel], tuple]:
    """A getter of the model's text fields (str or str | None), read off its declaration."""
    names = [name for name, field in model.model_fields.items() if field.annotation in (str, str | None)]
    return attrgetter(*names)


_NODE_TEXT, _EDGE_TEXT, _EDGE_DATA_TEXT = _text_of(Node), _text_of(Edge), _text_of(EdgeData)
_BIG_INT = 1 << 62


def _values_fine(graph: Graph) -> bool:
    """What `_value_issues` checks, on a parsed graph and fast (every run normalizes): the schema already
    refused NaN and Infinity in typed fields and fixes their nesting, so what is left is the text of its
    fields, the size of its whole numbers and the free-form parameters. False: look closer."""
    texts = [graph.id, graph.name]
    for node in graph.nodes:
        texts.extend(_NODE_TEXT(node))
        if node.version >= _BIG_INT:
            return False
    for edge in graph.edges:
        texts.extend(_EDGE_TEXT(edge))
        texts.extend(_EDGE_DATA_TEXT(edge.data))
    text = "".join(filter(None, texts))
    if "\x00" in text or (not text.isascii() and text_problem(text)) or graph.version >= _BIG_INT:
        return False
    data = [node.data for node in graph.nodes if node.data]
    return not data or value_problem(data, strict_text=True) is None


def _value_issues(raw: dict[str, Any]) -> list[GraphIssue]:
    """NaN/Infinity, huge numbers, nesting beyond MAX_DEPTH, NUL or lone surrogates: one issue per node."""
    if value_problem(raw, strict_text=True) is None:  # one pass over the whole graph, the usual case
        return []
    nodes = raw.get("nodes")
    issues = []
    for index, node in enumerate(nodes if isinstance(nodes, list) else []):
        problem = value_problem(node, strict_text=True)
        if problem:
            item = node if isinstance(node, dict) else {}
            name = item.get("name") if isinstance(item.get("name"), str) and not text_problem(item["name"]) else None
            node_id = item.get("id") if isinstance(item.get("id"), str) and not text_problem(item["id"]) else None
            issues.append(GraphIssue(rule="invalid_value", node_id=node_id or f"#{index}", message=(
                f"node {f'{name!r}' if name else f'#{index}'} {problem[2:]}")))
    rest = {k: v for k, v in raw.items() if k != "nodes"}
    problem = value_problem(rest, strict_text=True)
    if problem:
        issues.append(GraphIssue(rule="invalid_value", message=problem[2:]))
    return issues


def _schema_issue(raw: dict[str, Any], error: dict[str, Any]) -> GraphIssue:
    loc = error["loc"]
    where = ".".join(str(part) for part in loc)
    issue = GraphIssue(rule="schema", message=f"{where}: {error['msg']}")
    if len(loc) >= 2 and loc[0] in ("nodes", "edges") and isinstance(loc[1], int):
        items = raw.get(loc[0]) or []
        item = items[loc[1]] if loc[1] < len(items) and isinstance(items[loc[1]], dict) else {}
        key = "node_id" if loc[0] == "nodes" else "edge_id"
        setattr(issue, key, str(item.get("id", f"#{loc[1]}")))
        if loc[0] == "nodes" and isinstance(item.get("name"), str):
            issue.message = f"node '{item['name']}': {issue.message}"
    return issue


# 2. Node types, versions and parameters -------------------------------------------------------

def _upgrade_and_fill(graph: Graph, registry: DefinitionSource, issues: list[GraphIssue]) -> None:
    for node in graph.nodes:
        definition = registry.definition(node.type)
        if definition is None:
            issues.append(GraphIssue(rule="unknown_node_type", node_id=node.id,
                                     message=f"node '{node.name}' has unknown type '{node.type}'"))
            continue
        if node.version > definition.version:
            issues.append(GraphIssue(rule="unknown_node_version", node_id=node.id, message=(
                f"node '{node.name}' is {node.type} v{node.version}, but this NodeFlow knows up to "
                f"v{definition.version}")))
            continue
        if node.version < definition.version:
            node.data = definition.migrate(node.data, node.version)
            node.version = definition.version
        node.data = {**definition.defaults(), **node.data}
        hidden = definition.hidden_parameters(node.data)  # they do not apply: their node does not use them
        for key, value in node.data.items():
            parameter = definition.parameter(key)
            if parameter is None:
                issues.append(GraphIssue(rule="unknown_parameter", node_id=node.id, parameter=key, message=(
                    f"node '{node.name}' ({node.type}) has no parameter '{key}'")))
                continue
            problem = None if key in hidden else (parameter_problem(parameter, value)
                                                  or bound_problem(parameter, value, node.data))
            if problem:
                issues.append(GraphIssue(rule="invalid_parameter", node_id=node.id, parameter=key,
                                         message=f"node '{node.name}' parameter '{key}': {problem}"))


_PYTHON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,), "text": (str,), "code": (str,), "model": (str,),
    "int": (int,), "float": (int, float), "boolean": (bool,),
    "key_value": (dict, list), "list": (list,),
}


# A json parameter whose text was not JSON when it was typed in the editor keeps that text in this one-key
# envelope, so nothing typed is lost (a reload shows it again); every check refuses it until it is fixed.
INVALID_JSON = "$invalid_json"


def invalid_json(text: str) -> dict[str, str]:
    """The envelope that keeps `text`, typed into a json parameter, while it is not valid JSON."""
    return {INVALID_JSON: text}


def invalid_json_text(value: Any) -> str | None:
    """The text kept in an `invalid_json` envelope, or None when `value` is not one."""
    if isinstance(value, dict) and len(value) == 1 and isinstance(value.get(INVALID_JSON), str):
        return value[INVALID_JSON]
    return None


def parameter_problem(parameter: Parameter, value: Any) -> str | None:
    """Why a parameter value is invalid, or None. Expressions (`{{ ... }}`) are checked when they run."""
    if value is None:
        return "a value is required" if parameter.required else None
    if parameter.type == "json" and invalid_json_text(value) is not None:
        return "not valid JSON (the text typed in the editor is kept until it is fixed there)"
    if isinstance(value, str) and "{{" in value and parameter.expressions:
        return None
    if parameter.secret and isinstance(value, dict) and len(value) == 1:
        return None  # a secret's sealed envelope (encrypted at rest; its node reveals it when it runs)
    expected = _PYTHON_TYPES.get(parameter.type)
    if expected and (not isinstance(value, expected) or (bool not in expected and isinstance(value, bool))):
        return f"expected {parameter.type}, got {type(value).__name__} {value!r:.60}"
    if parameter.type == "select" and parameter.options and value not in [o.value for o in parameter.options]:
        allowed = ", ".join(repr(o.value) for o in parameter.options)
        return f"{value!r} is not one of {allowed}"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if parameter.min is not None and value < parameter.min:
            return f"{value} is below the minimum {parameter.min:g}"
        if parameter.max is not None and value > parameter.max:
            return f"{value} is above the maximum {parameter.max:g}"
    if parameter.type == "list" and parameter.fields:
        for index, item in enumerate(value):
            if not isinstance(item, dict):
                return f"{place('', index)} must be an object"
            for field in parameter.fields:
                problem = parameter_problem(field, item.get(field.id, field.default))
                if problem:
                    return f"{place(place('', index), field.id)}: {problem}"
    return None


def bound_problem(parameter: Parameter, value: Any, data: dict[str, Any]) -> str | None:
    """Why a number is over the maximum another parameter of its node sets (`Parameter.max_by`), or None."""
    if not parameter.max_by or isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    for other, maxima in parameter.max_by.items():
        choice = data.get(other)
        bound = maxima.get(choice) if isinstance(choice, str) else None
        if bound is not None and value > bound:
            return f"{value:g} is above the maximum {bound:g} when {other} is {choice!r}"
    return None


def checked_values(definition: NodeDefinition, data: dict[str, Any], written: dict[str, Any]) -> dict[str, Any]:
    """`data` (a fresh dict) with each parameter an expression or a wire set, i.e. not the very value `written`
    in the graph (checked when the graph loaded), checked as the graph's values are, before the node runs: an int
    or float parameter made a number within its bounds (numeric text becomes its number), a boolean true or false
    (the text "true" or "false" too), a select one of its options. Anything else is a NodeError naming the
    parameter."""
    for key, value in data.items():
        if value is written.get(key, _ABSENT) or value is None:
            continue
        parameter = definition.parameter(key)
        if parameter is None:
            continue
        if parameter.type in ("int", "float"):
            data[key] = _number(parameter, value)
        elif parameter.type == "boolean":
            data[key] = _boolean(parameter, value)
        elif parameter.type == "select" and (problem := parameter_problem(parameter, value)):
            raise NodeError(f"parameter '{parameter.id}': {problem}")
    for parameter in definition.bounded_parameters:  # after the loop: its bound may come from an expression too
        if problem := bound_problem(parameter, data.get(parameter.id), data):
            raise NodeError(f"parameter '{parameter.id}': {problem}")
    return data


_ABSENT = object()


def _number(parameter: Parameter, value: Any) -> int | float | None:
    """Blank text is no value (a node's "empty: no limit" or "the model's default"), as an empty form field is."""
    number = value
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        try:
            number = int(text) if parameter.type == "int" and text.lstrip("+-").isdigit() else float(text)
        except ValueError:
            kind = "a whole number" if parameter.type == "int" else "a number"
            raise NodeError(f"parameter '{parameter.id}': {text[:60]!r} is not {kind}") from None
    if isinstance(number, float) and not math.isfinite(number):
        raise NodeError(f"parameter '{parameter.id}': {number} is not a number it can use")
    if parameter.type == "int" and isinstance(number, float) and number.is_integer():
        number = int(number)
    problem = parameter_problem(parameter, number)
    if problem:
        raise NodeError(f"parameter '{parameter.id}': {problem}")
    return number


def boolean_of(value: Any) -> bool | None:
    """`value` as a boolean parameter takes it: true or false, or the text of one ("false" from a form or a query
    string was any node's `bool(...)`: true); None for anything else."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    return None


def _boolean(parameter: Parameter, value: Any) -> bool:
    flag = boolean_of(value)
    if flag is None:
        raise NodeError(f"parameter '{parameter.id}': expected true or false, got {type(value).__name__} "
                        f"{value!r:.60}")
    return flag


# 3. Identity and containment ------------------------------------------------------------------

def _check_unique(graph: Graph, nodes: dict[str, Node], issues: list[GraphIssue]) -> None:
    for attr, rule, items, key in (
        ("id", "duplicate_node_id", graph.nodes, "node_id"),
        ("name", "duplicate_node_name", graph.nodes, "node_id"),
        ("id", "duplicate_edge_id", graph.edges, "edge_id"),
    ):
        first: dict[str, Node | Edge] = {}
        for item in items:
            value = getattr(item, attr)
            if value in first:
                issues.append(GraphIssue(rule=rule, **{key: item.id}, message=(
                    f"{_describe(item, attr, nodes)} has the {attr} '{value}', "
                    f"already used by {_describe(first[value], attr, nodes)}")))
            first.setdefault(value, item)


def _describe(item: Node | Edge, shared: str, nodes: dict[str, Node]) -> str:
    """Name a duplicate by what it does not share: a node by name (shared id) or id (shared name)."""
    if isinstance(item, Edge):
        return f"edge {_edge_label(item, nodes)}"
    return f"node '{item.name}'" if shared == "id" else f"node {item.id}"


def _check_parents(graph: Graph, registry: DefinitionSource, nodes: dict[str, Node],
                   issues: list[GraphIssue]) -> None:
    for node in graph.nodes:
        if node.parentId is None:
            continue
        parent = nodes.get(node.parentId)
        definition = registry.definition(parent.type) if parent else None
        if parent is None:
            issues.append(GraphIssue(rule="missing_parent", node_id=node.id,
                                     message=f"node '{node.name}' has parentId '{node.parentId}', which does not exist"))
        elif definition is not None and not definition.container:
            issues.append(GraphIssue(rule="parent_not_container", node_id=node.id, message=(
                f"node '{node.name}' is inside '{parent.name}', but {parent.type} is not a container")))
    cycle = find_cycle({n.id: [n.parentId] for n in graph.nodes if n.parentId in nodes})
    if cycle:
        issues.append(GraphIssue(rule="parent_cycle", node_id=cycle[0], message=(
            "containers nest inside each other in a loop: " + " in ".join(nodes[n].name for n in cycle))))


# 4. Edges: endpoints, handles, channels, types, single parents --------------------------------

def _check_edges(graph: Graph, registry: DefinitionSource, nodes: dict[str, Node],
                 issues: list[GraphIssue]) -> None:
    link_parents: dict[tuple[str, str], int] = {}
    for edge in graph.edges:
        sockets = _edge_sockets(edge, registry, nodes, issues)
        if sockets is None:
            continue
        source_socket, target_socket = sockets
        if _check_edge_types(edge, source_socket, target_socket, nodes, issues) and edge.data.channel == "link":
            key = (edge.target, edge.targetHandle)
            link_parents[key] = link_parents.get(key, 0) + 1
            if link_parents[key] == 2 and not target_socket.multiple:
                issues.append(GraphIssue(rule="link_single_parent", edge_id=edge.id, node_id=edge.target, message=(
                    f"input '{edge.targetHandle}' of node '{nodes[edge.target].name}' takes one link, "
                    f"but several are wired")))


def _edge_sockets(edge: Edge, registry: DefinitionSource, nodes: dict[str, Node],
                  issues: list[GraphIssue]) -> tuple[Socket, Socket] | None:
    found: list[Socket] = []
    for end, node_id, handle in (("source", edge.source, edge.sourceHandle), ("target", edge.target, edge.targetHandle)):
        node = nodes.get(node_id)
        if node is None:
            issues.append(GraphIssue(rule="edge_missing_node", edge_id=edge.id,
                                     message=f"edge {_edge_label(edge, nodes)}: its {end} '{node_id}' "
                                             "is not a node of this graph"))
            continue
        definition = registry.definition(node.type)
        if definition is None:
            continue  # reported as unknown_node_type
        error_output = node.settings.error_mode == "error_output"
        sockets = (definition.output_sockets(_repeatable(definition, node.data), error_output)
                   if end == "source" else definition.input_sockets())
        socket = sockets.get(handle)
        if socket is None:
            kind = "output" if end == "source" else "input"
            known = ", ".join(sockets) or "none"
            issues.append(GraphIssue(rule="edge_missing_handle", edge_id=edge.id, node_id=node.id, message=(
                f"node '{node.name}' ({node.type}) has no {kind} '{handle}' (it has: {known})")))
            continue
        found.append(socket)
    return (found[0], found[1]) if len(found) == 2 else None


def _repeatable(definition: NodeDefinition, data: dict[str, Any]) -> dict[str, Any]:
    """Data safe for expanding repeat ports: a non-list value (reported as invalid_parameter) repeats nothing."""
    repeats = {s.repeat for s in definition.outputs if s.repeat}
    if not repeats:
        return data
    return {k: v if k not in repeats or isinstance(v, list) else [] for k, v in data.items()}


def _edge_label(edge: Edge, nodes: dict[str, Node]) -> str:
    """`'Source'.handle -> 'Target'.handle`: how people find an edge on the canvas (missing nodes by id)."""
    ends = ((edge.source, edge.sourceHandle), (edge.target, edge.targetHandle))
    return " -> ".join(f"'{nodes[n].name}'.{h}" if n in nodes else f"{n}.{h}" for n, h in ends)


def _check_edge_types(edge: Edge, source: Socket, target: Socket, nodes: dict[str, Node],
                      issues: list[GraphIssue]) -> bool:
    before = len(issues)
    def label() -> str:  # made only when an issue names the edge: normalizing is on every run's path
        return _edge_label(edge, nodes)

    if edge.data.channel != source.channel or edge.data.channel != target.channel:
        issues.append(GraphIssue(rule="edge_channel_mismatch", edge_id=edge.id, message=(
            f"edge {label()} is marked '{edge.data.channel}' but connects a '{source.channel}' output "
            f"to a '{target.channel}' input")))
    for end, declared, socket in (("sourceType", edge.data.sourceType, source), ("targetType", edge.data.targetType, target)):
        if declared is not None and declared != socket.type:
            issues.append(GraphIssue(rule="edge_type_mismatch", edge_id=edge.id, message=(
                f"edge {label()} says {end} '{declared}' but the socket '{socket.id}' is '{socket.type}'")))
    ok, reason = can_connect(source.type, target.type)
    if not ok:
        issues.append(GraphIssue(rule="incompatible_types", edge_id=edge.id, message=f"edge {label()}: {reason}"))
    edge.data.sourceType, edge.data.targetType = source.type, target.type
    return len(issues) == before


# 5. Cycles -------------------------------------------------------------------------------------

def _check_flow_cycles(graph: Graph, nodes: dict[str, Node], issues: list[GraphIssue]) -> None:
    """Flow edges must form a DAG, except edges between a container and its own children."""
    adjacency: dict[str, list[str]] = {}
    for edge in graph.edges:
        if edge.data.channel != "flow" or edge.source not in nodes or edge.target not in nodes:
            continue
        if nodes[edge.source].parentId == edge.target or nodes[edge.target].parentId == edge.source:
            continue
        adjacency.setdefault(edge.source, []).append(edge.target)
    cycle = find_cycle(adjacency)
    if cycle:
        names = " -> ".join(nodes[n].name for n in cycle)
        issues.append(GraphIssue(rule="flow_cycle", node_id=cycle[0], message=(
            f"the data flow loops: {names}; use a loop container (For Each) to repeat work")))


def _check_link_cycles(graph: Graph, issues: list[GraphIssue]) -> None:
    adjacency: dict[str, list[str]] = {}
    for edge in graph.edges:
        if edge.data.channel == "link":
            adjacency.setdefault(edge.source, []).append(edge.target)
    cycle = find_cycle(adjacency)
    if cycle:
        names = {n.id: n.name for n in graph.nodes}
        issues.append(GraphIssue(rule="link_cycle", node_id=cycle[0], message=(
            "links form a cycle: " + " -> ".join(names.get(n, n) for n in cycle))))


def find_cycle(adjacency: dict[str, list[str]]) -> list[str] | None:
    """A cycle as a path that starts and ends at the same node, or None (iterative DFS)."""
    state: dict[str, int] = {}  # 1 = on the stack, 2 = done
    for root in list(adjacency):
        if state.get(root):
            continue
        stack: list[tuple[str, int]] = [(root, 0)]
        path: list[str] = [root]
        state[root] = 1
        while stack:
            node, index = stack[-1]
            children = adjacency.get(node, [])
            if index == len(children):
                stack.pop()
                path.pop()
                state[node] = 2
                continue
            stack[-1] = (node, index + 1)
            child = children[index]
            if state.get(child) == 1:
                return path[path.index(child):] + [child]
            if not state.get(child):
                state[child] = 1
                stack.append((child, 0))
                path.append(child)
    return None


# 6. The run's trigger --------------------------------------------------------------------------

def trigger_issues(graph: Graph, registry: DefinitionSource, trigger: str) -> list[GraphIssue]:
    """The rules of a run that starts at `trigger` (a node id or name)."""
    issues: list[GraphIssue] = []
    node = find_node(graph, trigger)
    if node is None:
        triggers = [n.name for n in graph.nodes if (d := registry.definition(n.type)) and d.trigger]
        issues.append(GraphIssue(rule="missing_trigger", message=(
            f"no node '{trigger}' to start the run from (triggers here: {', '.join(triggers) or 'none'})")))
        return issues
    definition = registry.definition(node.type)
    if definition is not None and not definition.trigger:
        issues.append(GraphIssue(rule="not_a_trigger", node_id=node.id,
                                 message=f"node '{node.name}' ({node.type}) is not a trigger; runs start at triggers"))
    return issues
