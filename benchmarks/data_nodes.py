"""Data nodes benchmark: JSON Transform, Filter and Sort against the same work written in plain Python (the floor).

Each case times the node's `execute` on a prepared list (`node`), the same node inside a run
(`in a run`: Manual Trigger -> the node through `start_run`, events consumed, no persistence), and a
few lines of plain Python that compute the same result (`floor`). Rounds interleave the cases;
medians are reported as a table with ratios to the floor, then one JSON line per case.
`python -m benchmarks.data_nodes [--quick] [--rounds N]`.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import random
import statistics
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from nodeflow_app.contract import FlowContext


@dataclass
class Case:
    key: str
    node_type: str
    what: str
    data: dict[str, Any]
    items: list[dict[str, Any]]
    floor: Callable[[list[dict[str, Any]]], Any]
    check: Callable[[dict[str, Any]], Any]   # the node's outputs -> the value compared with the floor's
    samples: dict[str, list[float]] = field(default_factory=lambda: {"node": [], "in a run": [], "floor": []})


def orders(count: int, seed: int = 7) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    return [{"id": f"A-{i}", "status": rng.choice(("open", "closed", "held")), "total": round(rng.uniform(1, 500), 2),
             "qty": rng.randint(1, 9), "customer": f"c{rng.randint(1, 5000)}"} for i in range(count)]


def cases(quick: bool) -> list[Case]:
    small, large = (200, 2_000) if quick else (10_000, 100_000)
    shaped, big = orders(small), orders(large)
    return [
        Case("jsonata-input", "json-transform",
             f"JSON Transform, one expression over {small:,} items: $.{{id, amount: total * qty}}",
             {"expression": '$.{"id": id, "amount": total * qty}', "apply_to": "input"}, shaped,
             lambda items: [{"id": o["id"], "amount": o["total"] * o["qty"]} for o in items],
             lambda out: out["output"]),
        Case("jsonata-each", "json-transform",
             f"JSON Transform on each of {small:,} items: {{id, amount: total * qty}}",
             {"expression": '{"id": id, "amount": total * qty}', "apply_to": "each_item"}, shaped,
             lambda items: [{"id": o["id"], "amount": o["total"] * o["qty"]} for o in items],
             lambda out: out["output"]),
        Case("filter", "filter",
             f"Filter {large:,} items: status equals open AND total > 250, both sides kept",
             {"conditions": [{"field": "status", "operator": "equals", "value": "open"},
                             {"field": "total", "operator": "gt", "value": "250"}], "combine": "and"}, big,
             _floor_filter, lambda out: (out.get("pass", []), out.get("reject", []))),
        Case("sort-1", "sort", f"Sort {large:,} items by total, descending, numeric",
             {"keys": [{"field": "total", "order": "descending", "compare": "numeric"}]}, big,
             lambda items: sorted(items, key=lambda o: o["total"], reverse=True), lambda out: out["output"]),
        Case("sort-2", "sort", f"Sort {large:,} items by status (natural), then total descending",
             {"keys": [{"field": "status", "order": "ascending", "compare": "natural"},
                       {"field": "total", "order": "descending", "compare": "numeric"}]}, big,
             lambda items: sorted(items, key=lambda o: (o["status"].casefold(), -o["total"])),
             lambda out: out["output"]),
    ]


def _floor_filter(items: list[dict[str, Any]]) -> tuple[list[Any], list[Any]]:
    kept, rest = [], []
    for o in items:
        (kept if o["status"].casefold() == "open" and o["total"] > 250 else rest).append(o)
    return kept, rest


def _graph(case: Case) -> dict[str, Any]:
    return {"id": "bench", "name": "bench", "nodes": [
        {"id": "start", "type": "manual-trigger", "name": "Start", "position": {"x": 0, "y": 0}, "data": {}},
        {"id": "node", "type": case.node_type, "name": "Node", "position": {"x": 200, "y": 0}, "data": case.data}],
        "edges": [{"id": "e", "source": "start", "sourceHandle": "output", "target": "node", "targetHandle": "input",
                   "data": {"channel": "flow"}}]}


async def _time_node(case: Case, registry: Any) -> tuple[float, dict[str, Any]]:
    node = registry.get(case.node_type)
    data = {**node.definition.defaults(), **case.data}
    ctx = FlowContext(node_id="node", node_type=case.node_type, run_id="bench", runtime=None)
    start = time.perf_counter()
    result = await node.executor.execute(data, {"input": case.items}, ctx)
    return time.perf_counter() - start, result.outputs


async def _time_run(case: Case, registry: Any) -> tuple[float, str]:
    from nodeflow_app.runtime.engine import start_run

    graph = _graph(case)
    start = time.perf_counter()
    run = start_run(graph, registry, payload=case.items)
    async for _ in run.events():
        pass
    return time.perf_counter() - start, run.status


def _time_floor(case: Case) -> tuple[float, Any]:
    start = time.perf_counter()
    value = case.floor(case.items)
    return time.perf_counter() - start, value


async def _run(args: argparse.Namespace) -> int:
    from nodes._registry import Registry

    registry = Registry.load(plugin_roots=[])
    rounds = args.rounds or (1 if args.quick else 5)
    all_cases = cases(args.quick)
    for case in all_cases:  # correctness first: the node and the floor must agree
        _, outputs = await _time_node(case, registry)
        if case.check(outputs) != case.floor(case.items):
            print(f"{case.key}: the node's result differs from the floor's", file=sys.stderr)
            return 1
    order = [(case, system) for case in all_cases for system in ("node", "in a run", "floor")]
    for round_index in range(rounds):
        random.shuffle(order)
        for case, system in order:
            gc.collect()
            if system == "node":
                seconds, _ = await _time_node(case, registry)
            elif system == "in a run":
                seconds, status = await _time_run(case, registry)
                if status != "completed":
                    print(f"{case.key}: the run ended {status}", file=sys.stderr)
                    return 1
            else:
                seconds, _ = _time_floor(case)
            case.samples[system].append(seconds * 1000)
        print(f"  round {round_index + 1}/{rounds} done", file=sys.stderr, flush=True)
    _report(all_cases, rounds)
    return 0


def _report(all_cases: list[Case], rounds: int) -> None:
    print(f"\nNodeFlow data nodes against plain Python: {rounds} round(s), interleaved, median ms")
    for case in all_cases:
        print(f"  {case.key}: {case.what}")
    header = ("case", "items", "floor ms", "node ms", "node/floor", "in a run ms", "run/floor")
    rows = []
    for case in all_cases:
        floor, node, run = (statistics.median(case.samples[s]) for s in ("floor", "node", "in a run"))
        rows.append((case.key, f"{len(case.items):,}", f"{floor:.1f}", f"{node:.1f}", f"{node / floor:.1f}x",
                     f"{run:.1f}", f"{run / floor:.1f}x"))
    widths = [max(len(str(r[i])) for r in (header, *rows)) for i in range(len(header))]
    print()
    for index, row in enumerate((header, *rows)):
        print("  ".join(cell.ljust(width) if i == 0 else cell.rjust(width) for i, (cell, width)
                        in enumerate(zip(row, widths))))
        if index == 0:
            print("  ".join("-" * width for width in widths))
    print()
    for case in all_cases:
        print(json.dumps({"bench": "data_nodes", "case": case.key, "items": len(case.items),
                          **{f"{s.replace(' ', '_')}_median_ms": round(statistics.median(v), 3)
                             for s, v in case.samples.items()},
                          "samples_ms": {s: [round(x, 3) for x in v] for s, v in case.samples.items()}}))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.data_nodes", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 round, small lists (a smoke test, not a measurement)")
    parser.add_argument("--rounds", type=int, default=None, help="rounds (default 5, --quick 1)")
    return asyncio.run(_run(parser.parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
