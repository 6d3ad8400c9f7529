"""Co-editing benchmark in real Chromium: an edit in one browser, how soon and at what cost in the others.

"arrives" is when the delta reached the watching tab's websocket (server and network); the rest of the
latency is that tab rendering it.

One production server (tests/e2e/server.py), a team of 2 and then 10 editors (tests/e2e/team.py), each in
a browser context of its own with the graph open. One of them moves a node (what a drag stop sends) a
number of times; every other tab watches that node's element with a MutationObserver and notes the
moment its transform shows the new position. Latency = that moment minus the moment the author's page
sent the edit (both `performance.timeOrigin + performance.now()`: one machine, one clock). Bytes: the
websocket frames each watching tab received per edit (recorded by a wrapped `WebSocket`, as in
benchmarks/editor.py). `python -m benchmarks.coedit [--quick] [--edits=N]`.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path
from typing import Any

LATENCY_P95_TARGET_MS = 100.0
BYTES_TARGET = 2048
GROUPS = (2, 10)
NODES = 20

ARM = """
([id, x]) => {
  // Resolve with the time the node's element first shows position x (set before the edit is sent).
  const el = document.querySelector(`.react-flow__node[data-id="${id}"]`);
  window.__seen = new Promise((resolve) => {
    const shown = () => el.style.transform.startsWith(`translate(${x}px`);
    const observer = new MutationObserver(() => {
      if (shown()) { observer.disconnect(); resolve(performance.timeOrigin + performance.now()); }
    });
    observer.observe(el, { attributes: true, attributeFilter: ["style"] });
  });
  return window.__frames.length;
}
"""
SEND = """
([id, x]) => {
  const sent = performance.timeOrigin + performance.now();
  window.__nodeflowCanvas.send("onMove", { moves: [{ id, position: { x, y: 0 } }] });
  return sent;
}
"""
RECEIVED = """
(mark) => {
  const frames = window.__frames.slice(mark).filter((f) => f.dir === "in" && f.size >= 8);
  return [frames.reduce((sum, f) => sum + f.size, 0), frames.length ? performance.timeOrigin + frames[0].t : null];
}
"""


def graph(count: int = NODES) -> dict[str, Any]:
    return {"nodes": [{"id": f"c{i}", "type": "conditional", "name": f"C{i}",
                       "position": {"x": (i % 5) * 300.0, "y": (i // 5) * 200.0}} for i in range(count)],
            "edges": []}


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100) of a non-empty list."""
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, math.ceil(p / 100 * len(ordered)) - 1))]


def measure(browser, server, editors: int, edits: int) -> dict[str, Any]:
    """`editors` tabs on one graph; the first makes `edits` moves; latency and bytes seen by the others."""
    from benchmarks.editor import RECORD_FRAMES
    from tests.e2e.team import make_team

    team = make_team(server, ["editor"] * (editors - 1))
    graph_id = team.graph(f"Co-edit {editors}", graph())
    contexts, pages = [], []
    for member in (team.owner, *team.members):
        context = team.context(browser, member)
        page = context.new_page()
        page.add_init_script(RECORD_FRAMES)
        page.goto(f"{server.url}/graph/{graph_id}")
        page.wait_for_function(f"window.__nodeflowCanvas && window.__nodeflowCanvas.nodeCount() === {NODES}",
                               timeout=60_000)
        contexts.append(context)
        pages.append(page)
    author, watchers = pages[0], pages[1:]
    time.sleep(1.0)  # presence of the last arrival settles
    latencies: list[float] = []
    arrivals: list[float] = []  # the delta's arrival at the watching tab's websocket (before React renders)
    received: list[float] = []
    for i in range(edits):
        node_id, x = f"c{i % NODES}", 5000 + i * 10
        marks = [page.evaluate(ARM, [node_id, x]) for page in watchers]
        sent = author.evaluate(SEND, [node_id, x])
        for page in watchers:
            latencies.append(page.evaluate("() => window.__seen") - sent)
        time.sleep(0.05)  # the frames of this edit have arrived everywhere (the DOM already showed it)
        for page, mark in zip(watchers, marks):
            size, arrived = page.evaluate(RECEIVED, mark)
            received.append(size)
            if arrived is not None:
                arrivals.append(arrived - sent)
        time.sleep(0.1)
    for context in contexts:
        context.close()
    return {"editors": editors, "edits": edits, "latencies_ms": latencies, "arrivals_ms": arrivals, "bytes": received}


def report(results: list[dict[str, Any]]) -> list[str]:
    lines = ["Co-editing: an edit (a node moved) in one tab to the DOM of every other tab (production build, Chromium)",
             f"{'editors':>7} {'edits':>6} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'arrives p50/p95':>16} "
             f"{'bytes/edit':>11}  targets met "
             f"(p95 < {LATENCY_P95_TARGET_MS:g} ms, < {BYTES_TARGET:,} B)"]
    for r in results:
        lat, size = r["latencies_ms"], statistics.median(r["bytes"])
        p95 = percentile(lat, 95)
        met = p95 < LATENCY_P95_TARGET_MS and size < BYTES_TARGET
        arrivals = r.get("arrivals_ms") or [float("nan")]
        arrives = f"{percentile(arrivals, 50):.1f}/{percentile(arrivals, 95):.1f}"
        lines.append(f"{r['editors']:>7} {r['edits']:>6} {percentile(lat, 50):>8.1f} {p95:>8.1f} {max(lat):>8.1f} "
                     f"{arrives:>16} {size:>11,.0f}  {'yes' if met else 'NO'}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.coedit")
    parser.add_argument("--quick", action="store_true", help="5 edits per group")
    parser.add_argument("--edits", type=int, default=None)
    args = parser.parse_args(argv or [])
    edits = args.edits or (5 if args.quick else 40)

    root = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root))
    from playwright.sync_api import sync_playwright

    from benchmarks.editor import CHROMIUM, CHROMIUM_ARGS
    from tests.e2e.server import run_server

    with run_server(root / "tests" / ".artifacts") as server, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        results = [measure(browser, server, editors, edits) for editors in GROUPS]
        browser.close()
    print("\n" + "\n".join(report(results)))
    for r in results:
        print(json.dumps({"benchmark": "coedit", **r}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
