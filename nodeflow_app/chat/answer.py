"""Which nodes' streamed text is a chat's answer, read from the graph's structure once per run.

A graph has no answer node (Langflow's Chat Output, Dify's Answer): its answer is its final value. Text a
model streams is that answer only when nothing after the model can hold it back or replace it, so tokens
reach the answer live from those nodes only; any other node's text is intermediate and stays in its step.
A node holds the answer back or replaces it when it
- has several flow outputs: it may send its input down one of them only, or wait for a person first
  (Approval, Conditional, Switch, Classifier, Filter; Prompt Template and Code make new text too);
- calls a model (a `model` parameter): its own text is the answer then;
- is a container: its output is what its children made (so children never answer either).
When no answering node streamed, the answer is the run's final value (`MessageBuilder.answer_with`).
"""

from __future__ import annotations

from nodeflow_app.runtime.plan import Plan, PlanNode


def answer_nodes(plan: Plan) -> frozenset[str]:
    """The top-level nodes with no node that holds the answer back (see above) anywhere downstream."""
    held: set[str] = set()  # every node upstream of one that holds the answer back
    stack = [node_id for node_id, pn in plan.nodes.items() if _holds_back(pn)]
    while stack:
        for edge in plan.nodes[stack.pop()].flow_in:
            if edge.source not in held:
                held.add(edge.source)
                stack.append(edge.source)
    return frozenset(node_id for node_id, pn in plan.nodes.items()
                     if pn.node.parentId is None and node_id not in held)


def _holds_back(pn: PlanNode) -> bool:
    definition = pn.definition
    return (definition.container or any(p.type == "model" for p in definition.parameters)
            or sum(1 for socket in definition.outputs if socket.channel == "flow") > 1)
