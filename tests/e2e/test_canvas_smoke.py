"""The canvas in Chromium: node bodies from definitions, one event per drag, wires from either end, inline edits.

Protocol: docs/editor.md. `window.__nodeflowCanvas` exposes node/edge counts and the last applied patch seq.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import expect

from nodeflow_app.store.graphs import GraphStore

from .server import Server

ROOT = Path(__file__).resolve().parents[2]
PIPELINE = ROOT / "tests" / "fixtures" / "graphs" / "examples" / "agent_pipeline.json"
CANVAS = "window.__nodeflowCanvas"


@pytest.fixture
def pipeline_url(nodeflow_server: Server, artifacts_dir: Path) -> str:
    """A fresh copy of the agent pipeline example (Chat Start -> Researcher -> Summarize, two tools)."""
    store = GraphStore(f"sqlite:///{artifacts_dir / 'e2e-data' / 'nodeflow.db'}")
    graph_id = store.create("Pipeline", json.loads(PIPELINE.read_text())).id
    store.engine.dispose()
    return f"{nodeflow_server.url}/graph/{graph_id}"


def open_canvas(page, url: str) -> None:
    page.goto(url)
    page.get_by_test_id("node-Researcher").wait_for()
    page.wait_for_function(f"{CANVAS} && {CANVAS}.nodeCount() === 5")


def handle(page, node_id: str, handle_id: str):
    return page.locator(f'.react-flow__handle[data-nodeid="{node_id}"][data-handleid="{handle_id}"]')


def center(locator) -> tuple[float, float]:
    box = locator.bounding_box()
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def wait_seq(page, seq: int) -> None:
    page.wait_for_function(f"{CANVAS}.lastSeq() === {seq}")


def test_nodes_are_drawn_from_definitions(page, pipeline_url: str) -> None:
    open_canvas(page, pipeline_url)

    assert page.evaluate(f"{CANVAS}.edgeCount()") == 4
    ids = page.evaluate("""[...document.querySelectorAll('.react-flow__handle[data-nodeid="researcher"]')]
        .map(h => h.dataset.handleid)""")
    assert set(ids) == {"input", "tools", "output", "tools-out", "instructions", "model"}
    assert "nf-link" in handle(page, "researcher", "tools").get_attribute("class")
    instructions = page.get_by_test_id("inline-Researcher-instructions")
    assert instructions.evaluate("e => e.tagName") == "TEXTAREA"
    assert instructions.input_value().startswith("Answer the question.")
    assert page.get_by_test_id("inline-Researcher-model").inner_text() == "openai-compatible:fake-model"


def test_a_drag_is_one_edit_and_wires_start_from_either_end(page, pipeline_url: str) -> None:
    open_canvas(page, pipeline_url)
    seq = page.evaluate(f"{CANVAS}.lastSeq()")

    x, y = center(page.get_by_test_id("node-Summarize").locator(".nf-header"))
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x + 60, y + 120, steps=15)
    page.mouse.up()
    wait_seq(page, seq + 1)  # fifteen mouse moves, one patch
    page.wait_for_timeout(300)
    assert page.evaluate(f"{CANVAS}.lastSeq()") == seq + 1

    # While a wire is dragged from Researcher.output, data inputs light up and link sockets dim.
    page.mouse.move(*center(handle(page, "researcher", "output")))
    page.mouse.down()
    page.mouse.move(x, y + 200, steps=4)
    assert "nf-compatible" in handle(page, "summarize", "input").get_attribute("class")
    assert "nf-incompatible" in handle(page, "helper", "tools").get_attribute("class")
    page.mouse.up()

    # From the input side: Helper.input dropped on Researcher.output connects output -> input.
    page.mouse.move(*center(handle(page, "helper", "input")))
    page.mouse.down()
    page.mouse.move(*center(handle(page, "researcher", "output")), steps=10)
    page.mouse.up()
    wait_seq(page, seq + 2)
    assert page.evaluate(f"{CANVAS}.edgeCount()") == 5
    expect(page.locator('.react-flow__edge[data-id]')).to_have_count(5)


def test_inline_edit_commits_once_and_undo_restores(page, pipeline_url: str) -> None:
    open_canvas(page, pipeline_url)
    seq = page.evaluate(f"{CANVAS}.lastSeq()")
    field = page.get_by_test_id("inline-Helper-instructions")
    before = field.input_value()

    field.fill("Only facts about the moon.")
    page.wait_for_timeout(200)
    assert page.evaluate(f"{CANVAS}.lastSeq()") == seq  # typing is local
    field.press("Control+Enter")
    wait_seq(page, seq + 1)

    page.locator(".react-flow__pane").click(position={"x": 20, "y": 20})
    page.keyboard.press("Control+z")
    wait_seq(page, seq + 2)
    expect(field).to_have_value(before)  # lastSeq moves one render before the field shows the value
