"""Building runs: validate, compile, pick the trigger, start a run or restore one from its record.

The launcher (nodeflow_app/runs/launcher.py) is the one caller in the app; tests and benchmarks of the
kernel call these directly.
"""

from __future__ import annotations

import dataclasses

from typing import Any

from nodeflow_app.runtime.graph import Graph, GraphInvalid, GraphIssue, normalize_or_raise, trigger_issues
from nodeflow_app.runtime.plan import Plan, compile_plan
from nodeflow_app.runtime.records import RunHooks, record_from_row
from nodeflow_app.runtime.run import Run


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


def start_plan(plan: Plan, registry: Any, *, trigger: str | None = None, payload: Any = None,
               hooks: RunHooks | None = None, to_node: str | None = None, **options: Any) -> Run:
    """A (not yet started) Run of a compiled plan from `trigger` (id or name; default: the only one).

    With `to_node`, only that node and what it depends on run (cached outputs reused through `hooks.cache`).
    """
    trigger = pick_trigger(plan.graph, registry, trigger)
    issues = trigger_issues(plan.graph, registry, trigger)
    if issues:
        raise GraphInvalid(issues)
    trigger_id = plan.node_named(trigger).node.id
    only = None
    if to_node is not None:
        target = plan.node_named(to_node)
        if target is None:
            raise GraphInvalid([GraphIssue(rule="missing_node", message=f"no node '{to_node}' to run to")])
        only = plan.ancestors(target.node.id) | {target.node.id}
    return Run(plan, trigger_id, payload, hooks=hooks, only=only, **options)


def start_run(raw: dict[str, Any] | Graph, registry: Any, *, trigger: str | None = None, payload: Any = None,
              hooks: RunHooks | None = None, only: set[str] | None = None, **options: Any) -> Run:
    """Normalize the graph for a run from `trigger` and return the (not yet started) Run."""
    graph = normalize_or_raise(raw, registry)
    run = start_plan(compile_plan(graph, registry), registry, trigger=trigger, payload=payload, hooks=hooks,
                     **options)
    if only is not None:
        return Run(run.plan, run.trigger_id, payload, hooks=hooks, only=only, **options)
    return run


def run_to(raw: dict[str, Any] | Graph, registry: Any, node: str, cache: Any, *, trigger: str | None = None,
           payload: Any = None, hooks: RunHooks | None = None, **options: Any) -> Run:
    """A run of only `node` and what it depends on, reusing cached outputs of nodes that are not stale.

    `hooks` (e.g. persistence) are kept; their cache is `cache`.
    """
    hooks = dataclasses.replace(hooks, cache=cache) if hooks is not None else RunHooks(cache=cache)
    plan = compile_plan(normalize_or_raise(raw, registry), registry)
    return start_plan(plan, registry, trigger=trigger, payload=payload, hooks=hooks, to_node=node, **options)


def restore_run(plan: Plan, record: dict[str, Any], **options: Any) -> Run:
    """A stored run rebuilt from its record (`RunStore.get_run`: trigger_id, payload, context, status and
    node rows); paused nodes wait for `answer`, interrupted ones run again when it goes on."""
    records = {row["node_id"]: record_from_row(row) for row in record["nodes"]}
    run = Run.restore(plan, record["trigger_id"], record["payload"], records, run_id=record["id"],
                      status=record["status"], context=record.get("context") or {}, **options)
    run.started_at, run.finished_at, run.error = record["started_at"], record["finished_at"], record["error"]
    return run
