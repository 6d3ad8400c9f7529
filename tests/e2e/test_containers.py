"""Containers on the canvas in Chromium: For Each and Loop drawn as a frame around its children; nodes dragged in and out.

The frame is the container node itself grown around its children (assets/flow_canvas.jsx, "Container
frames"); a drop decides the container by where the dragged node's centre lands, and Python stores it
as the node's `parentId` (on_move, docs/editor.md).
"""

from __future__ import annotations

import re
import uuid

import pytest

from nodeflow_app.store.graphs import GraphStore

from .server import Server
from .test_editor import drag, node, open_editor, seq, store, wait_seq  # noqa: F401 - store: fixture

CONTAINERS = {"for-each": {"field": "items"}, "loop": {"times": 2}}


def graph(container: str) -> dict:
    """A container named Each with one child inside, and a node outside it."""
    return {
        "nodes": [
            {"id": "each", "type": container, "name": "Each", "position": {"x": 0, "y": 0},
             "data": CONTAINERS[container]},
            {"id": "inside", "type": "edit-fields", "name": "Inside", "parentId": "each",
             "position": {"x": 24, "y": 220}, "data": {}},
            {"id": "outside", "type": "edit-fields", "name": "Outside", "position": {"x": 700, "y": 60}, "data": {}},
        ],
        "edges": [],
    }


def box(locator) -> dict[str, float]:
    found = locator.bounding_box()
    assert found is not None
    return found


def encloses(outer: dict[str, float], inner: dict[str, float]) -> bool:
    return (outer["x"] <= inner["x"] and outer["y"] <= inner["y"]
            and inner["x"] + inner["width"] <= outer["x"] + outer["width"]
            and inner["y"] + inner["height"] <= outer["y"] + outer["height"])


def stored_parent(page, store: GraphStore, graph_id: str, node_key: str) -> str | None:
    """Save (Ctrl+S) and read the node's parentId back from the database."""
    page.keyboard.press("Control+s")
    page.get_by_test_id("save-status").filter(has_text=re.compile(r"^Saved")).wait_for()
    nodes = {n["id"]: n for n in store.get(graph_id).graph["nodes"]}
    return nodes[node_key].get("parentId")


@pytest.mark.parametrize("container", list(CONTAINERS))
def test_a_container_frames_its_children_and_nodes_drag_in_and_out(page, nodeflow_server: Server,
                                                                   store: GraphStore, container: str) -> None:
    graph_id = store.create(f"Containers {uuid.uuid4().hex[:6]}", graph(container)).id
    open_editor(page, nodeflow_server, graph_id)
    frame = page.get_by_test_id("frame-Each")
    frame.wait_for()
    page.wait_for_function("() => document.querySelector('[data-testid=\"node-Inside\"]')?.getBoundingClientRect().height > 0")
    assert encloses(box(frame), box(node(page, "Inside")))
    assert encloses(box(frame), box(node(page, "Each")))  # the container's own card sits in its frame
    assert not encloses(box(frame), box(node(page, "Outside")))

    # Into the frame: drop Outside's header on the frame's free area right of Inside.
    edits = seq(page)
    header = box(node(page, "Outside").locator(".nf-header"))
    frame_box, inside = box(frame), box(node(page, "Inside"))
    target = (inside["x"] + inside["width"] / 2, frame_box["y"] + frame_box["height"] * 0.45)
    drag(page, (header["x"] + 30, header["y"] + header["height"] / 2), target, steps=20)
    wait_seq(page, edits + 1)
    page.wait_for_function("""() => {
        const frame = document.querySelector('[data-testid="frame-Each"]').getBoundingClientRect();
        const child = document.querySelector('[data-testid="node-Outside"]').getBoundingClientRect();
        return child.left >= frame.left && child.right <= frame.right && child.bottom <= frame.bottom;
    }""")
    assert stored_parent(page, store, graph_id, "outside") == "each"

    # Out of the frame: drag it well to the right of the frame.
    edits = seq(page)
    header, frame_box = box(node(page, "Outside").locator(".nf-header")), box(frame)
    drag(page, (header["x"] + 30, header["y"] + header["height"] / 2),
         (frame_box["x"] + frame_box["width"] + 260, header["y"] + header["height"] / 2), steps=20)
    wait_seq(page, edits + 1)
    assert stored_parent(page, store, graph_id, "outside") is None
    assert not encloses(box(frame), box(node(page, "Outside")))
    assert encloses(box(frame), box(node(page, "Inside")))
