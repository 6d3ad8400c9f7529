"""GraphDocument.move with `parentId`: nodes go into a container (For Each, Loop) and out again, undoably."""

from __future__ import annotations

import json

import pytest

from nodeflow_app.editor.document import EditError, GraphDocument
from nodes._registry import default_registry

REGISTRY = default_registry()


def doc_with(*types: str) -> tuple[GraphDocument, list[str]]:
    doc = GraphDocument(id="g", name="g")
    ids = [doc.add_node(REGISTRY, t, {"x": 100.0 * i, "y": 0})
           .ops[0]["node"]["id"] for i, t in enumerate(types)]
    return doc, ids


def test_a_move_with_a_parent_puts_the_node_inside_and_undo_takes_it_out():
    doc, (each, edit) = doc_with("for-each", "edit-fields")
    change = doc.move([{"id": edit, "position": {"x": 20, "y": 140}, "parentId": each}], REGISTRY)
    assert [op["op"] for op in change.ops] == ["update_node"]
    assert doc.nodes[edit].parentId == each and (doc.nodes[edit].position.x, doc.nodes[edit].position.y) == (20, 140)
    assert doc.issues(REGISTRY) == []
    doc.undo()
    assert doc.nodes[edit].parentId is None and doc.nodes[edit].position.x == 100


def test_a_move_with_a_null_parent_takes_the_node_out():
    doc, (loop, edit) = doc_with("loop", "edit-fields")
    doc.move([{"id": edit, "position": {"x": 20, "y": 140}, "parentId": loop}], REGISTRY)
    doc.move([{"id": edit, "position": {"x": 500, "y": 300}, "parentId": None}], REGISTRY)
    assert doc.nodes[edit].parentId is None and doc.nodes[edit].position.x == 500


def test_a_plain_move_keeps_the_parent():
    doc, (each, edit) = doc_with("for-each", "edit-fields")
    doc.move([{"id": edit, "position": {"x": 20, "y": 140}, "parentId": each}], REGISTRY)
    doc.move([{"id": edit, "position": {"x": 30, "y": 150}}], REGISTRY)
    assert doc.nodes[edit].parentId == each


def test_only_containers_take_children_and_never_their_own_ancestors():
    doc, (outer, inner, edit) = doc_with("for-each", "loop", "edit-fields")
    with pytest.raises(EditError, match="Cannot put 'Loop' into 'Edit Fields': only a container"):
        doc.move([{"id": inner, "position": {"x": 0, "y": 0}, "parentId": edit}], REGISTRY)
    doc.move([{"id": inner, "position": {"x": 10, "y": 120}, "parentId": outer}], REGISTRY)
    with pytest.raises(EditError, match="Cannot put 'For Each' into 'Loop': 'Loop' is inside 'For Each'"):
        doc.move([{"id": outer, "position": {"x": 0, "y": 0}, "parentId": inner}], REGISTRY)
    with pytest.raises(EditError, match="'Loop' is inside 'Loop'"):
        doc.move([{"id": inner, "position": {"x": 0, "y": 0}, "parentId": inner}], REGISTRY)
    with pytest.raises(EditError, match="No node 'gone'"):
        doc.move([{"id": edit, "position": {"x": 0, "y": 0}, "parentId": "gone"}], REGISTRY)


def test_undoing_the_delete_of_a_container_puts_its_children_back_inside():
    """A container's children go with it; undo (a revert, as EditorState's always is) adds the removed nodes back
    in reverse order, and a child whose container is not back yet would land at the top level."""
    for _ in range(10):  # the removal order once followed a set's, which differs with the ids: a few fresh ones
        doc, (outer, inner, edit, other) = doc_with("for-each", "loop", "edit-fields", "edit-fields")
        doc.move([{"id": inner, "position": {"x": 10, "y": 120}, "parentId": outer},
                  {"id": edit, "position": {"x": 10, "y": 120}, "parentId": inner},
                  {"id": other, "position": {"x": 300, "y": 120}, "parentId": outer}], REGISTRY)
        doc.revert(doc.delete([outer]))
        assert {n: doc.nodes[n].parentId for n in (inner, edit, other)} == {inner: outer, edit: inner, other: outer}


def test_pasting_an_exported_graph_keeps_a_child_in_its_container_listed_before_it():
    """An export keeps the graph's order, where a node dragged into a container added after it comes first."""
    src, (edit, each) = doc_with("edit-fields", "for-each")
    src.move([{"id": edit, "position": {"x": 20, "y": 140}, "parentId": each}], REGISTRY)
    doc = GraphDocument(id="d", name="d")
    doc.paste(REGISTRY, json.dumps(src.to_json()), {"x": 0, "y": 0})
    assert doc.node_by_name("Edit Fields").parentId == doc.node_by_name("For Each").id


def test_a_pasted_container_goes_to_the_pointer_and_its_children_keep_their_place_in_its_frame():
    """A child's position is relative to its container: only top-level nodes are placed at the pointer."""
    src, (each, edit) = doc_with("for-each", "edit-fields")
    src.move([{"id": edit, "position": {"x": 20, "y": 140}, "parentId": each}], REGISTRY)
    fragment = {"nodeflow": "fragment", "nodes": src.to_json()["nodes"], "edges": []}  # what Ctrl+C copies
    doc = GraphDocument(id="d", name="d")
    doc.paste(REGISTRY, json.dumps(fragment), {"x": 1000, "y": 1000})
    pasted, child = doc.node_by_name("For Each"), doc.node_by_name("Edit Fields")
    assert (pasted.position.x, pasted.position.y) == (1000, 1000) and child.parentId == pasted.id
    assert (child.position.x, child.position.y) == (20, 140)
