"""What is wrong with a graph before it runs: the one check behind `nodeflow validate`, the editor's
Validate button and the inspector's inline errors.

`validate_graph` runs the normalizer (shape, types, parameters, edges, cycles) and then what a run would
trip over later: malformed expressions, `$('Name')` naming no node or a node that is not upstream (the
same visibility rule as the kernel's expression scope), a model whose provider is not configured
(a warning: the graph is right, the install is not), and a webhook answer's header or status that
activation refuses (nodeflow_app/triggers/webhook_answer.py), and a list that makes a node's outputs set by an
expression (a warning: the ports come from the list as written). `node_issues` runs the per-node part for one
node; `references_to` says which nodes read given nodes (the editor warns when those are deleted).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Literal

from nodeflow_app.llm.providers import PROVIDERS, missing_steps
from nodeflow_app.runtime.expressions import check_syntax, close_match, has_expression, place, referenced_nodes
from nodeflow_app.runtime.graph import (DefinitionSource, Graph, GraphIssue, Node, bound_problem, check,
                                        parameter_problem)
from nodeflow_app.contract import NodeDefinition, NodeError, Parameter
from nodeflow_app.triggers import webhook_answer

Severity = Literal["error", "warning"]


@dataclass(frozen=True, slots=True)
class Issue:
    """One problem: how bad, which rule, a sentence for people, and where (node, parameter, edge)."""

    severity: Severity
    rule: str
    message: str
    node_id: str | None = None
    node_name: str | None = None
    parameter: str | None = None
    edge_id: str | None = None

    def line(self) -> str:
        """`edge e1, node n2 'Name', parameter 'p': rule: message` (warnings say so after the place)."""
        where = []
        if self.edge_id:
            where.append(f"edge {self.edge_id}")
        if self.node_id:
            where.append(f"node {self.node_id}" + (f" '{self.node_name}'" if self.node_name else ""))
        if self.parameter:
            where.append(f"parameter '{self.parameter}'")
        kind = "warning: " if self.severity == "warning" else ""
        return f"{', '.join(where) or 'graph'}: {kind}{self.rule}: {self.message}"

    def as_dict(self) -> dict[str, str]:
        return {"severity": self.severity, "rule": self.rule, "message": self.message, "node_id": self.node_id or "",
                "node_name": self.node_name or "", "parameter": self.parameter or "", "edge_id": self.edge_id or ""}


def errors(issues: list[Issue]) -> list[Issue]:
    return [issue for issue in issues if issue.severity == "error"]


def validate_graph(raw: dict[str, Any] | Graph, registry: DefinitionSource, *,
                   trigger: str | None = None) -> tuple[Graph | None, list[Issue]]:
    """The normalized graph (None when unreadable) and every issue, errors before warnings. When the schema
    refuses part of the graph, the rest of it is checked all the same (`check`), so every problem shows at once."""
    graph, whole, graph_issues = check(raw, registry, trigger=trigger)
    names = {n.id: n.name for n in graph.nodes} if whole and graph is not None else _names(raw)
    issues = [_from_graph_issue(issue, names) for issue in graph_issues]
    if graph is not None:
        refused = frozenset() if whole else frozenset(names.values()) - {n.name for n in graph.nodes}  # reported above
        checker = _NodeChecker(graph, registry, refused)
        for node in graph.nodes:
            issues.extend(checker.references_and_models(node))
            issues.extend(answer_issues(node, registry.definition(node.type), issues))
            issues.extend(output_issues(node, registry.definition(node.type)))
    return graph if whole else None, sorted(issues, key=lambda issue: issue.severity != "error")


def node_issues(graph: Graph, registry: DefinitionSource, node_id: str) -> list[Issue]:
    """The issues of one node's parameters (the inspector shows them under each field)."""
    node = next((n for n in graph.nodes if n.id == node_id), None)
    definition = registry.definition(node.type) if node else None
    if node is None or definition is None:
        return []
    found = []
    hidden = definition.hidden_parameters(node.data)
    for parameter in definition.parameters:
        if parameter.mode == "output" or parameter.id in hidden:
            continue
        value = node.data.get(parameter.id, parameter.default)
        problem = parameter_problem(parameter, value) or bound_problem(parameter, value, node.data)
        if problem:
            found.append(_issue("error", "invalid_parameter", node, parameter.id, problem))
    return (found + answer_issues(node, definition, found) + output_issues(node, definition)
            + _NodeChecker(graph, registry).references_and_models(node))


def output_issues(node: Node, definition: NodeDefinition | None) -> list[Issue]:
    """A list that makes the node's outputs (one per entry: Switch conditions, classifier categories) set by an
    expression: the ports come from the list as written, so a run that routes to an entry fails."""
    if definition is None:
        return []
    repeats = {socket.repeat for socket in definition.outputs if socket.repeat is not None}
    return [_issue("warning", "outputs_from_expression", node, key,
                   "set by an expression, but this node's outputs are made from the list as written, so it has none "
                   "for the entries the expression gives; a run fails when it routes to one. Write the list here "
                   "(an output per entry)")
            for key in sorted(repeats) if isinstance(node.data.get(key), str) and has_expression(node.data[key])]


def answer_issues(node: Node, definition: NodeDefinition | None, known: list[Issue]) -> list[Issue]:
    """A webhook's answer settings that activation refuses (a header acting for NodeFlow's site, a redirect),
    besides the parameters `known` already finds wrong. Chosen by the trigger's entry points, never its type."""
    if definition is None or webhook_answer.STARTED_BY not in definition.started_by:
        return []
    flagged = {issue.parameter for issue in known if issue.node_id == node.id} | definition.hidden_parameters(node.data)
    return [_issue("error", "unsafe_answer", node, parameter, problem)
            for parameter, problem in webhook_answer.settings(node.data).problems if parameter not in flagged]


# 1. Per node: expressions and models -----------------------------------------------------------

class _NodeChecker:
    """Checks that need the whole graph (names, flow edges, wires); built once per validation."""

    def __init__(self, graph: Graph, registry: DefinitionSource, refused: frozenset[str] = frozenset()):
        self.registry = registry
        self.refused = refused  # names of nodes the schema refused: not in `graph`, and already reported
        self.nodes = {n.id: n for n in graph.nodes}
        self.by_name = {n.name: n.id for n in graph.nodes}
        self.flow_in: dict[str, list[str]] = {}
        self.wired: set[tuple[str, str]] = set()
        for edge in graph.edges:
            self.wired.add((edge.target, edge.targetHandle))
            if edge.data.channel == "flow":
                self.flow_in.setdefault(edge.target, []).append(edge.source)
        self.provider_steps: dict[str, list[str]] = {}

    def references_and_models(self, node: Node) -> list[Issue]:
        definition = self.registry.definition(node.type)
        if definition is None:
            return []
        found: list[Issue] = []
        visible: set[str] | None = None
        hidden = definition.hidden_parameters(node.data)
        for key, where, text in _node_expressions(node, definition):
            if key in hidden:
                continue
            found.extend(_issue("error", "invalid_expression", node, key, _at(where, str(error)))
                         for error in check_syntax(text))
            for name in sorted(referenced_nodes(text) - self.refused):
                visible = self.visible_from(node.id) if visible is None else visible
                problem = self.reference_problem(node, name, visible)
                if problem:
                    found.append(_issue("error", "invalid_reference", node, key, _at(where, problem)))
        for key, value in node.data.items():
            parameter = definition.parameter(key)
            if parameter is not None and key not in hidden:
                found.extend(self.model_issues(node, parameter, value))
        return found

    def visible_from(self, node_id: str) -> set[str]:
        """What `$('Name')` may read in this node: its flow ancestors, and its container's with the container
        (the kernel's expression scope, nodeflow_app.runtime.run._Scope, uses the same rule)."""
        seen = self._ancestors(node_id)
        parent = self.nodes[node_id].parentId
        if parent in self.nodes:
            seen |= self._ancestors(parent) | {parent}
        return seen

    def _ancestors(self, node_id: str) -> set[str]:
        seen: set[str] = set()
        stack = [node_id]
        while stack:
            for source in self.flow_in.get(stack.pop(), ()):
                if source not in seen:
                    seen.add(source)
                    stack.append(source)
        return seen

    def reference_problem(self, node: Node, name: str, visible: set[str]) -> str | None:
        target = self.by_name.get(name)
        if target is None:
            guess = close_match(name, list(self.by_name))
            hint = f"; did you mean '{guess[0]}'?" if guess else ""
            return f"$('{name}') names no node of this graph{hint}"
        if target == node.id:
            return f"$('{name}') is this node itself; an expression reads nodes upstream of it"
        if target not in visible:
            return (f"$('{name}'): '{name}' is not upstream of '{node.name}', so its output is never available "
                    f"here; wire it (directly or through other nodes) into '{node.name}'")
        return None

    def model_issues(self, node: Node, parameter: Parameter, value: Any) -> list[Issue]:
        """A written `provider:model` that cannot work: malformed (error) or its provider not set up (warning)."""
        if parameter.type != "model" or not isinstance(value, str) or not value.strip() or has_expression(value):
            return []
        if (node.id, parameter.id) in self.wired:
            return []  # a wired Model Selector wins over the written value
        problem = model_problem(value)
        if problem:
            return [_issue("error", "invalid_model", node, parameter.id, problem)]
        provider = value.strip().partition(":")[0].strip()
        if provider not in self.provider_steps:
            try:
                self.provider_steps[provider] = missing_steps(provider)
            except NodeError as error:  # e.g. the credential store cannot be read: say so, do not stop
                self.provider_steps[provider] = [str(error)]
        steps = self.provider_steps[provider]
        if not steps:
            return []
        label = PROVIDERS[provider].label
        return [_issue("warning", "provider_not_configured", node, parameter.id,
                       f"{label} is not configured, so '{value.strip()}' cannot run yet: {'; then '.join(steps)}")]


def model_problem(ref: str) -> str | None:
    """Why `provider:model` is not a usable reference, or None (configuration is a separate warning)."""
    provider, colon, model = ref.strip().partition(":")
    if not colon:
        return f"write provider:model, for example openai:gpt-4o-mini (got {ref.strip()!r})"
    if provider.strip() not in PROVIDERS:
        return f"unknown provider {provider.strip()!r}; use one of: {', '.join(PROVIDERS)}"
    if not model.strip():
        return f"choose a model for provider {provider.strip()!r}"
    return None


def references_to(nodes: Iterable[Node], registry: DefinitionSource, names: set[str]) -> dict[str, list[str]]:
    """Node name -> which of `names` its expressions read with `$('Name')`, for each of `nodes` that reads any."""
    found: dict[str, list[str]] = {}
    for node in nodes:
        definition = registry.definition(node.type)
        if definition is None:
            continue
        read = set().union(*(referenced_nodes(text) & names for _, _, text in _node_expressions(node, definition)))
        if read:
            found[node.name] = sorted(read)
    return found


def _node_expressions(node: Node, definition: NodeDefinition) -> Iterator[tuple[str, str, str]]:
    """(parameter, location, text) of every expression in the node's parameters that take expressions."""
    for key, value in node.data.items():
        parameter = definition.parameter(key)
        if parameter is not None and not parameter.expressions:
            continue
        for where, text in _expression_texts(value, ""):
            yield key, where, text


def _expression_texts(value: Any, where: str) -> Iterator[tuple[str, str]]:
    """(location, text) of every string inside `value` that holds an expression ("row 2 value" style)."""
    if isinstance(value, str):
        if has_expression(value):
            yield where, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _expression_texts(item, place(where, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _expression_texts(item, place(where, index))


# 2. Plumbing -----------------------------------------------------------------------------------

def _at(where: str, message: str) -> str:
    return f"{where}: {message}" if where else message


def _issue(severity: Severity, rule: str, node: Node, parameter: str, message: str) -> Issue:
    return Issue(severity, rule, message, node_id=node.id, node_name=node.name, parameter=parameter)


def _from_graph_issue(issue: GraphIssue, names: dict[str, str]) -> Issue:
    message = issue.message
    if issue.parameter:  # the place is printed apart: drop the normalizer's "node 'X' parameter 'p': "
        message = message.split(f"parameter '{issue.parameter}': ", 1)[-1]
    return Issue("error", issue.rule, message, node_id=issue.node_id,
                 node_name=names.get(issue.node_id or ""), parameter=issue.parameter, edge_id=issue.edge_id)


def _names(raw: Any) -> dict[str, str]:
    """Node id -> name from raw JSON (the parsed graph is None when its shape is wrong)."""
    nodes = raw.get("nodes") if isinstance(raw, dict) else None
    if not isinstance(nodes, list):
        return {}
    return {str(n["id"]): str(n["name"]) for n in nodes if isinstance(n, dict) and "id" in n and "name" in n}
