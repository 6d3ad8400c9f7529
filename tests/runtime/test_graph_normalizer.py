"""The graph normalizer, rule by rule: JSON fixtures in tests/fixtures/graphs over the toy node
types in tests/fixtures/nodes (names that mean nothing to the runtime, which must stay generic)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple

import pytest

from nodeflow_app.runtime.graph import Graph, GraphInvalid, normalize, normalize_or_raise
from nodes._registry import Registry

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
GRAPHS = FIXTURES / "graphs"


@pytest.fixture(scope="module")
def registry() -> Registry:
    return Registry.load(roots=[FIXTURES / "nodes"], plugin_roots=[])


def load(name: str) -> dict:
    return json.loads((GRAPHS / name).read_text())


class Want(NamedTuple):
    """One expected issue; `named` must appear in its message (how a person finds the culprit)."""

    rule: str
    node_id: str | None = None
    edge_id: str | None = None
    named: str | None = None


# fixture -> (trigger asked for, the issues it must yield and no other)
INVALID: dict[str, tuple[str | None, list[Want]]] = {
    "invalid_schema_missing_field.json": (None, [Want("schema", node_id="pass", named="'Pass'")]),
    "invalid_schema_wrong_type.json": (None, [Want("schema", node_id="pass", named="'Pass'")]),
    "invalid_schema_edge_channel.json": (None, [Want("schema", edge_id="e-start", named="channel")]),
    "invalid_unknown_node_type.json": (None, [Want("unknown_node_type", "ghost", named="'Ghost'")]),
    "invalid_unknown_node_version.json": (None, [Want("unknown_node_version", "renamed", named="'Renamed'")]),
    "invalid_unknown_parameter.json": (None, [Want("unknown_parameter", "pass", named="'Pass'")]),
    "invalid_parameter_type.json": (None, [Want("invalid_parameter", "pass", named="'Pass'")]),
    "invalid_parameter_select.json": (None, [Want("invalid_parameter", "pass", named="'Pass'")]),
    "invalid_parameter_range.json": (None, [Want("invalid_parameter", "pass", named="'Pass'")]),
    "invalid_parameter_list_field.json": (None, [Want("invalid_parameter", "branch", named="'Branch'")]),
    # Branch(cases=5) --case-0--> After: the bad list is reported, and expands to no case ports.
    "invalid_parameter_not_a_list.json": (None, [
        Want("invalid_parameter", "branch", named="'Branch'"),
        Want("edge_missing_handle", "branch", "e2", named="'Branch'"),
    ]),
    "invalid_duplicate_node_id.json": (None, [Want("duplicate_node_id", "pass", named="'Pass Again'")]),
    "invalid_duplicate_node_name.json": (None, [Want("duplicate_node_name", "pass2", named="'Pass'")]),
    "invalid_duplicate_edge_id.json": (None, [Want("duplicate_edge_id", edge_id="e-start", named="'Pass 2'")]),
    "invalid_edge_missing_node.json": (None, [Want("edge_missing_node", edge_id="e-lost", named="'Start'")]),
    "invalid_edge_missing_handle.json": (None, [Want("edge_missing_handle", "pass", "e-start", named="'Pass'")]),
    # Branch(cases=[a, b]) --case-2--> After: only case-0 and case-1 exist.
    "invalid_edge_missing_handle_repeat.json": (None, [
        Want("edge_missing_handle", "branch", "e-case", named="'Branch'")]),
    "invalid_edge_missing_handle_trigger.json": (None, [
        Want("edge_missing_handle", "start2", "e1", named="'Second Start'")]),
    # Provider.thing ==(link socket, edge says flow)==> Consumer.things
    "invalid_edge_channel_mismatch.json": (None, [
        Want("edge_channel_mismatch", edge_id="e-link", named="'Provider'.thing")]),
    "invalid_edge_type_mismatch.json": (None, [Want("edge_type_mismatch", edge_id="e-start", named="'Pass'")]),
    # Json.value (json) ---> Flag.enabled (boolean): not in the coercion table.
    "invalid_incompatible_types.json": (None, [
        Want("incompatible_types", edge_id="e-json", named="'Flag'.enabled")]),
    # Provider 1 ==> Consumer.one <== Provider 2   (one is single)
    "invalid_link_single_parent.json": (None, [Want("link_single_parent", "consumer", "l2", named="'Consumer'")]),
    # Start -> A -> B
    #          ^----/
    "invalid_flow_cycle.json": (None, [Want("flow_cycle", "a", named="A -> B -> A")]),
    # Start -> Loop -> After
    #          ^.loop---/       After is not Loop's child, so this is a plain cycle.
    "invalid_flow_cycle_through_container.json": (None, [
        Want("flow_cycle", "loop", named="Loop -> After -> Loop")]),
    # Alpha.thing-out ==> Beta.things,  Beta.thing-out ==> Alpha.things
    "invalid_link_cycle.json": (None, [Want("link_cycle", "alpha", named="Alpha -> Beta -> Alpha")]),
    "invalid_link_cycle_self.json": (None, [Want("link_cycle", "alpha", named="Alpha -> Alpha")]),
    "invalid_missing_parent.json": (None, [Want("missing_parent", "child", named="'Child'")]),
    "invalid_parent_not_container.json": (None, [Want("parent_not_container", "child", named="'Pass'")]),
    # [Outer [Inner [Outer ...]]]
    "invalid_parent_cycle.json": (None, [Want("parent_cycle", "outer", named="Outer in Inner in Outer")]),
    "invalid_missing_trigger.json": ("Nope", [Want("missing_trigger", named="Start")]),
    "invalid_not_a_trigger.json": ("Pass", [Want("not_a_trigger", "pass", named="'Pass'")]),
}


def test_every_invalid_fixture_has_expectations():
    assert sorted(p.name for p in GRAPHS.glob("invalid_*.json")) == sorted(INVALID)


@pytest.mark.parametrize("fixture", sorted(INVALID))
def test_invalid_fixture_yields_exactly_its_rules(registry, fixture):
    trigger, wanted = INVALID[fixture]
    _, issues = normalize(load(fixture), registry, trigger=trigger)
    got = sorted((i.rule, i.node_id, i.edge_id) for i in issues)
    assert got == sorted(w[:3] for w in wanted), [str(i) for i in issues]
    for want in wanted:
        issue = next(i for i in issues if (i.rule, i.node_id, i.edge_id) == want[:3])
        assert want.named in issue.message


@pytest.mark.parametrize("fixture", sorted(p.name for p in GRAPHS.glob("valid_*.json")))
def test_valid_fixture_has_no_issue(registry, fixture):
    graph, issues = normalize(load(fixture), registry)
    assert issues == []
    assert normalize_or_raise(load(fixture), registry) == graph


def test_migration_upgrades_an_old_version(registry):
    # Renamed saved at v1 with `old_text`; v2 renamed it to `text`.
    graph = normalize_or_raise(load("valid_migration_v1.json"), registry)
    renamed = next(n for n in graph.nodes if n.id == "renamed")
    assert renamed.version == 2
    assert renamed.data == {"text": "hello"}


def test_defaults_are_filled_and_edge_types_recorded(registry):
    # Provider 1 ==thing==> Consumer.things   (edge saved without sourceType/targetType)
    graph = normalize_or_raise(load("valid_links.json"), registry)
    edge = next(e for e in graph.edges if e.id == "l1")
    assert (edge.data.sourceType, edge.data.targetType) == ("tools", "tools")
    linear = normalize_or_raise(load("valid_linear.json"), registry)
    pass_node = next(n for n in linear.nodes if n.id == "b1")
    assert pass_node.data == {"count": 1, "label": "", "flavour": "plain"}


def test_container_child_may_feed_back_into_its_container(registry):
    # Start -> Loop ----output----> After
    #          |  ^
    #        body loop            (Child.parentId == Loop: not a cycle)
    #          v  |
    #          Child
    _, issues = normalize(load("valid_container_loop.json"), registry)
    assert issues == []


def test_child_cycle_inside_a_container_is_still_a_cycle(registry):
    # Loop.body -> Child -> Child2 -> Child   (all inside Loop)
    raw = load("valid_container_loop.json")
    raw["nodes"].append({"id": "child2", "type": "toy-pass", "name": "Child 2", "parentId": "loop"})
    raw["edges"] += [
        {"id": "c1", "source": "child", "sourceHandle": "output", "target": "child2", "targetHandle": "input",
         "data": {"channel": "flow"}},
        {"id": "c2", "source": "child2", "sourceHandle": "output", "target": "child", "targetHandle": "input",
         "data": {"channel": "flow"}},
    ]
    _, issues = normalize(raw, registry)
    assert [i.rule for i in issues] == ["flow_cycle"]


@pytest.mark.parametrize("trigger", ["start", "Start"])
def test_trigger_found_by_id_or_name(registry, trigger):
    _, issues = normalize(load("valid_linear.json"), registry, trigger=trigger)
    assert issues == []


def test_repeat_ports_follow_the_list_parameter(registry):
    # Branch(cases=[a, b]) --case-1--> On B
    #                      --else----> Otherwise
    _, issues = normalize(load("valid_linear.json"), registry)
    assert issues == []
    raw = load("valid_linear.json")
    raw["nodes"][2]["data"]["cases"] = [{"value": "a"}]
    _, issues = normalize(raw, registry)
    assert [(i.rule, i.edge_id) for i in issues] == [("edge_missing_handle", "e3")]


def test_normalize_or_raise_carries_every_issue(registry):
    with pytest.raises(GraphInvalid) as caught:
        normalize_or_raise(load("invalid_parameter_not_a_list.json"), registry)
    assert [i.rule for i in caught.value.issues] == ["invalid_parameter", "edge_missing_handle"]
    assert "[edge_missing_handle]" in str(caught.value)


def test_a_graph_instance_is_copied_not_mutated(registry):
    graph = Graph.model_validate(load("valid_migration_v1.json"))
    normalized, issues = normalize(graph, registry)
    assert issues == []
    assert graph.nodes[1].version == 1 and graph.nodes[1].data == {"old_text": "hello"}
    assert normalized.nodes[1].version == 2


@pytest.mark.parametrize("raw", [[], "graph", None])
def test_not_a_json_object(registry, raw):
    graph, issues = normalize(raw, registry)
    assert graph is None
    assert [i.rule for i in issues] == ["schema"]


def test_expressions_skip_the_type_check(registry):
    # `{{ ... }}` in an int parameter is checked when it runs, not here.
    raw = load("valid_linear.json")
    assert raw["nodes"][4]["data"] == {"count": "{{ $input.n }}"}
    assert normalize(raw, registry)[1] == []


def _valid_linear() -> dict:
    return load("valid_linear.json")


TEXT_SPOTS = [("graph", "name"), ("graph", "id"), ("node", "id"), ("node", "name"), ("node", "type"),
              ("node", "parentId"), ("edge", "id"), ("edge", "source"), ("edge", "sourceHandle"),
              ("edge", "target"), ("edge", "targetHandle"), ("edge-data", "sourceType"), ("edge-data", "targetType")]


@pytest.mark.parametrize("bad", ["a\x00b", "a\ud800b"], ids=["NUL", "lone surrogate"])
@pytest.mark.parametrize("where, field", TEXT_SPOTS, ids=[f"{w}.{f}" for w, f in TEXT_SPOTS])
def test_every_text_field_is_checked(registry, where, field, bad):
    """Every run normalizes its graph, so the usual graph takes a fast check after the schema: it must miss
    nothing that the full check (names the node and the place) catches."""
    raw = _valid_linear()
    target = {"graph": raw, "node": raw["nodes"][1], "edge": raw["edges"][0],
              "edge-data": raw["edges"][0]["data"]}[where]
    target[field] = bad
    graph, issues = normalize(raw, registry)
    # The rest of the graph is checked too: the edges into a node whose id is broken name no node of it.
    dangling = ["edge_missing_node"] * 2 if (where, field) == ("node", "id") else []
    assert graph is None and [i.rule for i in issues] == ["invalid_value", *dangling], issues
    assert "NUL" in issues[0].message or "surrogate" in issues[0].message


def test_the_fast_check_covers_every_text_field_the_models_declare():
    from nodeflow_app.runtime import graph as module

    for model, getter in ((module.Node, module._NODE_TEXT), (module.Edge, module._EDGE_TEXT),
                          (module.EdgeData, module._EDGE_DATA_TEXT)):
        declared = {n for n, f in model.model_fields.items() if f.annotation in (str, str | None)}
        assert declared and set(getter.__reduce__()[1]) == declared
    declared = {n for n, f in module.Graph.model_fields.items() if f.annotation in (str, str | None)}
    assert declared == {"id", "name"}  # read by _values_fine by name


@pytest.mark.parametrize("spot", ["graph", "node"])
def test_whole_numbers_too_large_for_text_are_refused(registry, spot):
    raw = _valid_linear()
    (raw if spot == "graph" else raw["nodes"][0])["version"] = 10 ** 5000
    graph, issues = normalize(raw, registry)
    assert graph is None and issues[0].rule == "invalid_value" and "too large" in issues[0].message


def _deep(levels: int) -> list:
    value: list = []
    for _ in range(levels):
        value = [value]
    return value


@pytest.mark.parametrize("value", [float("nan"), "x\x00", {"k\ud800": 1}, _deep(150), 10 ** 5000],
                         ids=["NaN", "NUL", "surrogate key", "deep", "huge int"])
def test_parameters_are_checked_on_the_fast_path(registry, value):
    raw = _valid_linear()
    raw["nodes"][1]["data"] = {"label": value}
    graph, issues = normalize(raw, registry)
    assert graph is None and issues[0].rule == "invalid_value" and issues[0].node_id == raw["nodes"][1]["id"]


def test_issues_past_what_the_schema_refuses_are_listed_too(registry):
    """The schema refusing a node, an edge or a field of the graph stopped every other rule: the rest of the graph
    is checked too (without them, nor the edges to a refused node, which are not at fault), each issue once."""
    raw = load("valid_linear.json")
    raw["nodes"][1]["data"]["count"] = "many"  # Pass: not an int
    raw["nodes"][3]["type"] = "toy-from-elsewhere"  # On B
    raw["nodes"][4]["position"] = {"x": "left"}  # Otherwise: refused by the schema, so is e4 into it (not blamed)
    del raw["edges"][1]["data"]  # e2: refused by the schema
    raw["edges"].append({"id": "e-lost", "source": "pass", "sourceHandle": "output", "target": "nowhere",
                         "targetHandle": "input", "data": {"channel": "flow"}})
    raw["viewport"] = "wide"  # a field of the graph itself
    graph, issues = normalize(raw, registry)
    assert graph is None  # nothing runs from a graph the schema refuses
    found = [(i.rule, i.node_id, i.edge_id) for i in issues]
    assert set(found) == {
        ("schema", "else", None), ("schema", None, "e2"), ("schema", None, None),
        ("invalid_parameter", "pass", None), ("unknown_node_type", "b1", None),
        ("edge_missing_node", None, "e-lost")}, [str(i) for i in issues]
    assert len(found) == len(set(found))
    with pytest.raises(GraphInvalid) as caught:
        normalize_or_raise(raw, registry)
    assert len(caught.value.issues) == len(found)
