"""Activating a graph (SPEC 6): its latest stored version becomes live for webhooks and schedules.

Activation checks what the triggers need (the graph compiles, every schedule parses, no webhook answers with
a header or status its answer may not carry) and refuses with a message otherwise; unsaved edits never go live
(the editor saves before it activates). Switching off removes the webhook addresses and stops the schedules (the
scheduler reads active graphs on every tick).
"""

from __future__ import annotations

from nodeflow_app.runs.launcher import RunLauncher
from nodeflow_app.runtime.graph import GraphInvalid
from nodeflow_app.store.db import process_wide
from nodeflow_app.store.graphs import GraphStore
from nodeflow_app.store.triggers import AddressTaken, TriggerStore
from nodeflow_app.triggers import schedules, webhook_answer, webhooks


class ActivationRefused(ValueError):
    """The graph cannot go live; the message says why."""


class Activation:
    def __init__(self, launcher: RunLauncher, triggers: TriggerStore | None = None,
                 graphs: GraphStore | None = None):
        self.launcher = launcher
        self.triggers = triggers or TriggerStore(launcher.engine)
        self.graphs = graphs or GraphStore(launcher.engine)

    def activate(self, graph_id: str) -> int:
        """Make the latest stored version live; returns its number."""
        stored = self.graphs.get(graph_id)
        if stored is None:
            raise ActivationRefused(f"there is no graph '{graph_id}'")
        try:
            plan = self.launcher.plan(stored.graph)
        except GraphInvalid as error:
            raise ActivationRefused("; ".join(issue.message for issue in error.issues)) from None
        hooks = self.launcher.triggers(plan, webhooks.STARTED_BY)
        timed = self.launcher.triggers(plan, schedules.STARTED_BY)
        if not hooks and not timed:
            raise ActivationRefused("add a Webhook or Schedule trigger: only they run while a graph is active")
        for node_id in timed:
            try:
                schedules.parse(plan.nodes[node_id].node.data)
            except ValueError as error:
                raise ActivationRefused(f"{plan.nodes[node_id].node.name}: {error}") from None
        for node_id in hooks:
            planned = plan.nodes[node_id]  # a setting hidden by the node's other settings does not apply
            problems = [problem for parameter, problem in webhook_answer.settings(planned.node.data).problems
                        if parameter not in planned.hidden]
            if problems:
                raise ActivationRefused(f"{planned.node.name}: " + "; ".join(problems))
        try:
            self.triggers.activate(graph_id, stored.version, {webhooks.hook_id(graph_id, n): n for n in hooks})
        except AddressTaken as error:
            raise ActivationRefused(str(error)) from None
        return stored.version

    def deactivate(self, graph_id: str) -> None:
        self.triggers.deactivate(graph_id)


def _process_activation() -> Activation:
    from nodeflow_app.runs.launcher import run_launcher

    return Activation(run_launcher())


# The process's Activation (on the process's launcher), made on first use.
activation = process_wide(_process_activation)
