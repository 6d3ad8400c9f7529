"""Secret parameters (issue 12): sealed at rest, never in what a browser or an export gets, revealed for the executor.

The MCP Server's `headers` is the secret parameter here (values secret, names not).
"""

from __future__ import annotations

import json

import pytest
from cryptography.fernet import Fernet

from nodeflow_app.contract import NodeError
from nodeflow_app.editor import fields
from nodeflow_app.runtime.graph import normalize
from nodeflow_app.secret_values import (
    HIDDEN, hide_graph, is_sealed, reveal, seal, seal_graph, seal_parameter, secrets_to_enter,
)
from nodeflow_app.state.editor_state import hide_ops
from nodeflow_app.store.graphs import GraphStore
from nodes._registry import default_registry

REGISTRY = default_registry()
HEADERS = REGISTRY.definition("mcp-server").parameter("headers")
TOKEN = "tok-9f8e7d6c5b4a"


@pytest.fixture(autouse=True)
def key(tmp_path, monkeypatch):
    monkeypatch.setenv("NODEFLOW_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("NODEFLOW_SECRET_KEY", raising=False)


def mcp_graph(headers) -> dict:
    return {"id": "g", "name": "secrets", "edges": [], "nodes": [
        {"id": "m", "type": "mcp-server", "version": 2, "name": "MCP", "position": {"x": 0, "y": 0},
         "data": {"transport": "streamable-http", "url": "https://mcp.example/mcp", "headers": headers}}]}


def test_a_sealed_value_is_ciphertext_and_reveals_to_the_plain_value():
    sealed = seal(TOKEN)
    assert is_sealed(sealed) and TOKEN not in json.dumps(sealed)
    assert reveal(sealed, "here") == TOKEN
    assert reveal("plain", "here") == "plain"


def test_a_hidden_or_foreign_value_is_a_clear_error_naming_where(monkeypatch):
    with pytest.raises(NodeError, match="^'MCP'.headers X is a secret that was not exported with the graph: enter it"):
        reveal(dict(HIDDEN), "'MCP'.headers X")
    sealed = seal(TOKEN)
    monkeypatch.setenv("NODEFLOW_SECRET_KEY", Fernet.generate_key().decode())
    with pytest.raises(NodeError, match="encrypted with another key than this install's"):
        reveal(sealed, "'MCP'.headers X")


def test_a_credential_token_cannot_be_replayed_as_a_secret_parameter():
    from nodeflow_app.llm.credentials import load_key

    token = load_key(create=True).encrypt(json.dumps({"provider": "openai", "api_key": "sk"}).encode()).decode()
    with pytest.raises(NodeError, match="does not hold a secret parameter value"):
        reveal({"$secret": token}, "'MCP'.headers X")


def test_seal_graph_seals_values_not_names_and_leaves_expressions():
    headers = [{"name": "Authorization", "value": f"Bearer {TOKEN}"}, {"name": "X-Trace", "value": "{{ $json.id }}"},
               {"name": "Empty", "value": ""}]
    stored = seal_graph(mcp_graph(headers), REGISTRY)
    rows = stored["nodes"][0]["data"]["headers"]
    assert [r["name"] for r in rows] == ["Authorization", "X-Trace", "Empty"]
    assert is_sealed(rows[0]["value"]) and rows[1]["value"] == "{{ $json.id }}" and rows[2]["value"] == ""
    assert TOKEN not in json.dumps(stored)
    assert seal_graph(stored, REGISTRY) == stored  # sealing twice changes nothing
    assert normalize(stored, REGISTRY)[1] == []  # a sealed value is a valid parameter value


def test_what_a_browser_or_an_export_gets_holds_neither_the_secret_nor_its_ciphertext():
    stored = seal_graph(mcp_graph({"Authorization": TOKEN}), REGISTRY)
    token = stored["nodes"][0]["data"]["headers"]["Authorization"]["$secret"]
    for shown in (hide_graph(stored, REGISTRY), hide_graph(mcp_graph({"Authorization": TOKEN}), REGISTRY),
                  hide_ops([{"op": "update_node", "node": stored["nodes"][0]}], REGISTRY)):
        text = json.dumps(shown)
        assert TOKEN not in text and token not in text
    assert hide_graph(stored, REGISTRY)["nodes"][0]["data"]["headers"] == {"Authorization": HIDDEN}
    assert secrets_to_enter(stored, REGISTRY) == ["'MCP'.headers Authorization"]


def test_sealed_values_of_a_node_type_no_longer_installed_are_hidden_and_forgotten_too():
    """Hiding used to follow the node's definition; a node whose plugin was removed (or an older version of a type,
    restored) has none, and its sealed values went to the canvas, the room's patches, History and Export."""
    from nodeflow_app.secret_values import forget_sealed

    sealed = seal(TOKEN)
    node = {"id": "c", "type": "acme-crm", "version": 1, "name": "CRM", "position": {"x": 0, "y": 0},
            "data": {"url": "https://crm.example", "api_key": sealed,
                     "headers": [{"name": "Authorization", "value": sealed}]}}
    graph = {"nodes": [node], "edges": []}
    for shown in (hide_graph(graph, REGISTRY), hide_ops([{"op": "update_node", "node": node}], REGISTRY),
                  forget_sealed(graph, REGISTRY)):  # the last: an import or a paste of it
        assert sealed["$secret"] not in json.dumps(shown)
    assert hide_graph(graph, REGISTRY)["nodes"][0]["data"] == {
        "url": "https://crm.example", "api_key": HIDDEN, "headers": [{"name": "Authorization", "value": HIDDEN}]}


def test_the_inspector_shows_set_or_not_set_never_the_value():
    stored = seal_graph(mcp_graph([{"name": "Authorization", "value": TOKEN}, {"name": "X", "value": ""}]), REGISTRY)
    graph, _ = normalize(stored, REGISTRY)
    view = fields.field_view(REGISTRY.definition("mcp-server"), graph.nodes[0], graph)
    assert view.rows["headers"] == [{"name": "Authorization", "value": "", "set": "true"},
                                    {"name": "X", "value": "", "set": ""}]
    text = json.dumps(view.__dict__)
    assert TOKEN not in text and "$secret" not in text and view.texts["headers"] == ""
    assert view.expression["headers"] is False and not fields.accepts_expression(HEADERS)


URL = {"url": "https://mcp.example/mcp"}


def test_editing_a_secret_row_replaces_or_keeps_it():
    current = seal_parameter(HEADERS, [{"name": "Authorization", "value": "old"}], URL)
    assert fields.set_row_field(HEADERS, current, 0, "value", "") == current  # left empty: kept
    replaced = seal_parameter(HEADERS, fields.set_row_field(HEADERS, current, 0, "value", "12345"), URL)
    assert reveal(replaced[0]["value"], "x") == "12345"  # stays text, sealed
    renamed = fields.set_row_field(HEADERS, current, 0, "name", "X-Key")
    assert renamed[0]["value"] == current[0]["value"]


def test_an_imported_graph_with_a_secret_in_clear_is_stored_sealed(tmp_path):
    store = GraphStore(f"sqlite:///{tmp_path / 'graphs.db'}")
    summary, issues = store.import_json(json.dumps(mcp_graph({"Authorization": TOKEN})), REGISTRY)
    assert issues == []
    assert TOKEN not in json.dumps(store.get(summary.id).graph)
    row = store.get(summary.id).graph["nodes"][0]["data"]["headers"]["Authorization"]
    assert reveal(row, "x") == TOKEN


def test_an_imported_graph_brings_no_sealed_secret_along(tmp_path):
    """A sealed value in a file (taken from another workspace's graph) is emptied, to be entered again."""
    store = GraphStore(f"sqlite:///{tmp_path / 'graphs.db'}")
    summary, issues = store.import_json(json.dumps(mcp_graph({"Authorization": seal(TOKEN)})), REGISTRY)
    assert issues == []
    assert store.get(summary.id).graph["nodes"][0]["data"]["headers"]["Authorization"] == HIDDEN


# -- a secret sent to a URL goes only to the origin it was entered for ------------------------------------

def test_a_secret_for_a_url_reveals_only_for_that_origin():
    [row] = seal_parameter(HEADERS, [{"name": "Authorization", "value": TOKEN}], URL)
    assert reveal(row["value"], "h", url="https://mcp.example/other/path?x=1") == TOKEN  # same origin
    assert reveal(row["value"], "h", url="HTTPS://MCP.example:443/mcp") == TOKEN
    for elsewhere, shown in (("https://evil.example/mcp", "https://evil.example:443"),
                             ("http://mcp.example/mcp", "http://mcp.example:80"),  # scheme
                             ("https://mcp.example:8443/mcp", "https://mcp.example:8443"),  # port
                             ("https://mcp.example\\@evil.example/mcp", "https://evil.example:443"),  # httpx's reading
                             ("{{ $json.url }}?key=s3cret", "a URL without an http(s) address"),  # never quoted
                             ("", "a URL without an http(s) address")):
        with pytest.raises(NodeError) as refused:
            reveal(row["value"], "h", url=elsewhere)
        assert str(refused.value) == (f"h was entered for https://mcp.example:443, not for {shown}: a secret goes "
                                      "only to the address it was entered for; enter it again")


def test_a_secret_emptied_when_its_url_moved_is_refused_by_name():
    from nodeflow_app.secret_values import reveal_set

    [row] = seal_parameter(HEADERS, [{"name": "Authorization", "value": TOKEN}], URL)
    assert reveal_set(row["value"], "h", url="https://mcp.example/mcp") == TOKEN
    for emptied in ("", None):
        with pytest.raises(NodeError, match=r"^h is empty \(a secret is cleared when its URL changes to another "
                                            r"address\): enter it again$"):
            reveal_set(emptied, "h", url="https://other.example/mcp")


def test_a_secret_for_a_url_cannot_be_entered_before_the_url_nor_one_sealed_without_it_used():
    with pytest.raises(NodeError, match="Headers: set the URL first"):
        seal_parameter(HEADERS, [{"name": "Authorization", "value": TOKEN}], {"url": ""})
    assert seal_parameter(HEADERS, [{"name": "X", "value": "{{ $json.key }}"}], {}) == [  # a reference: not sealed
        {"name": "X", "value": "{{ $json.key }}"}]
    unbound = seal(TOKEN)  # sealed before secrets were tied to their URL
    for url in ("", "{{ $json.url }}"):  # sealed for no URL: never revealed for a URL without an origin either
        with pytest.raises(NodeError, match="was entered for no URL"):
            reveal(seal(TOKEN, ""), "h", url=url)
    with pytest.raises(NodeError, match="h was entered for no URL, not for https://mcp.example:443"):
        reveal(unbound, "h", url="https://mcp.example/mcp")


def test_a_stored_graph_seals_a_secret_for_its_nodes_url(tmp_path):
    store = GraphStore(f"sqlite:///{tmp_path / 'graphs.db'}")
    summary, _ = store.import_json(json.dumps(mcp_graph({"Authorization": TOKEN})), REGISTRY)
    row = store.get(summary.id).graph["nodes"][0]["data"]["headers"]["Authorization"]
    assert reveal(row, "h", url="https://mcp.example/mcp") == TOKEN
    with pytest.raises(NodeError, match="not for https://elsewhere.example:443"):
        reveal(row, "h", url="https://elsewhere.example/mcp")


def test_changing_the_url_to_another_origin_clears_its_secrets_and_undo_brings_them_back():
    from nodeflow_app.editor.document import GraphDocument

    graph = mcp_graph(seal_parameter(HEADERS, [{"name": "Authorization", "value": TOKEN}], URL))
    doc = GraphDocument.from_graph(normalize(graph, REGISTRY)[0])
    doc.set_parameter(REGISTRY, "m", "url", "https://mcp.example/v2/mcp")  # the same origin: kept
    assert secrets_to_enter(doc.to_graph().model_dump(mode="json"), REGISTRY) == ["'MCP'.headers Authorization"]
    change = doc.set_parameter(REGISTRY, "m", "url", "https://evil.example/mcp")
    assert doc.nodes["m"].data["headers"] == [{"name": "Authorization", "value": ""}]
    assert doc.nodes["m"].data["url"] == "https://evil.example/mcp"
    doc.revert(change)
    [row] = doc.nodes["m"].data["headers"]
    assert reveal(row["value"], "h", url=doc.nodes["m"].data["url"]) == TOKEN
