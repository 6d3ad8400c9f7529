"""The canvas's wire form of a node: default settings and `parentId: None` left out, a node that comes back whole."""

from __future__ import annotations

from nodeflow_app.editor.wire import on_wire
from nodeflow_app.runtime.graph import Node


def test_defaults_stay_home_and_the_graph_model_fills_them_in_again():
    plain = Node(id="n1", type="conditional", name="Check").model_dump(mode="json")
    sent = on_wire(plain)
    assert "settings" not in sent and "parentId" not in sent
    assert Node.model_validate(sent).model_dump(mode="json") == plain  # a pasted node is the same node


def test_what_differs_from_the_defaults_is_sent():
    node = Node(id="n2", type="conditional", name="Check", parentId="loop",
                settings={"error_mode": "error_output", "timeout": 5}).model_dump(mode="json")
    assert on_wire(node) == node
    assert on_wire({**node, "parentId": None}) == {k: v for k, v in node.items() if k != "parentId"}
