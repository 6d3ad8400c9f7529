"""diff_graphs and diff_view: nodes and edges matched by id, parameter-level changes, moves apart."""

from __future__ import annotations

from nodeflow_app.editor.diff import FieldChange, NodeDiff, diff_graphs, diff_view, value_text


def node(node_id: str, name: str, x: float = 0, **data) -> dict:
    return {"id": node_id, "type": "edit-fields", "version": 1, "name": name, "position": {"x": x, "y": 0},
            "data": data, "parentId": None, "settings": {"error_mode": "stop"}}


def edge(edge_id: str, source: str, target: str, handle: str = "output") -> dict:
    return {"id": edge_id, "source": source, "sourceHandle": handle, "target": target, "targetHandle": "input",
            "data": {"channel": "flow", "sourceType": None, "targetType": None}}


def graph(nodes: list[dict], edges: list[dict]) -> dict:
    return {"id": "g", "name": "G", "version": 1, "nodes": nodes, "edges": edges,
            "viewport": {"x": 0, "y": 0, "zoom": 1}}


#   old:  A --e1--> B        C
#   new:  A --e1--> B'  --e2--> D      (B: prompt and name changed, C removed, D added, A moved)
OLD = graph([node("a", "A", prompt="hi"), node("b", "B", prompt="one"), node("c", "C")], [edge("e1", "a", "b")])
NEW = graph([node("a", "A", x=50, prompt="hi"), node("b", "Bee", prompt="two", extra=1), node("d", "D")],
            [edge("e1", "a", "b"), edge("e2", "b", "d")])


def test_added_removed_and_changed_nodes_with_their_parameters():
    diff = diff_graphs(OLD, NEW)
    assert diff.nodes == [
        NodeDiff("b", "Bee", "changed", (FieldChange("name", "B", "Bee"), FieldChange("prompt", "one", "two"),
                                         FieldChange("extra", None, 1))),
        NodeDiff("d", "D", "added"),
        NodeDiff("c", "C", "removed"),
    ]
    assert diff.node_marks() == {"b": "changed", "d": "added", "c": "removed"}


def test_a_move_alone_is_listed_apart_and_not_a_change():
    diff = diff_graphs(OLD, NEW)
    assert diff.moved == ["A"]
    assert "a" not in diff.node_marks()


def test_edges_by_id_added_removed_and_changed_ends():
    assert diff_graphs(OLD, NEW).edges == {"e2": "added"}
    rewired = graph(NEW["nodes"], [edge("e1", "a", "b", handle="error")])
    assert diff_graphs(NEW, rewired).edges == {"e1": "changed", "e2": "removed"}
    typed = graph(NEW["nodes"], [{**edge("e1", "a", "b"), "data": {"channel": "flow", "sourceType": "data"}},
                                 {**edge("e2", "b", "d"), "data": {"channel": "link"}}])
    assert diff_graphs(NEW, typed).edges == {"e2": "changed"}  # socket types are derived; the channel is not


def test_settings_type_version_and_container_are_changes():
    before = node("a", "A")
    after = {**before, "version": 2, "parentId": "loop", "settings": {"error_mode": "continue"}}
    changes = diff_graphs(graph([before], []), graph([after], [])).nodes[0].changes
    assert changes == (FieldChange("version", 1, 2), FieldChange("parentId", None, "loop"),
                       FieldChange("settings.error_mode", "stop", "continue"))


def test_a_missing_parameter_equal_to_its_default_is_no_change():
    filled = graph([node("a", "A", prompt="hi", include_input=True)], [])
    bare = graph([node("a", "A", prompt="hi")], [])
    assert diff_graphs(bare, filled, {"edit-fields": {"include_input": True}}).empty
    assert diff_graphs(bare, filled).nodes[0].changes == (FieldChange("include_input", None, True),)
    assert diff_graphs(bare, graph([node("a", "A", prompt="hi", include_input=False)], []),
                       {"edit-fields": {"include_input": True}}).nodes[0].changes == (
        FieldChange("include_input", True, False),)


def test_the_same_graph_has_no_difference():
    assert diff_graphs(OLD, OLD).empty
    assert not diff_graphs(OLD, NEW).empty


def test_diff_view_adds_the_removed_nodes_and_edges_as_ghosts():
    gone = graph(OLD["nodes"], [edge("e1", "a", "b"), edge("e9", "b", "c")])
    view = diff_view(gone, NEW, diff_graphs(gone, NEW))
    assert [n["id"] for n in view["graph"]["nodes"]] == ["a", "b", "d", "c"]
    assert [e["id"] for e in view["graph"]["edges"]] == ["e1", "e2", "e9"]
    assert view["marks"] == {"nodes": {"b": "changed", "d": "added", "c": "removed"},
                             "edges": {"e2": "added", "e9": "removed"}}
    assert NEW["nodes"][-1]["id"] == "d"  # the inputs are not changed


def test_value_text_is_one_short_line():
    assert value_text("a\nb") == '"a⏎b"'
    assert value_text(None) == "—"
    assert value_text({"k": [1, 2]}) == '{"k": [1, 2]}'
    long = value_text("x" * 500)
    assert len(long) == 80 and long.endswith("…")
