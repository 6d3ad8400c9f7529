"""nodeflow_app/legacy: detection, the mapping of each old node and edge, the sub-agent rules and the report."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

import pytest

from nodeflow_app.legacy import LegacyFormatError, is_legacy_graph, migrate_graph
from nodeflow_app.runtime.graph import normalize
from nodes._registry import default_registry

LEGACY = Path(__file__).resolve().parents[1] / "fixtures" / "graphs" / "legacy"
GRAPHS = LEGACY.parent
VALID = sorted(p.name for p in LEGACY.glob("*.json") if not p.name.startswith("invalid_"))
RULES = {
    "invalid_subagent_not_agent.json": ("s1", "sub-agent target 'gate' must be an agent node, not 'if'"),
    "invalid_subagent_disabled.json": ("s1", "Subagents tool (tools.subagents) is off"),
    "invalid_subagent_target_handle.json": ("s1", "must end at the input handle, not 'tools'"),
    "invalid_subagent_self.json": ("s1", "agent 'loner' cannot be a sub-agent of itself"),
    "invalid_subagent_cycle.json": ("s2", "sub-agent cycle: a -> b -> a"),
    "invalid_subagent_two_parents.json": ("s2", "agent 'helper' has more than one sub-agent parent (edges s1, s2)"),
    "invalid_subagent_in_flow.json": ("s1", "agent 'helper' is a sub-agent and also on execution edges (e2)"),
}


def load(name: str) -> dict:
    return json.loads((LEGACY / name).read_text())


def migrate(raw: dict, **options):
    return migrate_graph(raw, default_registry(), **options)


def node(graph: dict, node_id: str) -> dict:
    return next(n for n in graph["nodes"] if n["id"] == node_id)


def edge(graph: dict, edge_id: str) -> dict:
    return next(e for e in graph["edges"] if e["id"] == edge_id)


def lines(report, kind: str) -> list[str]:
    return [str(line) for line in report.of(kind)]


def test_node_types_that_are_not_text_are_no_old_graph_and_no_crash():
    assert not is_legacy_graph({"nodes": [{"id": "a", "type": []}, {"id": "b", "type": {"x": 1}}]})
    assert is_legacy_graph({"nodes": [{"id": "a", "type": []}, {"id": "s", "type": "start"}]})


def test_every_fixture_is_recognised_and_no_current_graph_is():
    assert all(is_legacy_graph(json.loads(p.read_text())) for p in LEGACY.glob("*.json"))
    current = [p for p in GRAPHS.rglob("*.json") if p.parent != LEGACY]
    assert current and not any(is_legacy_graph(json.loads(p.read_text())) for p in current)


@pytest.mark.parametrize("name", VALID)
def test_each_valid_fixture_converts_to_a_graph_the_normalizer_accepts(name):
    migration = migrate(load(name))
    assert migration.report.ok, migration.report.text()
    graph, issues = normalize(migration.graph, default_registry())
    assert issues == [] and graph is not None
    # Every old node and edge has a line in the report.
    old = load(name)
    mentioned = {line.where.split(" ")[1] for line in migration.report.lines}
    assert {n["id"] for n in old["nodes"]} | {e["id"] for e in old.get("edges", old.get("connections"))} <= mentioned


@pytest.mark.parametrize(("name", "expected"), sorted(RULES.items()))
def test_each_broken_sub_agent_rule_is_an_error_and_nothing_is_converted(name, expected):
    migration = migrate(load(name))
    assert migration.graph is None
    assert [line.where for line in migration.report.of("error")] == [f"edge {expected[0]}"]
    assert expected[1] in migration.report.of("error")[0].text


def test_start_becomes_the_legacy_start_trigger():
    graph = migrate(load("previous_output.json")).graph
    assert node(graph, "start-1")["type"] == "legacy-start"
    assert node(graph, "start-1")["data"] == {"initial_input": "Bonjour le monde"}
    assert graph["name"] == "Translate and shout"


def test_agent_fields_map_to_the_agent_node_with_the_old_defaults():
    raw = load("previous_output.json")
    raw["nodes"][2]["data"] = {}  # everything empty: the older runtime's defaults
    graph = migrate(raw).graph
    assert node(graph, "translate")["data"] == {
        "instructions": "You translate French to English.", "prompt": "Translate to English: {{ $json.text }}",
        "model": "openai:gpt-5", "reasoning_effort": "medium", "history": False}
    assert node(graph, "shout")["data"] == {
        "instructions": "You are a helpful assistant.", "prompt": "", "model": "openai:gpt-5",
        "reasoning_effort": "low", "history": False}
    assert node(graph, "shout")["name"] == "Agent"


def test_previous_output_reads_response_after_an_agent_and_looks_through_if_and_approval():
    graph = migrate(load("conditions.json")).graph
    assert node(graph, "urgent")["data"]["prompt"] == "URGENT: {{ $json.response }}"
    graph = migrate(load("approval.json")).graph
    assert node(graph, "send")["data"]["prompt"] == "Send this approved reply: {{ $json.response }}"
    graph = migrate(load("legacy_condition.json")).graph
    assert node(graph, "yes")["data"]["prompt"] == "The answer was yes: {{ $json.text }}"


def test_a_model_with_a_provider_keeps_it_and_bare_ones_take_the_chosen_provider():
    raw = load("previous_output.json")
    raw["nodes"][1]["data"]["model"] = "anthropic:claude-sonnet-4"
    graph = migrate(raw, provider="openai-compatible").graph
    assert node(graph, "translate")["data"]["model"] == "anthropic:claude-sonnet-4"
    assert node(graph, "shout")["data"]["model"] == "openai-compatible:gpt-5"


def test_if_conditions_become_switch_conditions_on_the_text_field():
    migration = migrate(load("conditions.json"))
    route = node(migration.graph, "route")
    assert route["type"] == "switch"
    assert route["data"] == {"case_sensitive": False, "conditions": [
        {"field": "response", "operator": "contains", "value": "urgent"},
        {"field": "response", "operator": "contains", "value": "refund"},
        {"field": "response", "operator": "equals", "value": "billing"}]}
    assert [edge(migration.graph, e)["sourceHandle"] for e in ("e3", "e4", "e5", "e6")] == [
        "condition-0", "condition-1", "condition-2", "else"]
    assert "edge e6: flow edge route.else -> other.input (old handle 'false')" in lines(migration.report, "mapped")


def test_legacy_condition_and_true_handle():
    graph = migrate(load("legacy_condition.json")).graph
    assert node(graph, "check")["data"]["conditions"] == [{"field": "text", "operator": "contains", "value": "yes"}]
    assert edge(graph, "e2")["sourceHandle"] == "condition-0"


def test_conditions_the_older_runtime_never_matched_stay_in_place_and_are_reported():
    raw = load("conditions.json")
    raw["nodes"][2]["data"]["conditions"] = [{"operator": "equal", "value": "  "}, {"operator": "equal", "value": "1.0"},
                                             {"operator": "regex", "value": "x"}]
    migration = migrate(raw)
    rows = node(migration.graph, "route")["data"]["conditions"]
    assert [(r["operator"], r["value"]) for r in rows] == [("regex", "(?!)"), ("regex", r"\A1\.0\Z"), ("equals", "x")]
    warnings = " ".join(lines(migration.report, "warning"))
    assert "condition 0 has an empty value: it never matched" in warnings
    assert "condition 2: operator \"regex\" is unknown; the older runtime used 'equal'" in warnings


def test_input_and_approval_become_approval_with_approve_and_reject():
    migration = migrate(load("approval.json"))
    assert node(migration.graph, "check")["type"] == "approval"
    assert [edge(migration.graph, e)["sourceHandle"] for e in ("e3", "e4")] == ["approve", "reject"]
    assert any("took free text" in line for line in lines(migration.report, "warning"))


def test_subagent_edges_become_tools_links_from_the_member_to_its_parent():
    migration = migrate(load("subagents.json"))
    assert edge(migration.graph, "s1") == {"id": "s1", "source": "researcher", "sourceHandle": "tools-out",
                                           "target": "lead", "targetHandle": "tools", "data": {"channel": "link"}}
    assert edge(migration.graph, "s2")["source"] == "checker" and edge(migration.graph, "s2")["target"] == "researcher"
    unmapped = lines(migration.report, "unmapped")
    assert unmapped == ["node lead (agent): tools.web_search = true: NodeFlow has no built-in web search; the agent "
                        "runs without it (wire a search MCP server or toolset into its Tools)"]


def test_nothing_is_dropped_without_a_line():
    raw = load("conditions.json")
    raw["nodes"].append({"id": "odd", "type": "webhook", "data": {}})
    raw["nodes"][1]["data"]["temperature"] = 0.2
    raw["connections"] += [{"id": "x1", "source": "route", "sourceHandle": "condition-7", "target": "other"},
                           {"id": "x2", "source": "triage", "target": "odd"},
                           {"id": "x3", "source": "triage", "target": "start-1"}]
    migration = migrate(raw)
    assert migration.report.ok, migration.report.text()
    unmapped = lines(migration.report, "unmapped")
    assert "node odd (webhook): dropped: unknown node type 'webhook' (the older runtime skipped it)" in unmapped
    assert "node triage (agent): data.temperature = 0.2: no equivalent in NodeFlow" in unmapped
    assert any(line.startswith("edge x1: dropped: if route has 3 condition(s)") for line in unmapped)
    assert "edge x2: dropped: triage -> odd touches a dropped node (odd)" in unmapped
    assert any(line.startswith("edge x3: dropped: an edge into the start node") for line in unmapped)
    assert {e["id"] for e in migration.graph["edges"]} == {"e1", "e2", "e3", "e4", "e5", "e6"}


def test_a_node_reached_by_two_edges_gets_a_warning():
    raw = load("conditions.json")
    raw["connections"].append({"id": "e7", "source": "route", "sourceHandle": "condition-1", "target": "other"})
    migration = migrate(raw)
    assert any(line.startswith("node other: 'Front desk' has 2 incoming edges (e6, e7)")
               for line in lines(migration.report, "warning"))


def test_a_flow_cycle_is_reported_by_the_normalizer_and_nothing_is_converted():
    raw = load("previous_output.json")
    raw["edges"].append({"id": "back", "source": "shout", "target": "translate"})
    migration = migrate(raw)
    assert migration.graph is None
    assert any("breaks a rule" in line.text for line in migration.report.of("error"))


def test_repeated_names_are_made_unique():
    raw = load("concurrent.json")
    for item in raw["nodes"][1:]:
        item["data"]["agentName"] = "Bot"
    names = [n["name"] for n in migrate(raw).graph["nodes"]]
    assert names == ["Start", "Bot", "Bot 2", "Bot 3"]


@pytest.mark.parametrize(("raw", "message"), [
    ([], "a graph is a JSON object, got list"),
    ({"nodes": {}}, "the graph has no 'nodes' list"),
    ({"nodes": [{"type": "start"}]}, "nodes[0] has no id"),
    ({"nodes": [{"id": "a", "type": "start", "data": []}]}, "nodes[0] (id 'a'): data must be an object"),
    ({"nodes": [], "edges": [{"id": "e", "source": "a"}]}, "edges[0] has no target"),
    ({"nodes": [{"id": "a", "type": "start"}, {"id": "a", "type": "agent"}]}, "two nodes have the id 'a'"),
    ({"nodes": [{"id": "a", "type": "start", "position": {"x": 0, "y": 10 ** 400}}]},
     "nodes[0] (id 'a'): position.y is too large a number"),
])
def test_a_malformed_old_graph_names_what_and_where(raw, message):
    with pytest.raises(LegacyFormatError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")
                       .replace("]", r"\]")):
        migrate(raw)


def test_the_report_text_has_a_section_per_kind():
    text = migrate(load("subagents.json")).report.text()
    assert text.startswith("Converted (7):\n  node start-1 (start): Start 'Start' (legacy-start)")
    assert "\nNot mapped (1):\n  node lead (agent): tools.web_search = true" in text


def test_the_import_dialog_gets_a_migration_only_for_old_graphs():
    from nodeflow_app.state.legacy_import_state import legacy_migration

    assert legacy_migration((GRAPHS / "examples" / "branching.json").read_text(), "branching.json") is None
    assert legacy_migration("not json", "x.json") is None
    migration = legacy_migration((LEGACY / "approval.json").read_text(), "approval.json")
    assert migration.graph["name"] == "Approve a reply" and migration.report.ok
    broken = legacy_migration('{"nodes": [{"id": "s", "type": "start", "data": 3}]}', "old.json")
    assert broken.graph is None
    assert [str(line) for line in broken.report.of("error")] == ["graph: nodes[0] (id 's'): data must be an object, got int"]


def test_keys_outside_the_old_format_are_reported_and_react_flow_view_keys_are_not():
    raw = load("approval.json")
    raw.update(createdAt="2025-01-01", viewport={"x": 10, "y": 5, "zoom": 0.5})
    raw["nodes"][0].update(width=150, selected=True, notes="first node")
    raw["edges"][0].update(animated=True, label="go")
    migration = migrate(raw)
    unmapped = lines(migration.report, "unmapped")
    assert unmapped == ["graph: keys ['createdAt']: not part of the older format, no equivalent",
                        "node start-1 (start): keys ['notes']: not part of the older format, no equivalent",
                        "edge e1: keys ['label']: not part of the older format, no equivalent"]
    assert migration.graph["viewport"] == {"x": 10, "y": 5, "zoom": 0.5}


def test_an_unexpected_failure_is_an_error_naming_the_file_not_a_crashed_handler(monkeypatch, caplog):
    from nodeflow_app.state import legacy_import_state

    def broken(*args, **kwargs):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(legacy_import_state, "migrate_graph", broken)
    with caplog.at_level(logging.ERROR, logger=legacy_import_state.__name__):
        migration = legacy_import_state.legacy_migration((LEGACY / "approval.json").read_text(), "approval.json")
    assert migration.graph is None
    assert [str(line) for line in migration.report.of("error")] == [
        "graph: approval.json could not be converted: RecursionError: maximum recursion depth exceeded"]
    [record] = caplog.records
    assert "approval.json" in record.getMessage() and record.exc_info[0] is RecursionError


def agent_chain(count: int, handle: str | None, close: bool = False) -> dict:
    """Agents each linked to the next (`handle` "subagent": each the sub-agent of the one before); `close`
    links the last back to the first."""
    agents = [{"id": f"a{i}", "type": "agent", "data": {"agentName": f"A{i}", "tools": {"subagents": True}}}
              for i in range(count)]
    edges = [{"id": f"e{i}", "source": f"a{i}", "target": f"a{(i + 1) % count}", "sourceHandle": handle}
             for i in range(count if close else count - 1)]
    return {"nodes": [{"id": "s", "type": "start"}, *agents], "edges": edges}


def test_a_sub_agent_chain_deeper_than_the_recursion_limit_converts():
    """The cycle check recursed once per link: 1,100 links (164 KB) raised RecursionError."""
    migration = migrate(agent_chain(5000, "subagent"))
    assert migration.report.ok, migration.report.text()[:500]
    assert edge(migration.graph, "e4998")["source"] == "a4999" and edge(migration.graph, "e4998")["target"] == "a4998"


def test_a_sub_agent_cycle_deeper_than_the_recursion_limit_is_reported_with_its_path():
    migration = migrate(agent_chain(5000, "subagent", close=True))
    [error] = migration.report.of("error")
    assert error.where == "edge e4999"
    assert error.text == "sub-agent cycle: " + " -> ".join([f"a{i}" for i in range(5000)] + ["a0"])


def if_chain(count: int) -> dict:
    """A Start, then Ifs each on the true branch of the one before: every If looks back through all before it."""
    ifs = [{"id": f"i{i}", "type": "if", "data": {"condition": "x"}} for i in range(count)]
    edges = [{"id": f"e{i}", "source": f"i{i - 1}" if i else "s", "target": f"i{i}", "sourceHandle": "true"}
             for i in range(count)]
    return {"nodes": [{"id": "s", "type": "start"}, *ifs], "edges": edges}


def test_a_long_chain_of_ifs_converts_in_a_moment():
    """Each If walked back through every If before it, scanning every edge at each step: 2,000 Ifs (265 KB) took
    68 s; now 2,500 take well under a second."""
    started = time.monotonic()
    migration = migrate(if_chain(2500))
    assert time.monotonic() - started < 10
    assert migration.report.ok, migration.report.text()[:500]
    assert node(migration.graph, "i2499")["data"]["conditions"][0]["field"] == "text"


class CountedList(list):
    """A list that counts the loops over it."""

    loops = 0

    def __iter__(self):
        CountedList.loops += 1
        return super().__iter__()


def edge_loops(monkeypatch, raw: dict) -> int:
    """How many times the migration loops over the old graph's edges."""
    from nodeflow_app.legacy import migrate as module

    read = module.read_old_graph

    def counted(raw_graph):
        old = read(raw_graph)
        old.edges = CountedList(old.edges)
        return old

    with monkeypatch.context() as patch:
        patch.setattr(module, "read_old_graph", counted)
        CountedList.loops = 0
        assert migrate(raw).report.ok
    return CountedList.loops


def sub_agent_star(count: int) -> dict:
    """One parent with every other agent as its sub-agent, and an execution edge from the Start to it."""
    raw = agent_chain(count, "subagent")
    for item in raw["edges"]:
        item["source"] = "a0"
    raw["edges"][0] = {"id": "go", "source": "s", "target": "a0"}
    return raw


def flow_chain(count: int) -> dict:
    return agent_chain(count, None)


@pytest.mark.parametrize("shape", [if_chain, sub_agent_star, flow_chain])
def test_the_old_edges_are_looped_over_as_often_whatever_the_graph_size(monkeypatch, shape):
    """A loop over every edge for each node (its input's field, its sub-agent parent, its execution edges) made
    the migration quadratic: a 5 MB file could hold the server for minutes."""
    assert edge_loops(monkeypatch, shape(10)) == edge_loops(monkeypatch, shape(100))


def test_many_nodes_of_one_name_are_numbered_without_counting_from_2_for_each():
    """Each repeat of a name tried " 2", " 3", ... from 2: 20,000 unnamed agents took 30 s."""
    from nodeflow_app.legacy.migrate import _unique_names
    from nodeflow_app.legacy.source import OldNode

    kept = {f"a{i}": OldNode(f"a{i}", "agent", {"agentName": "Bot 3" if i == 1 else "Bot"}, {}) for i in range(40_000)}
    started = time.monotonic()
    names = _unique_names(kept)
    assert time.monotonic() - started < 5
    assert [names[f"a{i}"] for i in range(5)] == ["Bot", "Bot 3", "Bot 2", "Bot 4", "Bot 5"]
    assert len(set(names.values())) == len(kept)
