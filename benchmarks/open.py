"""Open times on a fresh browser profile: the graph list and the editor, against the production build.

One `reflex run --env prod` server (tests/e2e/server.py: the same production build `make run`
serves) and Debian's Chromium. Every open uses a new browser context: no HTTP cache, no storage,
like a first visit. The time is the page's own clock (performance.now(), from the start of the
navigation) at the first animation frame where the page is usable:

- graph list: the table with every seeded graph is drawn;
- editor: every node of the graph is in the canvas's DOM (a template graph, and a bigger one).

Issue 11 measured 6-9 s for these in dev mode (unbundled modules). `python -m benchmarks.open
[--quick] [--rounds N]`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TARGET_S = 2.0
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
LIST_GRAPHS = 25  # rows on the graph list
BIG_NODES = 200  # the bigger editor graph
TEMPLATE = "research_summarize"

# What the page has fetched by the time it is usable: requests and bytes over the wire.
RESOURCES = """() => {
  const entries = performance.getEntriesByType("resource").concat(performance.getEntriesByType("navigation"));
  return {requests: entries.length, bytes: entries.reduce((sum, e) => sum + (e.transferSize || 0), 0)};
}"""


@dataclass(frozen=True)
class Page:
    """One page to open: its path and the JS condition that says it is usable."""

    label: str
    path: str
    ready: str


@dataclass(frozen=True)
class Sample:
    seconds: float
    requests: int
    bytes: int


def chain_graph(count: int) -> dict[str, Any]:
    """Chat Start and `count - 1` Prompt Templates in a row of rows, each wired to the one before."""
    nodes = [{"id": "n0", "type": "chat-start", "name": "Chat Start", "position": {"x": 0, "y": 0}, "data": {}}]
    nodes += [{"id": f"n{i}", "type": "prompt-template", "name": f"Step {i}", "data": {},
               "position": {"x": (i % 20) * 300.0, "y": (i // 20) * 220.0}} for i in range(1, count)]
    edges = [{"id": f"e{i}", "source": f"n{i - 1}", "sourceHandle": "output", "target": f"n{i}",
              "targetHandle": "input", "data": {"channel": "flow"}} for i in range(1, count)]
    return {"nodes": nodes, "edges": edges}


def seed(store: Any) -> list[Page]:
    """Graphs for the list and the editor in `store`; the pages to open, with their ready conditions."""
    from nodeflow_app.templates import get_template

    template = get_template(TEMPLATE)
    small = store.create(template.name, template.new_graph())
    big = store.create(f"Chain of {BIG_NODES}", chain_graph(BIG_NODES))
    for index in range(LIST_GRAPHS - 2):
        store.create(f"Graph {index + 1}", get_template("blank").new_graph())
    nodes = "document.querySelectorAll('.react-flow__node').length"
    return [
        Page("graph list", "/",
             f"document.querySelectorAll('[data-testid=graph-table] tbody tr').length === {LIST_GRAPHS}"),
        Page(f"editor, {template.node_count} nodes", f"/graph/{small.id}", f"{nodes} === {template.node_count}"),
        Page(f"editor, {BIG_NODES} nodes", f"/graph/{big.id}", f"{nodes} === {BIG_NODES}"),
    ]


def open_once(browser: Any, server: Any, page: Page) -> Sample:
    """Open `page` in a new context (a fresh profile, signed in) and read the page's clock when it is ready."""
    from tests.e2e.server import signed_in_context

    context = signed_in_context(browser, server)
    try:
        tab = context.new_page()
        tab.goto(server.url + page.path, wait_until="commit")
        seconds = tab.wait_for_function(f"() => ({page.ready}) ? performance.now() / 1000 : false",
                                        timeout=60_000).json_value()
        fetched = tab.evaluate(RESOURCES)
        return Sample(seconds=seconds, requests=fetched["requests"], bytes=fetched["bytes"])
    finally:
        context.close()


def summarize(samples: list[Sample]) -> dict[str, float]:
    times = sorted(s.seconds for s in samples)
    return {"median_s": statistics.median(times), "max_s": times[-1], "min_s": times[0],
            "requests": statistics.median(s.requests for s in samples),
            "kib": statistics.median(s.bytes for s in samples) / 1024}


def report(results: dict[str, list[Sample]]) -> list[str]:
    """The table (one row per page, medians, the target and whether it is met) as lines."""
    rounds = max((len(s) for s in results.values()), default=0)
    lines = [f"Open on a fresh browser profile, production build, Chromium; {rounds} round(s), medians",
             f"{'page':22} {'median':>8} {'min':>7} {'max':>7} {'requests':>9} {'KiB':>8} {'target':>8}  met"]
    for label, samples in results.items():
        s = summarize(samples)
        met = "yes" if s["median_s"] < TARGET_S else "NO"
        lines.append(f"{label:22} {s['median_s']:>7.2f}s {s['min_s']:>6.2f}s {s['max_s']:>6.2f}s "
                     f"{s['requests']:>9.0f} {s['kib']:>8.0f} {f'< {TARGET_S:g} s':>8}  {met}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.open")
    parser.add_argument("--quick", action="store_true", help="2 rounds")
    parser.add_argument("--rounds", type=int, default=5)
    args, _ = parser.parse_known_args(argv)
    rounds = 2 if args.quick else args.rounds

    root = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root))
    from playwright.sync_api import sync_playwright

    from nodeflow_app.store.graphs import GraphStore
    from tests.e2e.server import run_server

    with run_server(root / "tests" / ".artifacts") as server, sync_playwright() as playwright:
        store = GraphStore(f"sqlite:///{server.data_dir / 'nodeflow.db'}")
        pages = seed(store)
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        open_once(browser, server, pages[0])  # the server's first answer warms its own caches
        results: dict[str, list[Sample]] = {page.label: [] for page in pages}
        for _ in range(rounds):
            for page in pages:
                results[page.label].append(open_once(browser, server, page))
        browser.close()
        store.engine.dispose()
    print("\n".join(report(results)))
    for label, samples in results.items():
        print(json.dumps({"benchmark": "open", "page": label, "target_s": TARGET_S, **summarize(samples),
                          "samples_s": [round(s.seconds, 3) for s in samples]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
