"""Toy node types for kernel tests: names that mean nothing to the runtime, behaviour set per test."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from nodes._registry import RegisteredNode, Registry
from nodeflow_app.contract import ExecutionResult, NodeDefinition, NodeError, Parameter, Socket, WaitForInput

DATA_IN = Socket(id="in", label="In")
DATA_OUT = Socket(id="out", label="Out")


class Toy:
    """An executor whose behaviour is a plain async function `behave(data, inputs, ctx) -> outputs`."""

    def __init__(self, node_type: str, behave=None, materialize=None):
        self.node_type = node_type
        self.calls: list[dict[str, Any]] = []
        self._behave = behave
        if materialize is not None:
            self.materialize = materialize

    async def execute(self, data, inputs, ctx):
        self.calls.append({"data": data, "inputs": inputs, "resume": ctx.resume_payload})
        outcome = await self._behave(data, inputs, ctx)
        return outcome if isinstance(outcome, ExecutionResult) else ExecutionResult(outputs=outcome)


class LinkOnly:
    def __init__(self, node_type: str, materialize):
        self.node_type = node_type
        self.materialize = materialize


async def _pass(data, inputs, ctx):
    return {"out": inputs.get("in")}


async def _start(data, inputs, ctx):
    return {"out": ctx.payload}


async def _gate(data, inputs, ctx):
    """Puts its input on `yes` when data['open'] is truthy, else on `no`."""
    return {"yes" if data.get("open") else "no": inputs.get("in")}


async def _collect(data, inputs, ctx):
    return {"out": inputs.get("many", [])}


async def _slow(data, inputs, ctx):
    await asyncio.sleep(data.get("delay", 0.05))
    return {"out": inputs.get("in")}


async def _boom(data, inputs, ctx):
    raise NodeError(f"boom: {data.get('label') or 'no label'}")


async def _ask(data, inputs, ctx):
    if ctx.resume_payload is None:
        return ExecutionResult(wait=WaitForInput(prompt="yes or no?", options=["yes", "no"]))
    return {ctx.resume_payload: inputs.get("in")}


async def _loop(data, inputs, ctx):
    children = ctx.runtime.children(ctx.node_id)
    results = []
    for item in inputs.get("in") or []:
        outputs = await ctx.runtime.run_subgraph(children, item)
        results.append([o for o in outputs.values()])
    return {"out": results}


def definitions() -> dict[str, tuple[NodeDefinition, Any]]:
    label = Parameter(id="label", label="Label", default="")
    return {
        "start": (NodeDefinition(id="toy-start", name="Start", description="d", category="t", trigger=True,
                                 outputs=(DATA_OUT,)), Toy("toy-start", _start)),
        "pass": (NodeDefinition(id="toy-pass", name="Pass", description="d", category="t",
                                inputs=(DATA_IN,), outputs=(DATA_OUT,),
                                parameters=(label, Parameter(id="count", label="Count", type="int", mode="hybrid", default=1))),
                 Toy("toy-pass", _pass)),
        "gate": (NodeDefinition(id="toy-gate", name="Gate", description="d", category="t", inputs=(DATA_IN,),
                                parameters=(Parameter(id="open", label="Open", type="boolean", default=True),),
                                outputs=(Socket(id="yes"), Socket(id="no"))), Toy("toy-gate", _gate)),
        "collect": (NodeDefinition(id="toy-collect", name="Collect", description="d", category="t",
                                   inputs=(Socket(id="many", multiple=True),), outputs=(DATA_OUT,)),
                    Toy("toy-collect", _collect)),
        "slow": (NodeDefinition(id="toy-slow", name="Slow", description="d", category="t", inputs=(DATA_IN,),
                                outputs=(DATA_OUT,), parameters=(Parameter(id="delay", label="Delay", type="float", default=0.05),)),
                 Toy("toy-slow", _slow)),
        "boom": (NodeDefinition(id="toy-boom", name="Boom", description="d", category="t", inputs=(DATA_IN,),
                                outputs=(DATA_OUT,), parameters=(label,)), Toy("toy-boom", _boom)),
        "ask": (NodeDefinition(id="toy-ask", name="Ask", description="d", category="t", inputs=(DATA_IN,),
                               outputs=(Socket(id="yes"), Socket(id="no"))), Toy("toy-ask", _ask)),
        "loop": (NodeDefinition(id="toy-loop", name="Loop", description="d", category="t", container=True,
                                inputs=(DATA_IN,), outputs=(DATA_OUT, Socket(id="each"))), Toy("toy-loop", _loop)),
    }


def registry(*extra: tuple[NodeDefinition, Any]) -> Registry:
    reg = Registry()
    for definition, executor in [*definitions().values(), *extra]:
        reg.add(RegisteredNode(definition, executor, Path("<test>") / definition.id))
    return reg


def graph(nodes: list[tuple[str, str] | tuple[str, str, dict]], edges: list[str], **node_extra: dict) -> dict:
    """nodes: (id, kind[, data]); edges: "a.out -> b.in" (flow) or "a.x => b.y" (link)."""
    built = []
    for spec in nodes:
        node_id, kind, data = (*spec, {})[:3]
        built.append({"id": node_id, "type": f"toy-{kind}", "name": node_id.upper(), "data": data,
                      **node_extra.get(node_id, {})})
    wires = []
    for index, text in enumerate(edges):
        channel = "link" if "=>" in text else "flow"
        left, right = (part.strip() for part in text.replace("=>", "->").split("->"))
        (source, source_handle), (target, target_handle) = left.split("."), right.split(".")
        wires.append({"id": f"e{index}", "source": source, "sourceHandle": source_handle, "target": target,
                      "targetHandle": target_handle, "data": {"channel": channel}})
    return {"id": "g", "name": "toy graph", "nodes": built, "edges": wires}
