"""The older runtime's validity rules for sub-agent edges (sourceHandle "subagent"), as report errors.

A sub-agent graph was valid only when (seed 004): both ends are agents; the source has
`tools.subagents` on; the target handle is its input (or omitted); no self-reference; no cycle;
a target has at most one parent; a target is not also on an execution edge. The older runtime
refused to run a graph breaking any of them, so the migration refuses to convert it.
"""

from __future__ import annotations

from .source import OldEdge, OldGraph

SUBAGENT_HANDLE = "subagent"


def is_subagent_edge(edge: OldEdge) -> bool:
    return edge.source_handle == SUBAGENT_HANDLE


def subagent_problems(graph: OldGraph) -> list[tuple[str, str]]:
    """(edge id, why) for every broken rule; cycles are reported once, with their path."""
    links = [edge for edge in graph.edges if is_subagent_edge(edge)]
    problems: list[tuple[str, str]] = []
    parents: dict[str, list[str]] = {}
    for edge in links:
        problems += [(edge.id, why) for why in _edge_problems(graph, edge)]
        parents.setdefault(edge.target, []).append(edge.id)
    on_flow: dict[str, list[str]] = {}  # node -> the execution edges at either end (a scan per target was quadratic)
    for edge in graph.edges:
        if not is_subagent_edge(edge):
            for end in dict.fromkeys((edge.source, edge.target)):
                on_flow.setdefault(end, []).append(edge.id)
    for target, edge_ids in parents.items():
        if len(edge_ids) > 1:
            problems.append((edge_ids[1], f"agent {target!r} has more than one sub-agent parent "
                                          f"(edges {', '.join(edge_ids)}); a sub-agent belongs to one parent"))
        flow = on_flow.get(target, [])
        if flow:
            problems.append((edge_ids[0], f"agent {target!r} is a sub-agent and also on execution edges "
                                          f"({', '.join(flow)}); a sub-agent only runs for its parent"))
    cycle = _cycle([e for e in links if e.source != e.target])
    if cycle:
        problems.append((cycle[1], f"sub-agent cycle: {' -> '.join(cycle[0])}"))
    return problems


def _edge_problems(graph: OldGraph, edge: OldEdge) -> list[str]:
    source, target = graph.by_id.get(edge.source), graph.by_id.get(edge.target)
    problems = []
    for end, node, node_id in (("source", source, edge.source), ("target", target, edge.target)):
        if node is None:
            problems.append(f"sub-agent {end} {node_id!r} does not exist")
        elif node.type != "agent":
            problems.append(f"sub-agent {end} {node_id!r} must be an agent node, not {node.type!r}")
    if source is not None and source.type == "agent" and not _subagents_enabled(source.data):
        problems.append(f"agent {source.id!r} has sub-agent links but its Subagents tool (tools.subagents) is off")
    if edge.target_handle not in (None, "input"):
        problems.append(f"sub-agent link {edge.source!r} -> {edge.target!r} must end at the input handle, "
                        f"not {edge.target_handle!r}")
    if edge.source == edge.target:
        problems.append(f"agent {edge.source!r} cannot be a sub-agent of itself")
    return problems


def _subagents_enabled(data: dict) -> bool:
    tools = data.get("tools")
    return isinstance(tools, dict) and bool(tools.get("subagents"))


def _cycle(links: list[OldEdge]) -> tuple[list[str], str] | None:
    """The first cycle among sub-agent links as (node path, the edge closing it), or None.

    A depth-first search with its own stack, not recursion: a file may chain thousands of sub-agents, deeper
    than Python's recursion limit.
    """
    children: dict[str, list[OldEdge]] = {}
    for edge in links:
        children.setdefault(edge.source, []).append(edge)
    state: dict[str, str] = {}
    for start in list(children):
        if start in state:
            continue
        state[start] = "visiting"
        path = [start]  # the nodes being visited, in order; stack[i] walks path[i]'s links
        stack = [iter(children.get(start, []))]
        while stack:
            edge = next(stack[-1], None)
            if edge is None:  # every link of path[-1] done
                state[path.pop()] = "visited"
                stack.pop()
            elif state.get(edge.target) == "visiting":
                return path[path.index(edge.target):] + [edge.target], edge.id
            elif edge.target not in state:
                state[edge.target] = "visiting"
                path.append(edge.target)
                stack.append(iter(children.get(edge.target, [])))
    return None
