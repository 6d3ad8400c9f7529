"""GraphDocument: every edit checked against the definitions, answered with a patch, undoable."""

from __future__ import annotations

import json

import pytest

from nodeflow_app.editor.document import EditError, GraphDocument
from nodeflow_app.runtime.graph import Graph, NodeSettings, normalize
from nodes._registry import default_registry

REGISTRY = default_registry()


def empty() -> GraphDocument:
    return GraphDocument.from_graph(Graph(id="g", name="Test"))


def add(doc: GraphDocument, node_type: str, x: float = 0, name: str | None = None) -> str:
    change = doc.add_node(REGISTRY, node_type, {"x": x, "y": 0}, name=name)
    return change.ops[0]["node"]["id"]


def chain() -> tuple[GraphDocument, str, str, str]:
    """Chat Start -> Prompt Template -> Conditional (not wired yet)."""
    doc = empty()
    return doc, add(doc, "chat-start"), add(doc, "prompt-template", 300), add(doc, "conditional", 600)


def test_add_node_fills_defaults_picks_unique_names_and_selects_it() -> None:
    doc = empty()
    first = doc.add_node(REGISTRY, "prompt-template", {"x": 10, "y": 20})
    second = doc.add_node(REGISTRY, "prompt-template", {"x": 10, "y": 20})
    node = first.ops[0]["node"]
    assert node["name"] == "Prompt Template" and node["position"] == {"x": 10.0, "y": 20.0}
    assert node["data"] == REGISTRY.definition("prompt-template").defaults()
    assert second.ops[0]["node"]["name"] == "Prompt Template 2"
    assert first.ops[1] == {"op": "select", "ids": [node["id"]]}
    with pytest.raises(EditError, match="Unknown node type 'nope'"):
        doc.add_node(REGISTRY, "nope", {"x": 0, "y": 0})


def test_connect_makes_a_typed_edge_and_refuses_incompatible_sockets_with_the_reason() -> None:
    doc, start, prompt, cond = chain()
    change = doc.connect(REGISTRY, start, "output", prompt, "input")
    edge = change.ops[0]["edge"]
    assert edge["data"] == {"channel": "flow", "sourceType": "data", "targetType": "data"}
    with pytest.raises(EditError, match="already connected"):
        doc.connect(REGISTRY, start, "output", prompt, "input")
    # text -> string coerces; data -> a tools link socket does not.
    agent = add(doc, "agent", 900)
    with pytest.raises(EditError, match=r"link \(tools\) input"):
        doc.connect(REGISTRY, prompt, "output", agent, "tools")
    with pytest.raises(EditError, match="no output 'nope'"):
        doc.connect(REGISTRY, prompt, "nope", cond, "input")
    with pytest.raises(EditError, match="itself"):
        doc.connect(REGISTRY, prompt, "output", prompt, "input")


def test_typed_sockets_connect_through_the_coercion_table_only() -> None:
    doc, start, prompt, cond = chain()
    doc.connect(REGISTRY, prompt, "prompt", cond, "value")  # text -> string coerces
    with pytest.raises(EditError, match="a data output cannot connect to a string input"):
        doc.connect(REGISTRY, start, "output", cond, "value")


def test_a_flow_cycle_is_refused_and_names_the_loop() -> None:
    doc, start, prompt, cond = chain()
    doc.connect(REGISTRY, start, "output", prompt, "input")
    doc.connect(REGISTRY, prompt, "output", cond, "input")
    with pytest.raises(EditError, match="loop .*Prompt Template -> Conditional -> Prompt Template.*For Each"):
        doc.connect(REGISTRY, cond, "true", prompt, "input")


def test_a_second_wire_into_a_single_parameter_socket_replaces_the_first() -> None:
    doc = empty()
    first, second, agent = add(doc, "model-selector"), add(doc, "model-selector", 0), add(doc, "agent", 400)
    doc.connect(REGISTRY, first, "model", agent, "model")
    change = doc.connect(REGISTRY, second, "model", agent, "model")
    assert [op["op"] for op in change.ops] == ["remove_edge", "add_edge"]
    assert [(e.source, e.target) for e in doc.edges.values()] == [(second, agent)]


def test_undo_and_redo_replay_inverse_ops() -> None:
    doc, start, prompt, _ = chain()
    doc.connect(REGISTRY, start, "output", prompt, "input")
    doc.move([{"id": prompt, "position": {"x": 5, "y": 6}}])
    before = doc.to_json()
    deleted = doc.delete([prompt])
    assert {op["op"] for op in deleted.ops} == {"remove_edge", "remove_node"}
    assert prompt not in doc.nodes and not doc.edges
    ops = doc.undo()
    assert [op["op"] for op in ops] == ["add_node", "add_edge"]
    assert doc.to_json() == before
    doc.redo()
    assert prompt not in doc.nodes
    doc.undo(), doc.undo()
    assert doc.nodes[prompt].position.x == 300
    assert doc.redo()[0]["node"]["position"] == {"x": 5.0, "y": 6.0}


def test_set_parameter_checks_the_value_and_drops_wires_of_outputs_that_go_away() -> None:
    doc = empty()
    switch, target = add(doc, "switch"), add(doc, "edit-fields", 300)
    two = [{"field": "a", "operator": "equals", "value": "1"}, {"field": "b", "operator": "equals", "value": "2"}]
    doc.set_parameter(REGISTRY, switch, "conditions", two)
    doc.connect(REGISTRY, switch, "condition-1", target, "input")
    change = doc.set_parameter(REGISTRY, switch, "conditions", two[:1])
    assert [op["op"] for op in change.ops] == ["remove_edge", "update_node"]
    with pytest.raises(EditError, match="Case sensitive: expected boolean"):
        doc.set_parameter(REGISTRY, switch, "case_sensitive", "yes")
    with pytest.raises(EditError, match="no editable parameter 'nope'"):
        doc.set_parameter(REGISTRY, switch, "nope", 1)


def test_an_invalid_value_kept_on_purpose_is_stored_and_reported_by_validation() -> None:
    doc = empty()
    llm = add(doc, "llm-completion")
    doc.set_parameter(REGISTRY, llm, "temperature", 7.5, keep_invalid=True)
    assert doc.nodes[llm].data["temperature"] == 7.5
    assert [i.message for i in doc.issues(REGISTRY)] == ["node 'LLM Completion' parameter 'temperature': 7.5 is above "
                                                         "the maximum 2"]


def test_error_output_comes_and_goes_with_the_error_mode() -> None:
    doc, start, prompt, cond = chain()
    with pytest.raises(EditError, match="no output 'error'"):
        doc.connect(REGISTRY, prompt, "error", cond, "input")
    doc.set_settings(REGISTRY, prompt, NodeSettings(error_mode="error_output"))
    doc.connect(REGISTRY, prompt, "error", cond, "input")
    change = doc.set_settings(REGISTRY, prompt, NodeSettings(error_mode="stop"))
    assert change.ops[0]["op"] == "remove_edge" and not doc.edges


def test_rename_keeps_names_unique_and_updates_expressions_that_use_the_old_name() -> None:
    doc, start, prompt, cond = chain()
    doc.set_parameter(REGISTRY, prompt, "template", "Hi {{ $('Chat Start').item.json.message }}")
    with pytest.raises(EditError, match="already named 'Conditional'"):
        doc.rename(start, "Conditional")
    with pytest.raises(EditError, match="needs a name"):
        doc.rename(start, "   ")
    doc.rename(start, "Inbox")
    assert doc.nodes[start].name == "Inbox"
    assert doc.nodes[prompt].data["template"] == "Hi {{ $('Inbox').item.json.message }}"
    doc.undo()
    assert doc.nodes[prompt].data["template"] == "Hi {{ $('Chat Start').item.json.message }}"


def test_copy_paste_gets_fresh_ids_and_names_keeps_inner_edges_and_drops_outer_ones() -> None:
    doc, start, prompt, cond = chain()
    doc.connect(REGISTRY, start, "output", prompt, "input")
    doc.connect(REGISTRY, prompt, "output", cond, "input")
    graph = doc.to_json()
    fragment = {"nodeflow": "fragment", "nodes": [n for n in graph["nodes"] if n["id"] in (prompt, cond)],
                "edges": graph["edges"]}
    change = doc.paste(REGISTRY, json.dumps(fragment), {"x": 1000, "y": 500})
    added = [op["node"] for op in change.ops if op["op"] == "add_node"]
    assert [n["name"] for n in added] == ["Prompt Template 2", "Conditional 2"]
    assert added[0]["position"] == {"x": 1000.0, "y": 500.0} and added[1]["position"]["x"] == 1300.0
    edges = [op["edge"] for op in change.ops if op["op"] == "add_edge"]
    assert len(edges) == 1 and (edges[0]["source"], edges[0]["target"]) == (added[0]["id"], added[1]["id"])
    assert change.ops[-1] == {"op": "select", "ids": [n["id"] for n in added]}
    _, issues = normalize(doc.to_json(), REGISTRY)
    assert issues == []
    with pytest.raises(EditError, match="does not hold NodeFlow nodes"):
        doc.paste(REGISTRY, "hello", None)
    with pytest.raises(EditError, match="unknown type"):
        doc.paste(REGISTRY, json.dumps({"nodes": [{"id": "x", "type": "nope", "name": "X"}]}), None)


@pytest.mark.parametrize("text, reason", [
    ("[" * 5000 + "]" * 5000, "nested deeper than 100 levels"),
    ('{"nodes": [1' + "0" * 5000 + "]}", "whole number of over 4,300 digits"),
])
def test_a_hostile_clipboard_is_refused_with_a_reason_not_a_crash(text: str, reason: str) -> None:
    """The clipboard is any text: JSON nested too deep for the parser or with a number too long for Python to read
    raised RecursionError / ValueError out of the paste handler; the toast says why instead, as an import does."""
    with pytest.raises(EditError, match=reason):
        empty().paste(REGISTRY, text, {"x": 0, "y": 0})


@pytest.mark.parametrize("bad_edge", [{"id": "e1", "source": "a"}, "an edge?", {"source": "a", "target": "b"}])
def test_a_malformed_edge_in_the_clipboard_is_dropped_and_its_nodes_pasted(bad_edge) -> None:
    """An edge the schema refuses (hand-edited text) refused the whole paste with a bare "Cannot paste: " and no
    reason: it is dropped, as an edge to a node left behind is, and the nodes come in."""
    graph = chain()[0].to_json()
    fragment = {"nodes": graph["nodes"][:2], "edges": [bad_edge]}
    change = empty().paste(REGISTRY, json.dumps(fragment), {"x": 0, "y": 0})
    assert len([op for op in change.ops if op["op"] == "add_node"]) == 2
    assert not [op for op in change.ops if op["op"] == "add_edge"]
    with pytest.raises(EditError, match="Cannot paste: edges: Input should be a valid list"):
        empty().paste(REGISTRY, json.dumps({"nodes": graph["nodes"][:1], "edges": "nope"}), {"x": 0, "y": 0})


def test_delete_takes_container_children_along() -> None:
    doc = empty()
    loop = add(doc, "for-each")
    child = add(doc, "edit-fields", 50)
    doc.nodes[child] = doc.nodes[child].model_copy(update={"parentId": loop})
    doc.delete([loop])
    assert doc.nodes == {}
    doc.undo()
    assert set(doc.nodes) == {loop, child}


def test_a_new_node_can_take_install_defaults_for_its_known_parameters():
    doc = GraphDocument(id="g", name="g")
    change = doc.add_node(REGISTRY, "agent", {"x": 0, "y": 0},
                          defaults={"model": "openai-compatible:local-model", "not_a_parameter": 1})
    node = doc.nodes[change.ops[0]["node"]["id"]]
    assert node.data["model"] == "openai-compatible:local-model" and "not_a_parameter" not in node.data


def test_a_pasted_sealed_secret_is_emptied_not_taken_over(tmp_path, monkeypatch) -> None:
    """Copies carry secrets emptied; a clipboard holding a sealed value (a ciphertext seen elsewhere) gets no use of
    that secret: it is emptied, to be entered again. A value typed in the inspector is treated the same."""
    from nodeflow_app.secret_values import HIDDEN, forget_sealed_value, seal

    monkeypatch.setenv("NODEFLOW_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("NODEFLOW_SECRET_KEY", raising=False)
    sealed = seal("Bearer sk-team")
    node = {"id": "m", "type": "mcp-server", "version": 2, "name": "MCP", "position": {"x": 0, "y": 0},
            "data": {"transport": "streamable-http", "url": "https://mcp.example/mcp",
                     "headers": [{"name": "Authorization", "value": sealed}]}}
    doc = empty()
    change = doc.paste(REGISTRY, json.dumps({"nodes": [node], "edges": []}), None)
    [added] = [op["node"] for op in change.ops if op["op"] == "add_node"]
    assert added["data"]["headers"] == [{"name": "Authorization", "value": HIDDEN}]
    headers = REGISTRY.definition("mcp-server").parameter("headers")
    assert forget_sealed_value(headers, [{"name": "A", "value": sealed}]) == [{"name": "A", "value": HIDDEN}]
    assert forget_sealed_value(headers, [{"name": "A", "value": "typed"}]) == [{"name": "A", "value": "typed"}]
