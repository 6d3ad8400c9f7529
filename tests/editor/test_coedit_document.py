"""Undo in a shared document: `GraphDocument.revert` takes back one person's change and nothing of others'."""

from __future__ import annotations

from nodeflow_app.editor.document import GraphDocument, joined
from nodeflow_app.editor.presence import colour, initials, person, presence_id
from nodeflow_app.runtime.graph import Graph
from nodes._registry import default_registry

REGISTRY = default_registry()


def shared() -> GraphDocument:
    return GraphDocument.from_graph(Graph(id="g", name="Shared"), history=False)


def add(doc: GraphDocument, node_type: str, x: float = 0):
    change = doc.add_node(REGISTRY, node_type, {"x": x, "y": 0})
    return change.ops[0]["node"]["id"], change


def test_a_shared_document_keeps_no_undo_stack_of_its_own() -> None:
    doc = shared()
    add(doc, "conditional")
    assert doc.undo_stack == [] and doc.redo_stack == []


def test_undoing_my_parameter_edit_keeps_the_other_persons_edit_of_another_parameter() -> None:
    doc = shared()
    node, _ = add(doc, "conditional")
    mine = doc.set_parameter(REGISTRY, node, "field", "status")      # me
    doc.set_parameter(REGISTRY, node, "value", "open")               # someone else, afterwards
    undone = doc.revert(mine)
    assert doc.nodes[node].data["field"] == "" and doc.nodes[node].data["value"] == "open"
    assert [op["op"] for op in undone.ops] == ["update_node"]
    doc.revert(undone)                                               # redo
    assert doc.nodes[node].data["field"] == "status" and doc.nodes[node].data["value"] == "open"


def test_undoing_my_move_keeps_a_rename_made_by_someone_else() -> None:
    doc = shared()
    node, _ = add(doc, "conditional")
    mine = doc.move([{"id": node, "position": {"x": 300, "y": 40}}])
    doc.rename(node, "Check")
    doc.revert(mine)
    assert doc.nodes[node].position.x == 0 and doc.nodes[node].name == "Check"


def test_undoing_an_edit_of_a_node_someone_deleted_changes_nothing() -> None:
    doc = shared()
    node, _ = add(doc, "conditional")
    mine = doc.set_parameter(REGISTRY, node, "field", "status")
    doc.delete([node])
    assert doc.revert(mine).ops == [] and node not in doc.nodes


def test_undoing_my_add_also_removes_the_wires_others_made_to_it() -> None:
    doc = shared()
    start, _ = add(doc, "chat-start")
    prompt, mine = add(doc, "prompt-template", 300)
    doc.connect(REGISTRY, start, "output", prompt, "input")
    undone = doc.revert(mine)
    assert prompt not in doc.nodes and doc.edges == {}
    assert [op["op"] for op in undone.ops] == ["remove_edge", "remove_node"]
    doc.revert(undone)  # redo brings the node back (the other person's wire was theirs to redo)
    assert prompt in doc.nodes


def test_undoing_a_delete_restores_the_node_and_only_wires_whose_ends_exist() -> None:
    doc = shared()
    start, _ = add(doc, "chat-start")
    prompt, _ = add(doc, "prompt-template", 300)
    cond, _ = add(doc, "conditional", 600)
    doc.connect(REGISTRY, start, "output", prompt, "input")
    doc.connect(REGISTRY, prompt, "output", cond, "input")
    mine = doc.delete([prompt])
    doc.delete([cond])  # someone else
    doc.revert(mine)
    assert prompt in doc.nodes and [(e.source, e.target) for e in doc.edges.values()] == [(start, prompt)]


def names(doc: GraphDocument) -> list[str]:
    return sorted(n.name for n in doc.nodes.values())


def test_undoing_my_delete_after_someone_reused_the_name_keeps_names_unique() -> None:
    """Expressions find a node by its name ($('Edit Fields')): my node comes back under a free name, the one who
    took the name meanwhile keeps it."""
    doc = shared()
    node, _ = add(doc, "edit-fields")
    mine = doc.delete([node])
    add(doc, "edit-fields", 300)                       # someone else: the name is free, theirs is "Edit Fields"
    doc.revert(mine)
    assert doc.nodes[node].name == "Edit Fields 2" and names(doc) == ["Edit Fields", "Edit Fields 2"]


def test_undoing_my_delete_under_a_free_name_points_the_nodes_it_brings_back_at_it() -> None:
    """The nodes my delete took with it refer to my node by name: brought back, they must refer to "Edit Fields 2",
    not to the other person's new "Edit Fields"."""
    doc = shared()
    node, _ = add(doc, "edit-fields")
    check, _ = add(doc, "conditional", 300)
    doc.set_parameter(REGISTRY, check, "field", "{{ $('Edit Fields').output.status }}")
    mine = doc.delete([node, check])
    theirs, _ = add(doc, "edit-fields", 600)
    doc.revert(mine)
    assert doc.nodes[node].name == "Edit Fields 2" and doc.nodes[theirs].name == "Edit Fields"
    assert doc.nodes[check].data["field"] == "{{ $('Edit Fields 2').output.status }}"


def test_undoing_my_rename_after_someone_took_the_old_name_keeps_names_unique() -> None:
    """The same for a rename: the old name, now someone else's, is not given back twice."""
    doc = shared()
    node, _ = add(doc, "edit-fields")
    mine = doc.rename(node, "Clean")
    add(doc, "edit-fields", 300)                       # someone else's new node is named "Edit Fields"
    doc.revert(mine)
    assert doc.nodes[node].name == "Edit Fields 2" and names(doc) == ["Edit Fields", "Edit Fields 2"]


def test_undoing_my_rename_under_a_free_name_keeps_the_expressions_it_renamed_on_my_node() -> None:
    """My rename rewrote $('Edit Fields') to $('Clean'); undone while "Edit Fields" is someone else's, they point
    at my node's free name, not at theirs."""
    doc = shared()
    node, _ = add(doc, "edit-fields")
    check, _ = add(doc, "conditional", 300)
    doc.set_parameter(REGISTRY, check, "field", "{{ $('Edit Fields').output.status }}")
    mine = doc.rename(node, "Clean")
    add(doc, "edit-fields", 600)
    doc.revert(mine)
    assert doc.nodes[check].data["field"] == "{{ $('Edit Fields 2').output.status }}"


def test_undoing_my_drag_out_of_a_container_someone_deleted_leaves_the_node_where_it_is() -> None:
    """A node cannot go back into a container that is gone (a parentId naming no node breaks the graph), and the
    position it had there was in that container's frame: it stays where it is."""
    doc = shared()
    loop, _ = add(doc, "for-each")
    node, _ = add(doc, "edit-fields", 300)
    doc.move([{"id": node, "position": {"x": 10, "y": 120}, "parentId": loop}], REGISTRY)
    mine = doc.move([{"id": node, "position": {"x": 600, "y": 0}, "parentId": None}], REGISTRY)
    doc.delete([loop])                                 # someone else deletes the now empty For Each
    doc.revert(mine)
    moved = doc.nodes[node]
    assert moved.parentId is None and (moved.position.x, moved.position.y) == (600, 0)
    assert doc.issues(REGISTRY) == []


def test_undoing_my_retry_setting_keeps_the_timeout_someone_else_set() -> None:
    """Settings are edited one at a time like parameters, and merge back the same way: key by key."""
    from nodeflow_app.editor.fields import parse_setting

    doc = shared()
    node, _ = add(doc, "edit-fields")
    mine = doc.set_settings(REGISTRY, node, parse_setting(doc.nodes[node].settings, "max_attempts", "3"))
    doc.set_settings(REGISTRY, node, parse_setting(doc.nodes[node].settings, "initial_interval", "5"))  # others
    doc.set_settings(REGISTRY, node, parse_setting(doc.nodes[node].settings, "timeout", "10"))
    doc.revert(mine)
    settings = doc.nodes[node].settings
    assert (settings.retry.max_attempts, settings.retry.initial_interval, settings.timeout) == (1, 5, 10)


def test_presence_gives_initials_a_stable_colour_and_hides_the_client_token() -> None:
    assert initials("Ada Lovelace") == "AL" and initials("bob@example.org") == "BO" and initials("") == "?"
    assert colour("user-1") == colour("user-1")
    entry = person(presence_id("secret-token"), "user-1", "Ada Lovelace", ["n1"])
    assert entry["initials"] == "AL" and entry["selected"] == ["n1"] and "secret-token" not in str(entry)


def test_a_burst_of_typing_in_one_field_is_one_undo_step() -> None:
    doc = shared()
    node, _ = add(doc, "conditional")
    first = doc.set_parameter(REGISTRY, node, "value", "op")             # saved while typing
    burst = joined(first, doc.set_parameter(REGISTRY, node, "value", "open"))
    assert burst is not None
    undone = doc.revert(burst)
    assert doc.nodes[node].data["value"] == ""
    doc.revert(undone)                                                   # redo
    assert doc.nodes[node].data["value"] == "open"


def test_typing_is_not_joined_across_someone_elses_edit_of_the_node() -> None:
    """Undoing both at once would take the other person's `field` back too."""
    doc = shared()
    node, _ = add(doc, "conditional")
    first = doc.set_parameter(REGISTRY, node, "value", "op")
    doc.set_parameter(REGISTRY, node, "field", "status")                # someone else, in between
    assert joined(first, doc.set_parameter(REGISTRY, node, "value", "open")) is None
    other, _ = add(doc, "conditional", 300)
    assert joined(first, doc.set_parameter(REGISTRY, other, "value", "x")) is None  # another node
