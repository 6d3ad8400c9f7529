"""The one entry point every caller uses (CLI, chat, API, tests): validate, compile, start a run."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from nodeflow_app.runtime.graph import Graph, GraphInvalid, GraphIssue, normalize_or_raise, trigger_issues
from nodeflow_app.runtime.plan import compile_plan
from nodeflow_app.runtime.run import Run, RunHooks


def pick_trigger(graph: Graph, registry: Any, trigger: str | None) -> str:
    """The trigger to start from: the one named, else the graph's only trigger."""
    if trigger is not None:
        return trigger
    triggers = [n for n in graph.nodes if (d := registry.definition(n.type)) is not None and d.trigger]
    if len(triggers) == 1:
        return triggers[0].id
    names = ", ".join(n.name for n in triggers) or "none"
    raise GraphInvalid([GraphIssue(rule="missing_trigger", message=(
        f"say which trigger starts the run (triggers here: {names})"))])


def start_run(raw: dict[str, Any] | Graph, registry: Any, *, trigger: str | None = None, payload: Any = None,
              hooks: RunHooks | None = None, only: set[str] | None = None, **options: Any) -> Run:
    """Normalize the graph for a run from `trigger` and return the (not yet started) Run."""
    graph = normalize_or_raise(raw, registry)
    trigger = pick_trigger(graph, registry, trigger)
    issues = trigger_issues(graph, registry, trigger)
    if issues:
        raise GraphInvalid(issues)
    plan = compile_plan(graph, registry)
    return Run(plan, plan.node_named(trigger).node.id, payload, hooks=hooks, only=only, **options)


def run_to(raw: dict[str, Any] | Graph, registry: Any, node: str, cache: Any, *, trigger: str | None = None,
           payload: Any = None, hooks: RunHooks | None = None, **options: Any) -> Run:
    """A run of only `node` and what it depends on, reusing cached outputs of nodes that are not stale.

    `hooks` (e.g. persistence) are kept; their cache is `cache`.
    """
    hooks = replace(hooks, cache=cache) if hooks is not None else RunHooks(cache=cache)
    run = start_run(raw, registry, trigger=trigger, payload=payload, hooks=hooks, **options)
    target = run.plan.node_named(node)
    if target is None:
        raise GraphInvalid([GraphIssue(rule="missing_node", message=f"no node '{node}' to run to")])
    wanted = run.plan.ancestors(target.node.id) | {target.node.id}
    return Run(run.plan, run.trigger_id, payload, hooks=run.hooks, only=wanted, **options)
