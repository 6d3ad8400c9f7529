"""The one validation behind `nodeflow validate`, the editor's Validate button and the inspector:
the normalizer's rules plus what a run would trip over (expressions, parameters, providers)."""

from __future__ import annotations

import json

import pytest

from nodeflow_app.cli import main
from nodeflow_app.llm import providers
from nodeflow_app.validation import errors, node_issues, references_to, validate_graph
from nodes._registry import default_registry

KEY_ENVS = ["OPENAI_API_KEY", providers.COMPATIBLE_API_KEY_ENV, providers.COMPATIBLE_BASE_URL_ENV,
            "REFLEX_DB_URL"]


@pytest.fixture(autouse=True)
def no_provider_configured(monkeypatch, tmp_path):
    for name in KEY_ENVS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NODEFLOW_DATA_DIR", str(tmp_path))


def graph(ask: dict, *, extra_nodes=(), extra_edges=()) -> dict:
    """Start --> Ask (an LLM Completion with `ask` as its data), plus more nodes and flow edges."""
    nodes = [{"id": "s", "type": "manual-trigger", "name": "Start", "data": {}},
             {"id": "a", "type": "llm-completion", "name": "Ask",
              "data": {"model": "openai-compatible:local", **ask}}, *extra_nodes]
    edges = [("s", "a"), *extra_edges]
    return {"name": "t", "nodes": nodes, "edges": [
        {"id": f"e{i}", "source": s, "sourceHandle": "output", "target": t, "targetHandle": "input",
         "data": {"channel": "flow"}} for i, (s, t) in enumerate(edges)]}


def lines(raw: dict) -> list[str]:
    return [issue.line() for issue in validate_graph(raw, default_registry())[1]]


def test_out_of_range_and_wrong_type_parameters_are_errors_naming_node_and_parameter():
    found = lines(graph({"temperature": 7.5, "max_tokens": -5, "system_prompt": 3}))
    assert "node a 'Ask', parameter 'temperature': invalid_parameter: 7.5 is above the maximum 2" in found
    assert "node a 'Ask', parameter 'max_tokens': invalid_parameter: -5 is below the minimum 1" in found
    assert "node a 'Ask', parameter 'system_prompt': invalid_parameter: expected text, got int 3" in found


def test_json_kept_as_typed_in_the_editor_is_refused_by_validate_and_by_a_run(tmp_path):
    from nodeflow_app.runs.launcher import RunLauncher
    from nodeflow_app.runtime.graph import GraphInvalid, invalid_json

    raw = graph({})
    raw["nodes"][0]["data"] = {"payload": invalid_json('{"topic": "tea"')}
    problem = ("node s 'Start', parameter 'payload': invalid_parameter: not valid JSON (the text typed in the editor "
               "is kept until it is fixed there)")
    assert problem in lines(raw)
    launcher = RunLauncher(f"sqlite:///{tmp_path / 'runs.db'}", registry=default_registry())
    try:
        with pytest.raises(GraphInvalid) as refused:
            launcher.start(raw, started_by="test")
    finally:
        launcher.close()
    assert "node 'Start' parameter 'payload': not valid JSON" in str(refused.value)


def test_references_to_names_the_nodes_whose_expressions_read_given_nodes():
    #  Start --> Ask          Shape (a row reads Start)          Fetch (only a parameter without expressions does)
    shape = {"id": "f", "type": "edit-fields", "name": "Shape",
             "data": {"fields": [{"name": "who", "value": "{{ $('Start').item.json.user }}"}]}}
    fetch = {"id": "h", "type": "http-request", "name": "Fetch",
             "data": {"url": "https://example.com", "next_url_path": "{{ $('Start').json }}"}}
    raw = graph({"prompt": "{{ $('Start').json }} {{ $(\"Shape\").json }} {{ $('Nope').json }}"},
                extra_nodes=[shape, fetch])
    nodes = validate_graph(raw, default_registry())[0].nodes
    assert references_to(nodes, default_registry(), {"Start", "Shape"}) == {"Ask": ["Shape", "Start"],
                                                                           "Shape": ["Start"]}
    assert references_to(nodes, default_registry(), {"Fetch"}) == {}


def test_expression_naming_no_node_or_a_node_not_upstream():
    #  Start --> Ask          Start --> Other (a sibling, not upstream of Ask)
    other = {"id": "o", "type": "llm-completion", "name": "Other", "data": {"model": "openai-compatible:local"}}
    raw = graph({"prompt": "{{ $('Nope').item.json.x }} and {{ $('Other').item.json }} and {{ $('Start').json }}"},
                extra_nodes=[other], extra_edges=[("s", "o")])
    found = [line for line in lines(raw) if "invalid_reference" in line]
    assert found == [
        "node a 'Ask', parameter 'prompt': invalid_reference: $('Nope') names no node of this graph",
        "node a 'Ask', parameter 'prompt': invalid_reference: $('Other'): 'Other' is not upstream of 'Ask', so its "
        "output is never available here; wire it (directly or through other nodes) into 'Ask'",
    ]


def test_malformed_expression_and_self_reference():
    found = lines(graph({"prompt": "{{ $json.x ", "system_prompt": "{{ $('Ask').json }}"}))
    assert "node a 'Ask', parameter 'prompt': invalid_expression: unterminated '{{' (no closing '}}') at column 1 " \
           "in {{ $json.x " in found
    assert any("parameter 'system_prompt': invalid_reference: $('Ask') is this node itself" in line for line in found)


def test_a_provider_that_is_not_configured_is_a_warning_with_the_step():
    _, issues = validate_graph(graph({"model": "openai:gpt-4o-mini"}), default_registry())
    assert errors(issues) == []
    [warning] = issues
    assert (warning.severity, warning.node_name, warning.parameter) == ("warning", "Ask", "model")
    assert warning.message == ("OpenAI is not configured, so 'openai:gpt-4o-mini' cannot run yet: enter an API "
                               "key under OpenAI on the Settings page (or set OPENAI_API_KEY for the whole install)")


def test_a_configured_provider_and_a_valid_graph_have_no_issue(monkeypatch):
    monkeypatch.setenv(providers.COMPATIBLE_BASE_URL_ENV, "http://127.0.0.1:9/v1")
    assert lines(graph({"prompt": "{{ $('Start').item.json.q }}", "temperature": 0.5})) == []


def test_node_issues_is_the_inspector_view_of_one_node():
    graph_, _ = validate_graph(graph({"temperature": 7.5, "prompt": "{{ $('Nope').json }}"}), default_registry())
    found = {(i.parameter, i.rule) for i in node_issues(graph_, default_registry(), "a")}
    assert found == {("temperature", "invalid_parameter"), ("prompt", "invalid_reference"),
                     ("model", "provider_not_configured")}


@pytest.mark.parametrize(("ask", "expected"), [
    ({"prompt": "{{ $('Nope').item.json.x }}"},
     "node a 'Ask', parameter 'prompt': invalid_reference: $('Nope') names no node of this graph"),
    ({"temperature": 7.5}, "node a 'Ask', parameter 'temperature': invalid_parameter: 7.5 is above the maximum 2"),
])
def test_cli_validate_exits_2_naming_node_and_parameter(capsys, tmp_path, ask, expected):
    path = tmp_path / "graph.json"
    path.write_text(json.dumps(graph(ask)))
    assert main(["validate", str(path)]) == 2
    out, err = capsys.readouterr()
    assert expected in out.splitlines()
    assert "warning: provider_not_configured" in out  # no base URL for openai-compatible here
    assert err == f"invalid: 1 issue in {path}\n"


def test_cli_validate_passes_with_warnings_only(capsys, tmp_path):
    path = tmp_path / "graph.json"
    path.write_text(json.dumps(graph({})))
    assert main(["validate", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == "valid: 2 nodes, 1 edges (1 warning)"
    assert out[0].startswith("node a 'Ask', parameter 'model': warning: provider_not_configured: OpenAI-compatible")


def test_a_run_refuses_an_invalid_value_naming_node_and_parameter(capsys, tmp_path):
    # What Validate reports, a run refuses before any model is called (it never drops the value).
    path = tmp_path / "graph.json"
    path.write_text(json.dumps(graph({"temperature": 7.5})))
    assert main(["run", str(path), "--no-store"]) == 2
    err = capsys.readouterr().err
    assert "node a 'Ask': invalid_parameter: node 'Ask' parameter 'temperature': 7.5 is above the maximum 2" in err


@pytest.mark.parametrize("node_type, repeat, name", [("switch", "conditions", "Route"),
                                                     ("classifier", "categories", "Sort")])
def test_a_list_of_outputs_set_by_an_expression_is_a_warning(node_type, repeat, name):
    """Its ports come from the list as written: the entries an expression gives have none (a run fails there)."""
    node = {"id": "r", "type": node_type, "name": name, "data": {repeat: "{{ $json.routes }}"}}
    found = lines(graph({}, extra_nodes=[node], extra_edges=[("a", "r")]))
    assert (f"node r '{name}', parameter '{repeat}': warning: outputs_from_expression: set by an expression, but "
            f"this node's outputs are made from the list as written, so it has none for the entries the expression "
            f"gives; a run fails when it routes to one. Write the list here (an output per entry)") in found


async def test_validate_and_a_run_name_a_row_of_a_parameter_alike():
    """Validate said "row 2 value" where the run said "fields[1].value": both say what the inspector shows."""
    from nodeflow_app.runtime.engine import start_run

    def edit(value):
        return {"id": "e", "type": "edit-fields", "name": "Edit",
                "data": {"fields": [{"name": "a", "value": "1"}, {"name": "b", "value": value}]}}

    assert ("node e 'Edit', parameter 'fields': invalid_expression: row 2 value: unexpected '+' at column 12 in "
            "{{ $json.x + }}") in lines(graph({}, extra_nodes=[edit("{{ $json.x + }}")], extra_edges=[("a", "e")]))
    raw = graph({})
    raw["nodes"][1] = {**edit("{{ $json.x.y }}"), "id": "a"}
    run = start_run(raw, default_registry(), payload={"x": 1})
    [event async for event in run.events()]
    assert run.error == ("node 'Edit' failed: parameter 'fields': row 2 value: $json.x.y: cannot read field 'y' — "
                         "$json.x is a number (1), not an object at column 12 in {{ $json.x.y }}")


def test_a_bad_row_of_a_list_parameter_is_named_as_the_inspector_shows_it():
    node = {"id": "r", "type": "switch", "name": "Route",
            "data": {"conditions": [{"field": "a", "operator": "equals"}, {"field": "a", "operator": "like"}]}}
    assert ("node r 'Route', parameter 'conditions': invalid_parameter: row 2 operator: 'like' is not one of "
            in "\n".join(lines(graph({}, extra_nodes=[node], extra_edges=[("a", "r")]))))


def test_every_problem_at_once_also_past_an_edge_the_schema_refuses():
    """The Validate button and `nodeflow validate` listed only the malformed edge; the rest of the graph's problems
    came up once it was fixed. Now each is listed once, naming what and where, the rest checked without the edge."""
    # Start --> Ask(temperature 7.5, prompt reads 'Nobody' and 'Broken') -/-> Elsewhere (unknown type)
    # Start --> Broken (refused by the schema: no type; its edge is not at fault)          e1 has no data
    raw = graph({"temperature": 7.5, "prompt": "{{ $('Nobody').item.json }} {{ $('Broken').item.json }}"},
                extra_nodes=[{"id": "x", "type": "from-elsewhere", "name": "Elsewhere", "data": {}},
                             {"id": "b", "name": "Broken"}],
                extra_edges=[("a", "x"), ("s", "b")])
    del raw["edges"][1]["data"]
    found, issues = lines(raw), validate_graph(raw, default_registry())[1]
    assert validate_graph(raw, default_registry())[0] is None  # nothing runs from it
    assert found == [
        "node b 'Broken': schema: node 'Broken': nodes.3.type: Field required",
        "edge e1: schema: edges.1.data: Field required",
        "node a 'Ask', parameter 'temperature': invalid_parameter: 7.5 is above the maximum 2",
        "node x 'Elsewhere': unknown_node_type: node 'Elsewhere' has unknown type 'from-elsewhere'",
        "node a 'Ask', parameter 'prompt': invalid_reference: $('Nobody') names no node of this graph",
        "node a 'Ask', parameter 'model': warning: provider_not_configured: " + found[-1].split(": ", 3)[-1],
    ], found
    assert len(set(found)) == len(found) == len(issues)
