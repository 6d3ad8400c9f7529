"""`Parameter.show_if`: a parameter applies only while the node's other settings show it. The inspector hides it
(its value stays stored), Validate and runs do not check it, activation does not refuse it, the canvas gets the rule,
and the Schedule, Webhook and HTTP Request nodes use it."""

from __future__ import annotations

import re

import pytest

from nodeflow_app.components.inspector import _has_slider, node_form
from nodeflow_app.contract import NodeDefinition, Option, Parameter, Socket
from nodeflow_app.editor.catalog import node_type_entry
from nodeflow_app.editor.fields import field_view
from nodeflow_app.runtime.graph import Graph, Node, normalize
from nodeflow_app.triggers import schedules
from nodeflow_app.validation import node_issues, validate_graph
from nodes._registry import default_registry
from tests.llm.graphs import graph
from tests.runtime import toys
from tests.runtime.test_kernel import run_graph

REGISTRY = default_registry()

# mode: a or b; `only_b` shows for b; `deeper` for b with `switch` on (a chain: hidden with only_b's condition).
TOY = NodeDefinition(
    id="toy-shown", name="Shown", description="d", category="t", inputs=(toys.DATA_IN,), outputs=(toys.DATA_OUT,),
    parameters=(
        Parameter(id="mode", label="Mode", type="select", default="a", options=(Option(value="a"), Option(value="b"))),
        Parameter(id="switch", label="Switch", type="boolean", default=True, show_if={"mode": ("b",)}),
        Parameter(id="only_b", label="Only B", type="int", default=1, min=1, max=5, show_if={"mode": ("b",)}),
        Parameter(id="deeper", label="Deeper", default="", show_if={"switch": (True,)}),
    ),
)


def test_hidden_parameters_follow_the_values_and_defaults_and_chain():
    assert TOY.hidden_parameters({}) == {"switch", "only_b", "deeper"}  # mode defaults to a; deeper via switch
    assert TOY.hidden_parameters({"mode": "b"}) == set()
    assert TOY.hidden_parameters({"mode": "b", "switch": False}) == {"deeper"}
    assert REGISTRY.definition("manual-trigger").hidden_parameters({"anything": 1}) == set()


def test_the_inspector_view_marks_hidden_parameters_and_keeps_their_values():
    node = Node(id="n", type="toy-shown", name="N", data={"mode": "a", "only_b": 4, "deeper": "kept"})
    view = field_view(TOY, node, Graph(nodes=[node]))
    assert view.hidden == {"switch": True, "only_b": True, "deeper": True}
    assert view.texts["only_b"] == "4" and view.texts["deeper"] == "kept"  # stored, shown again when switched back
    shown = node.model_copy(update={"data": {**node.data, "mode": "b"}})
    assert field_view(TOY, shown, Graph(nodes=[shown])).hidden == {}


def test_the_inspector_form_shows_a_conditional_field_only_while_it_is_not_hidden():
    rendered = str(node_form(TOY)).replace(" ", "")
    conditions = set(re.findall(r'field_hidden_rx_state_\?\.\["(\w+)"\]\?\(jsx\(Fragment', rendered))
    assert conditions == {"switch", "only_b", "deeper"}  # hidden: nothing; "mode" has no rule: always there


def test_a_hidden_parameters_problems_are_not_reported_by_validate_the_inspector_or_the_normalizer():
    raw = graph([("s", "manual-trigger", {}),
                 ("h", "http-request", {"url": "https://example.com", "body_type": "none",
                                        "json_body": "{{ $('Nope').item.json }}", "pagination": "off",
                                        "max_pages": 5000})],
                ["s.output -> h.input"])
    normalized, issues = validate_graph(raw, REGISTRY)
    assert issues == []
    assert node_issues(normalized, REGISTRY, "h") == []
    raw["nodes"][1]["data"].update(body_type="json", pagination="next_url")  # shown again: reported again
    _, issues = validate_graph(raw, REGISTRY)
    assert {(issue.parameter, issue.rule) for issue in issues} == {("json_body", "invalid_reference"),
                                                                   ("max_pages", "invalid_parameter")}
    assert [issue.parameter for issue in normalize(raw, REGISTRY)[1]] == ["max_pages"]


async def test_a_run_does_not_resolve_a_hidden_parameters_expression():
    seen = {}

    async def record(data, inputs, ctx):
        seen.update(data)
        return {"out": 1}

    registry = toys.registry((TOY, toys.Toy("toy-shown", record)))
    broken = "{{ $('Nowhere').item.json }}"
    raw = toys.graph([("s", "start"), ("n", "shown", {"mode": "a", "deeper": broken})], ["s.out -> n.in"])
    run, _ = await run_graph(raw, registry)
    assert run.status == "completed", run.error
    assert seen["deeper"] == broken  # passed as stored: the node does not use it


def test_an_interval_schedule_uses_no_hidden_time_zone():
    definition = REGISTRY.definition("schedule-trigger")
    data = {**definition.defaults(), "mode": "interval", "every": 5, "unit": "minutes", "timezone": "Mars/Olympus"}
    assert definition.hidden_parameters(data) == {"cron", "timezone"}
    assert schedules.parse(data).zone.key == "UTC"
    with pytest.raises(ValueError, match="unknown time zone"):
        schedules.parse({**data, "mode": "cron"})


@pytest.mark.parametrize(("node_type", "data", "hidden"), [
    ("schedule-trigger", {"mode": "cron"}, {"every", "unit"}),
    ("schedule-trigger", {"mode": "interval"}, {"cron", "timezone"}),
    ("webhook-trigger", {"auth": "none", "respond": "at_once"},
     {"auth_name", "auth_secret", "auth_connection", "status_code", "error_details",
      "response_headers"}),
    ("webhook-trigger", {"auth": "header", "respond": "last_node"}, set()),
    ("http-request", {"body_type": "json", "pagination": "off"},
     {"form", "text_body", "content_type", "file", "file_field", "next_url_path", "page_parameter", "first_page",
      "items_path", "max_pages"}),
    ("http-request", {"body_type": "multipart", "pagination": "page_number", "follow_redirects": False},
     {"json_body", "text_body", "content_type", "next_url_path", "max_redirects"}),
])
def test_the_nodes_show_only_what_applies(node_type, data, hidden):
    definition = REGISTRY.definition(node_type)
    assert definition.hidden_parameters({**definition.defaults(), **data}) == hidden


def test_the_canvas_gets_the_rule():
    entry = node_type_entry(REGISTRY.definition("http-request"))
    file = next(p for p in entry["parameters"] if p["id"] == "file")
    assert file["show_if"] == {"body_type": ["multipart"]}


def test_a_slider_only_where_it_can_pick_a_value():
    every = REGISTRY.definition("schedule-trigger").parameter("every")
    assert not _has_slider(every)  # 1 to 100,000: typed
    assert _has_slider(Parameter(id="t", label="T", type="float", min=0, max=2, step=0.1))
    assert _has_slider(Parameter(id="p", label="P", type="int", min=1, max=1000))
    assert "slider-every" not in str(node_form(REGISTRY.definition("schedule-trigger")))


def test_a_definition_without_rules_has_none():
    plain = NodeDefinition(id="plain", name="P", description="d", category="t", outputs=(Socket(id="out"),),
                           parameters=(Parameter(id="x", label="X"),))
    assert plain.parameters[0].show_if == {} and plain.hidden_parameters({"x": 1}) == set()
