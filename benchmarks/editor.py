"""Editor benchmark in real Chromium against the production build: open a 1,000-node graph, edit, drag.

One `reflex run --env prod` server (tests/e2e/server.py) and Debian's Chromium. A script installed
before the page loads records every websocket frame (direction, bytes, performance.now()), so the
figures are what crossed the wire, measured in the browser. In the same run, the editor's own
"resend the whole graph" path (`resync`, what a plain `nodes` state var would send per edit) is
measured as the baseline the patches are compared with.
`python -m benchmarks.editor [--quick] [--nodes N] [--rounds N]`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

OPEN_TARGET_S = 2.0
EDIT_BYTES_TARGET = 2048
EDIT_RTT_TARGET_MS = 50.0
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]

# Wraps WebSocket before the app loads: every frame's direction, UTF-8 size and time, in order.
RECORD_FRAMES = """
(() => {
  const frames = [];
  const size = (d) => typeof d === "string" ? new TextEncoder().encode(d).length : (d.byteLength ?? d.size ?? 0);
  const Native = window.WebSocket;
  class Recording extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", (e) => frames.push({dir: "in", size: size(e.data), t: performance.now()}));
    }
    send(data) {
      frames.push({dir: "out", size: size(data), t: performance.now(), text: String(data).slice(0, 200)});
      return super.send(data);
    }
  }
  window.WebSocket = Recording;
  window.__frames = frames;
})();
"""
# engine.io pings/pongs ("2", "3") are a byte or two; events and deltas are far bigger.
MIN_FRAME = 8


def big_graph(count: int) -> dict[str, Any]:
    """Chat Start then a chain of Conditional / Prompt Template / Edit Fields nodes in a grid."""
    kinds = ["conditional", "prompt-template", "edit-fields"]
    nodes = [{"id": "n0", "type": "chat-start", "name": "Chat Start", "position": {"x": 0, "y": 0}}]
    for i in range(1, count):
        kind = kinds[i % 3]
        nodes.append({"id": f"n{i}", "type": kind, "name": f"{kind} {i}",
                      "position": {"x": (i % 40) * 320.0, "y": (i // 40) * 260.0}})
    edges = []
    for i in range(1, count):
        source = nodes[i - 1]
        handle = "true" if source["type"] == "conditional" else "output"
        edges.append({"id": f"e{i}", "source": source["id"], "sourceHandle": handle, "target": f"n{i}",
                      "targetHandle": "input", "data": {"channel": "flow"}})
    return {"name": f"Bench {count}", "nodes": nodes, "edges": edges}


def frames_since(page, start: int) -> list[dict[str, Any]]:
    return [f for f in page.evaluate("(s) => window.__frames.slice(s)", start) if f["size"] >= MIN_FRAME]


def frame_count(page) -> int:
    return page.evaluate("() => window.__frames.length")


class Probe:
    """Marks a point in the frame log, then reads what one interaction sent and got back."""

    def __init__(self, page) -> None:
        self.page = page

    def mark(self) -> int:
        return frame_count(self.page)

    def exchange(self, mark: int, settle_s: float = 0.4) -> dict[str, Any]:
        """The first event sent after `mark` and the first delta that answered it: bytes and round trip.

        The round trip is what the page's JavaScript sees: it includes the server and any time the
        page itself was busy (at 1,000 visible nodes, re-rendering after an input loses focus).
        """
        time.sleep(settle_s)
        frames = frames_since(self.page, mark)
        sent = [f for f in frames if f["dir"] == "out"]
        if not sent:
            raise RuntimeError("no event was sent")
        answer = next((f for f in frames if f["dir"] == "in" and f["t"] >= sent[0]["t"]), None)
        if answer is None:
            raise RuntimeError("no delta came back")
        return {"events": len(sent), "sent": sent[0]["size"], "received": answer["size"],
                "rtt_ms": answer["t"] - sent[0]["t"], "first_event": sent[0].get("text", "")}


def open_graph(page, url: str, count: int) -> float:
    started = time.perf_counter()
    page.goto(url)
    page.wait_for_function(
        "(n) => window.__nodeflowCanvas && window.__nodeflowCanvas.nodeCount() === n"
        " && document.querySelectorAll('.react-flow__node').length === n", arg=count, timeout=60_000)
    return time.perf_counter() - started


def inline_edit(probe: Probe, name: str, parameter: str, value: str) -> dict[str, Any]:
    control = probe.page.get_by_test_id(f"inline-{name}-{parameter}")
    control.scroll_into_view_if_needed()
    control.fill(value)
    time.sleep(0.4)
    mark = probe.mark()
    # The keyboard, not locator.press: the locator's checks query a 1,000-node DOM on the page's
    # main thread right when the answer arrives, which would be timed as the editor's.
    probe.page.keyboard.press("Enter")
    return probe.exchange(mark)


def drag(probe: Probe, name: str) -> dict[str, Any]:
    page = probe.page
    header = page.get_by_test_id(f"node-{name}").locator(".nf-header").first
    box = header.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    header.click()  # select first: the selection event is not part of the drag
    time.sleep(0.4)
    mark = probe.mark()
    page.mouse.move(x, y)
    page.mouse.down()
    for step in range(1, 31):
        page.mouse.move(x + step * 4, y + step * 2)
    moves_sent = len([f for f in frames_since(page, mark) if f["dir"] == "out"])
    page.mouse.up()
    result = probe.exchange(mark)
    result["sent_while_moving"] = moves_sent
    return result


def resync(probe: Probe) -> dict[str, Any]:
    """The baseline: the whole graph over the wire, what a `nodes` state var costs on every edit."""
    mark = probe.mark()
    probe.page.evaluate("() => window.__nodeflowCanvas.resync()")
    return probe.exchange(mark, settle_s=1.0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.editor")
    parser.add_argument("--quick", action="store_true", help="100 nodes, one round")
    parser.add_argument("--nodes", type=int, default=None)
    parser.add_argument("--rounds", type=int, default=None)
    args = parser.parse_args(argv or [])
    count = args.nodes or (100 if args.quick else 1000)
    rounds = args.rounds or (1 if args.quick else 3)

    root = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root))
    from playwright.sync_api import sync_playwright

    from nodeflow_app.store.graphs import GraphStore
    from tests.e2e.server import run_server, signed_in_context

    with run_server(root / "tests" / ".artifacts") as server, sync_playwright() as playwright:
        store = GraphStore(f"sqlite:///{server.data_dir / 'nodeflow.db'}")
        graph_id = store.create(f"Bench {count}", big_graph(count)).id
        url = f"{server.url}/graph/{graph_id}"
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        results: dict[str, list[dict[str, Any]]] = {"open": [], "edit": [], "drag": [], "resync": []}
        for round_ in range(rounds):
            context = signed_in_context(browser, server)
            page = context.new_page()
            page.add_init_script(RECORD_FRAMES)
            probe = Probe(page)
            results["open"].append({"seconds": open_graph(page, url, count)})
            time.sleep(1.0)
            target = f"conditional {3 * (round_ + 1)}"
            results["edit"].append(inline_edit(probe, target, "value", f"v{round_}-{time.time_ns()}"))
            results["drag"].append(drag(probe, f"prompt-template {3 * (round_ + 1) + 1}"))
            results["resync"].append(resync(probe))
            context.close()
        browser.close()
    report(count, results)
    return 0


def report(count: int, results: dict[str, list[dict[str, Any]]]) -> None:
    med = lambda key, field: statistics.median(r[field] for r in results[key])  # noqa: E731
    open_s = med("open", "seconds")
    edit_bytes = med("edit", "sent") + med("edit", "received")
    drag_bytes = med("drag", "sent") + med("drag", "received")
    full_bytes = med("resync", "sent") + med("resync", "received")
    rows = [
        ("open graph (to all nodes in the DOM)", f"{open_s:.2f} s", f"< {OPEN_TARGET_S:g} s", open_s < OPEN_TARGET_S),
        ("parameter edit: bytes (event + delta)", f"{edit_bytes:,.0f} B", f"< {EDIT_BYTES_TARGET:,} B",
         edit_bytes < EDIT_BYTES_TARGET),
        ("parameter edit: round trip", f"{med('edit', 'rtt_ms'):.1f} ms",
         f"< {EDIT_RTT_TARGET_MS:g} ms", med("edit", "rtt_ms") < EDIT_RTT_TARGET_MS),
        ("drag stop: bytes (event + delta)", f"{drag_bytes:,.0f} B", f"< {EDIT_BYTES_TARGET:,} B",
         drag_bytes < EDIT_BYTES_TARGET),
        ("drag stop: round trip", f"{med('drag', 'rtt_ms'):.1f} ms",
         f"< {EDIT_RTT_TARGET_MS:g} ms", med("drag", "rtt_ms") < EDIT_RTT_TARGET_MS),
        ("drag: events sent while moving / in all", f"{med('drag', 'sent_while_moving'):.0f} / {med('drag', 'events'):.0f}",
         "0 / 1", med("drag", "sent_while_moving") == 0 and med("drag", "events") == 1),
        ("baseline: whole graph per edit (resync)", f"{full_bytes:,.0f} B, {med('resync', 'rtt_ms'):.1f} ms",
         "", None),
    ]
    print(f"\nEditor, {count} nodes, {len(results['open'])} round(s), medians (production build, Chromium)")
    print(f"{'measure':46} {'value':>22} {'target':>10}  met")
    for what, value, target, met in rows:
        print(f"{what:46} {value:>22} {target:>10}  {'' if met is None else 'yes' if met else 'NO'}")
    print(f"patch vs whole graph: an edit moves {full_bytes / max(edit_bytes, 1):,.0f}x fewer bytes, a drag stop "
          f"{full_bytes / max(drag_bytes, 1):,.0f}x fewer")
    for key, samples in results.items():
        print(json.dumps({"benchmark": "editor", "measure": key, "nodes": count, "samples": samples}))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
