"""Kernel benchmark: NodeFlow's scheduler against plain asyncio, a minimal executor and LangGraph on W1-W5.

Every system runs the same graph shapes and calls the same trivial node functions. Rounds interleave
every (workload, system) pair in a shuffled order; the median per pair is reported as a table, then as
one JSON line per pair. `python -m benchmarks.kernel [--quick] [--rounds N]`.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import operator
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Awaitable, Callable, TypedDict

PAYLOAD = 1
SLEEP_S = 0.010
MANY = ("join", "pick")  # kinds whose input is the list of every incoming value

# A node is (id, kind, parent ids); a shape is a list of levels (every parent sits in an earlier level).
Spec = tuple[str, str, list[str]]
Sample = Callable[[], Awaitable[None]]


# -- the node functions every system calls --------------------------------------------------------

async def _same(value: Any) -> Any:
    return value


async def _first(values: list[Any]) -> Any:
    return values[0]


async def _sleep(value: Any) -> Any:
    await asyncio.sleep(SLEEP_S)
    return value


KINDS: dict[str, Callable[[Any], Awaitable[Any]]] = {
    "start": _same, "pass": _same, "join": _same, "pick": _first, "sleep": _sleep}


# -- workloads --------------------------------------------------------------------------------------

@dataclass
class Workload:
    key: str
    what: str
    levels: list[list[Spec]]
    runs: int = 1             # W4: runs per sample, each one from JSON
    nodes: int = field(init=False)

    def __post_init__(self) -> None:
        self.nodes = sum(len(level) for level in self.levels)

    @property
    def specs(self) -> list[Spec]:
        return [spec for level in self.levels for spec in level]


def chain(length: int) -> list[list[Spec]]:
    return [[("n0", "start", [])]] + [[(f"n{i}", "pass", [f"n{i - 1}"])] for i in range(1, length)]


def fan(width: int, kind: str = "pass") -> list[list[Spec]]:
    middle = [(f"f{i}", kind, ["s"]) for i in range(width)]
    return [[("s", "start", [])], middle, [("merge", "join", [spec[0] for spec in middle])]]


def lattice(layers: int, width: int) -> list[list[Spec]]:
    """Layer 0 hangs off the start node; node (l, i) depends on (l-1, i) and (l-1, i+1 mod width)."""
    levels: list[list[Spec]] = [[("s", "start", [])], [(f"l0_{i}", "pass", ["s"]) for i in range(width)]]
    for layer in range(1, layers):
        levels.append([(f"l{layer}_{i}", "pick", [f"l{layer - 1}_{i}", f"l{layer - 1}_{(i + 1) % width}"])
                       for i in range(width)])
    return levels


def workloads(quick: bool) -> list[Workload]:
    n, runs, layers, width, sleepers = (50, 20, 5, 4, 10) if quick else (1000, 2000, 50, 20, 100)
    return [
        Workload("W1", f"a chain of {n} trivial async nodes", chain(n)),
        Workload("W2", f"fan-out 1 -> {n} -> merge", fan(n)),
        Workload("W3", f"a lattice of {layers} layers x {width} nodes, each on two of the previous layer "
                       "(+ a start node)", lattice(layers, width)),
        Workload("W4", f"a 10-node chain run {runs} times, graph validated and compiled from JSON each run",
                 chain(10), runs=runs),
        Workload("W5", f"{sleepers} parallel nodes that each wait {SLEEP_S * 1000:g} ms, then a merge",
                 fan(sleepers, "sleep")),
    ]


def _input(spec: Spec, values: dict[str, Any], payload: Any) -> Any:
    _, kind, parents = spec
    if not parents:
        return payload
    return [values[p] for p in parents] if kind in MANY else values[parents[0]]


# -- systems: each turns a workload into a zero-argument coroutine function timed as one sample ------

class System:
    """A contender: `prepare(workload)` returns the coroutine function timed as one sample."""

    name = ""
    does = ""
    runs_note = ""

    def runs(self, workload: Workload) -> int:
        """Runs timed per W4 sample (a slow system times fewer, scaled to the workload's count)."""
        return workload.runs

    def prepare(self, workload: Workload) -> Sample:
        raise NotImplementedError


class PlainAsyncio(System):
    name = "asyncio"
    does = "direct awaits level by level, asyncio.gather for a level of several nodes; no graph, no events"

    def prepare(self, workload: Workload) -> Sample:
        async def once() -> None:
            values: dict[str, Any] = {}
            for level in workload.levels:
                if len(level) == 1:
                    spec = level[0]
                    values[spec[0]] = await KINDS[spec[1]](_input(spec, values, PAYLOAD))
                else:
                    outs = await asyncio.gather(*(KINDS[s[1]](_input(s, values, PAYLOAD)) for s in level))
                    values.update(zip((s[0] for s in level), outs))

        async def sample() -> None:
            for _ in range(workload.runs):
                await once()
        return sample


@dataclass(slots=True)
class MiniEvent:
    node_id: str
    kind: str  # started | completed
    timestamp: float


class MinimalExecutor(System):
    """The floor for an engine with our features: one task per node, inputs gathered by edge, two events per node."""

    name = "minimal"
    does = ("one asyncio task per node awaiting its parents' tasks, a started and a completed event per node "
            "through a queue the caller drains; W4 parses the shape from JSON each run")

    @staticmethod
    async def run(specs: list[Spec], payload: Any) -> int:
        """Run every node (specs in topological order) once; return the number of events consumed."""
        events: asyncio.Queue = asyncio.Queue()
        tasks: dict[str, asyncio.Task] = {}

        async def node(spec: Spec) -> Any:
            node_id, kind, parents = spec
            if not parents:
                value = payload
            else:
                values = [await tasks[p] for p in parents]
                value = values if kind in MANY else values[0]
            events.put_nowait(MiniEvent(node_id, "started", time.time()))
            out = await KINDS[kind](value)
            events.put_nowait(MiniEvent(node_id, "completed", time.time()))
            return out

        for spec in specs:
            tasks[spec[0]] = asyncio.create_task(node(spec))
        count = 0
        for _ in range(2 * len(tasks)):
            await events.get()
            count += 1
        return count

    def prepare(self, workload: Workload) -> Sample:
        text = json.dumps(workload.specs)

        async def sample() -> None:
            for _ in range(workload.runs):
                specs = json.loads(text) if workload.runs > 1 else workload.specs
                if await self.run(specs, PAYLOAD) != 2 * workload.nodes:
                    raise RuntimeError("minimal executor lost events")
        return sample


class LangGraph(System):
    name = "langgraph"
    does = ("StateGraph over a state dict, async nodes, add_edge per wire and add_edge([...], join) for fan-in; "
            "compiled once (W4: built and compiled from JSON each run); recursion_limit raised")

    def __init__(self, quick: bool):
        from langgraph.graph import StateGraph  # noqa: F401 - fail here when not installed
        self.w4_runs = 5 if quick else 200
        self.runs_note = f"W4: {self.w4_runs} runs timed, scaled to the workload's run count"

    def runs(self, workload: Workload) -> int:
        return min(workload.runs, self.w4_runs)

    @staticmethod
    def build(specs: list[Spec]) -> Any:
        from langgraph.graph import END, START, StateGraph

        feeds_join = {p for _, kind, parents in specs if kind == "join" for p in parents}
        has_children = {p for _, _, parents in specs for p in parents}
        graph = StateGraph(_LangGraphState)
        for node_id, kind, parents in specs:
            graph.add_node(node_id, _langgraph_node(kind, node_id in feeds_join))
            graph.add_edge(START if not parents else parents[0] if len(parents) == 1 else list(parents), node_id)
            if node_id not in has_children:
                graph.add_edge(node_id, END)
        return graph.compile()

    def prepare(self, workload: Workload) -> Sample:
        config = {"recursion_limit": workload.nodes + 10}
        text = json.dumps(workload.specs)
        compiled = self.build(workload.specs) if workload.runs == 1 else None

        async def sample() -> None:
            for _ in range(self.runs(workload)):
                graph = compiled or self.build(json.loads(text))
                await graph.ainvoke({"value": PAYLOAD}, config=config)
        return sample


def _last(_old: Any, new: Any) -> Any:
    return new


class _LangGraphState(TypedDict, total=False):
    value: Annotated[Any, _last]          # several writers per step in a lattice
    items: Annotated[list, operator.add]  # what a join (merge) reads


def _langgraph_node(kind: str, to_join: bool) -> Callable[[dict], Awaitable[dict]]:
    fn = KINDS[kind]

    async def node(state: dict) -> dict:
        value = state["items"] if kind == "join" else [state["value"]] if kind in MANY else state["value"]
        out = await fn(value)
        return {"items": [out]} if to_join else {"value": out}
    return node


class NodeFlow(System):
    """NodeFlow's kernel with events consumed; `store` adds persistence hooks (SQLite, writes batched)."""

    def __init__(self, store: Any = None, quick: bool = False):
        from nodeflow_app.runtime.engine import start_run
        self.start_run = start_run
        self.registry = nodeflow_registry()
        self.store = store
        self.name = "nodeflow+sqlite" if store else "nodeflow"
        self.does = (("events consumed, persistence ON: RunStore hooks writing batched to a SQLite file; "
                      if store else "events consumed (run.events()), persistence off; ")
                     + "W1-W3 compiled once and a new Run per sample, W4 start_run(json.loads(...)) each run")
        self.compile_ms: dict[str, float] = {}
        self.w4_runs = (5 if quick else 500) if store else None
        if store:
            self.runs_note = f"W4: {self.w4_runs} runs timed, scaled to the workload's run count"

    def runs(self, workload: Workload) -> int:
        return min(workload.runs, self.w4_runs or workload.runs)

    def hooks(self) -> Any:
        return self.store.hooks() if self.store else None

    def prepare(self, workload: Workload) -> Sample:
        from nodeflow_app.runtime.run import Run
        raw = nodeflow_graph(workload.specs)
        expected = 2 * workload.nodes
        if workload.runs > 1:
            text = json.dumps(raw)

            async def sample() -> None:
                for _ in range(self.runs(workload)):
                    run = self.start_run(json.loads(text), self.registry, payload=PAYLOAD, hooks=self.hooks())
                    await _drain(run, expected)
            return sample
        started = time.perf_counter()
        template = self.start_run(raw, self.registry, payload=PAYLOAD)
        self.compile_ms[workload.key] = (time.perf_counter() - started) * 1000

        async def sample() -> None:
            await _drain(Run(template.plan, template.trigger_id, PAYLOAD, hooks=self.hooks()), expected)
        return sample


async def _drain(run: Any, expected: int) -> None:
    count = 0
    async for _ in run.events():
        count += 1
    if count != expected or run.status != "completed":
        raise RuntimeError(f"NodeFlow run {run.status} with {count} events, expected {expected}: {run.error}")


def nodeflow_registry() -> Any:
    from nodes._registry import RegisteredNode, Registry
    from nodeflow_app.contract import ExecutionResult, NodeDefinition, Socket

    class Executor:
        def __init__(self, kind: str):
            self.node_type, self._fn, self._start = f"bench-{kind}", KINDS[kind], kind == "start"

        async def execute(self, data: dict, inputs: dict, ctx: Any) -> ExecutionResult:
            value = ctx.payload if self._start else inputs.get("in")
            return ExecutionResult(outputs={"out": await self._fn(value)})

    registry = Registry()
    for kind in KINDS:
        inputs = () if kind == "start" else (Socket(id="in", multiple=kind in MANY),)
        definition = NodeDefinition(id=f"bench-{kind}", name=kind.title(), description="benchmark node",
                                    category="bench", trigger=kind == "start", inputs=inputs,
                                    outputs=(Socket(id="out"),))
        registry.add(RegisteredNode(definition, Executor(kind), Path("<benchmark>") / kind))
    return registry


def nodeflow_graph(specs: list[Spec]) -> dict[str, Any]:
    nodes = [{"id": node_id, "type": f"bench-{kind}", "name": node_id} for node_id, kind, _ in specs]
    edges = [{"id": f"{parent}-{node_id}", "source": parent, "sourceHandle": "out", "target": node_id,
              "targetHandle": "in", "data": {"channel": "flow"}} for node_id, _, parents in specs for parent in parents]
    return {"id": "bench", "name": "benchmark", "nodes": nodes, "edges": edges}


def open_store(folder: str) -> tuple[Any, str]:
    """A RunStore on a SQLite file in `folder`, or None and why not."""
    try:
        from nodeflow_app.store.db import create_all
        from nodeflow_app.store.runs import RunStore
        store = RunStore(f"sqlite:///{folder}/bench.db")
        create_all(store.engine)
        return store, ""
    except Exception as error:  # noqa: BLE001 - any failure is reported as a missing row, not a crash
        return None, f"{type(error).__name__}: {error}"


# -- measuring and reporting ------------------------------------------------------------------------

TARGETS: dict[tuple[str, str], tuple[str, Callable[[dict], float | None], float, bool]] = {
    # (system, workload): (label, measured value, bound, bound is a maximum)
    **{("nodeflow", w): ("<= 3x minimal", lambda r: r.get("vs_minimal"), 3.0, True) for w in ("W1", "W2", "W3")},
    ("nodeflow", "W4"): (">= 1000 runs/s", lambda r: r.get("runs_per_s"), 1000.0, False),
    ("nodeflow", "W5"): ("<= 1.2x asyncio", lambda r: r.get("vs_asyncio"), 1.2, True),
    ("nodeflow+sqlite", "W1"): ("< 10x minimal", lambda r: r.get("vs_minimal"), 10.0, True),
}


async def measure(systems: list[System], loads: list[Workload], rounds: int) -> dict[tuple[str, str], list[float]]:
    for system in systems:  # warm-up on small graphs: imports, first-call paths, caches
        for workload in workloads(quick=True):
            await system.prepare(workload)()
    prepared = {(w.key, s.name): (s.prepare(w), w.runs / s.runs(w)) for w in loads for s in systems}
    samples: dict[tuple[str, str], list[float]] = {key: [] for key in prepared}
    order = list(prepared)
    for round_index in range(rounds):
        random.Random(round_index).shuffle(order)
        for key in order:
            sample, scale = prepared[key]
            gc.collect()
            started = time.perf_counter()
            await sample()
            samples[key].append((time.perf_counter() - started) * 1000 * scale)
        print(f"  round {round_index + 1}/{rounds} done", file=sys.stderr, flush=True)
    return samples


def rows(samples: dict[tuple[str, str], list[float]], loads: list[Workload]) -> list[dict[str, Any]]:
    medians = {key: statistics.median(values) for key, values in samples.items()}
    out = []
    for (wkey, system), values in samples.items():
        workload = next(w for w in loads if w.key == wkey)
        median = medians[(wkey, system)]
        row: dict[str, Any] = {"bench": "kernel", "workload": wkey, "system": system, "median_ms": round(median, 3),
                               "per_node_us": round(median * 1000 / (workload.nodes * workload.runs), 2),
                               "nodes": workload.nodes, "runs": workload.runs, "rounds": len(values),
                               "min_ms": round(min(values), 3), "samples_ms": [round(v, 3) for v in values]}
        if workload.runs > 1:
            row["runs_per_s"] = round(workload.runs / (median / 1000), 1)
        for other in ("minimal", "langgraph", "asyncio"):
            if (wkey, other) in medians:
                row[f"vs_{other}"] = round(median / medians[(wkey, other)], 3)
        target = TARGETS.get((system, wkey))
        if target is not None:
            label, value, bound, is_max = target
            measured = value(row)
            row["target"] = label
            row["target_met"] = None if measured is None else (measured <= bound if is_max else measured >= bound)
        out.append(row)
    order = {name: i for i, name in enumerate(("asyncio", "minimal", "langgraph", "nodeflow", "nodeflow+sqlite"))}
    return sorted(out, key=lambda r: (r["workload"], order.get(r["system"], 99)))


def report(table: list[dict[str, Any]], systems: list[Any], loads: list[Workload], missing: list[str],
           rounds: int) -> None:
    print(f"\nNodeFlow kernel benchmark: {rounds} round(s), interleaved, median per (workload, system); "
          f"{os.cpu_count()} CPUs, Python {platform.python_version()}")
    print("Workloads:")
    for w in loads:
        print(f"  {w.key}: {w.what} ({w.nodes} nodes" + (f" x {w.runs} runs)" if w.runs > 1 else ")"))
    print("Systems:")
    for s in systems:
        print(f"  {s.name}: {s.does}" + (f"; {s.runs_note}" if s.runs_note else ""))
        for key, ms in getattr(s, "compile_ms", {}).items():
            print(f"    {key}: validate + compile once took {ms:.1f} ms (outside the timed samples)")
    for line in missing:
        print(f"  {line}")
    header = ("workload", "system", "median ms", "us/node", "runs/s", "x minimal", "x langgraph", "target", "met")
    lines = [header]
    for r in table:
        met = r.get("target_met")
        lines.append((r["workload"], r["system"], f"{r['median_ms']:.1f}", f"{r['per_node_us']:.1f}",
                      f"{r['runs_per_s']:.0f}" if "runs_per_s" in r else "",
                      _ratio(r.get("vs_minimal")), _ratio(r.get("vs_langgraph")),
                      r.get("target", "") + (f" ({_ratio(r.get('vs_asyncio'))} asyncio)" if r["workload"] == "W5"
                                             and r.get("target") else ""),
                      "" if "target" not in r else "?" if met is None else "yes" if met else "NO"))
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    print()
    for index, line in enumerate(lines):
        print("  ".join(cell.ljust(width) if i < 2 else cell.rjust(width) if i < 7 else cell.ljust(width)
                        for i, (cell, width) in enumerate(zip(line, widths))).rstrip())
        if index == 0:
            print("  ".join("-" * width for width in widths))
    print()
    for r in table:
        print(json.dumps(r))


def _ratio(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}x"


async def _run(args: argparse.Namespace) -> int:
    loads = workloads(args.quick)
    systems: list[System] = [PlainAsyncio(), MinimalExecutor()]
    missing: list[str] = []
    try:
        systems.append(LangGraph(args.quick))
    except ImportError as error:
        missing.append(f"langgraph: not available: {error} (pip install -e '.[bench]')")
    systems.append(NodeFlow())
    with tempfile.TemporaryDirectory(prefix="nodeflow-bench-") as folder:
        store, why = open_store(folder)
        if store is None:
            missing.append(f"nodeflow+sqlite: not available: {why}")
        else:
            systems.append(NodeFlow(store, args.quick))
        try:
            samples = await measure(systems, loads, args.rounds)
        finally:
            if store is not None:
                store.close()
    report(rows(samples, loads), systems, loads, missing, args.rounds)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.kernel", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 round, small graphs (a smoke test, not a measurement)")
    parser.add_argument("--rounds", type=int, default=None, help="rounds (default 5, --quick 1)")
    args = parser.parse_args(argv)
    args.rounds = args.rounds or (1 if args.quick else 5)
    return asyncio.run(_run(args))


if __name__ == "__main__":
    sys.exit(main())
