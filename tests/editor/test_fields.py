"""The inspector's data side (`nodeflow_app.editor.fields`) over the real node definitions."""

from __future__ import annotations


import pytest

from nodeflow_app.editor.fields import (
    FieldError, add_row, field_view, option_flag, parse_field, parse_setting, remove_row, set_row_field,
    upstream_names,
)
from nodeflow_app.runtime.graph import Edge, EdgeData, Graph, Node, NodeSettings, RetryPolicy, normalize
from nodes._registry import default_registry
from nodeflow_app.contract import Parameter

REGISTRY = default_registry()


def definition(node_type: str):
    found = REGISTRY.definition(node_type)
    assert found is not None, node_type
    return found


def param(node_type: str, param_id: str) -> Parameter:
    found = definition(node_type).parameter(param_id)
    assert found is not None, (node_type, param_id)
    return found


def node(node_id: str, node_type: str, name: str | None = None, **data) -> Node:
    return Node(id=node_id, type=node_type, name=name or node_id, data={**definition(node_type).defaults(), **data})


def flow(source: str, target: str, source_handle: str = "output", target_handle: str = "input") -> Edge:
    return Edge(id=f"{source}-{target}-{target_handle}", source=source, sourceHandle=source_handle, target=target,
                targetHandle=target_handle, data=EdgeData(channel="flow"))


def link(source: str, source_handle: str, target: str, target_handle: str) -> Edge:
    return Edge(id=f"{source}-{target}-{target_handle}", source=source, sourceHandle=source_handle, target=target,
                targetHandle=target_handle, data=EdgeData(channel="link"))


def view_of(n: Node, *others: Node, edges=(), modes=frozenset()):
    return field_view(definition(n.type), n, Graph(nodes=[n, *others], edges=list(edges)), modes)


# 1. field_view: texts, flags and rows of every real definition ------------------------------------

@pytest.mark.parametrize("node_type", [d.id for d in REGISTRY.definitions()])
def test_every_definition_has_a_text_or_flag_for_each_editable_parameter_and_no_problem_by_default(node_type):
    d = definition(node_type)
    view = view_of(node("n", node_type))
    for p in d.parameters:
        if p.mode == "output":
            continue
        assert p.id in view.texts, p.id
        if p.type == "boolean":
            assert view.flags[p.id] is bool(p.default)
        if p.type in ("key_value", "list"):
            assert isinstance(view.rows[p.id], list)
        assert p.id in view.expression
    assert view.errors == {}
    assert view.wired == {}
    assert view.upstream == []
    # Each parsed text round-trips to the stored default (what an unchanged blur sends back).
    for p in d.parameters:
        if p.type in ("string", "text", "code", "model", "select", "int", "float", "json") and p.mode != "output":
            assert parse_field(p, view.texts[p.id]) == p.default, p.id


def test_texts_of_numbers_selects_json_and_models():
    agent = node("a", "agent", temperature=0.7, tool_call_limit=3, reasoning_effort="high",
                 model="anthropic:claude-sonnet-4-5")
    view = view_of(agent)
    assert view.texts["temperature"] == "0.7"
    assert view.texts["tool_call_limit"] == "3"
    assert view.texts["reasoning_effort"] == "high"
    assert view.texts["model"] == "anthropic:claude-sonnet-4-5"
    assert view.flags == {"markdown": False, "history": True}
    assert view_of(node("a", "agent")).texts["temperature"] == ""  # None: the model's default
    schema = view_of(node("s", "structured-output", schema={"type": "object"})).texts["schema"]
    assert schema == '{\n  "type": "object"\n}'


def test_rows_of_key_value_lists_with_fields_and_lists_of_options():
    edit = node("e", "edit-fields", fields=[{"name": "status", "value": "adult"}, {"name": "n", "value": 3}])
    assert view_of(edit).rows["fields"] == [{"name": "status", "value": "adult"}, {"name": "n", "value": "3"}]
    as_object = node("p", "prompt-template", variables={"language": "French"})
    assert view_of(as_object).rows["variables"] == [{"name": "language", "value": "French"}]
    legacy = node("e", "edit-fields", fields=[{"key": "k", "value": {"a": 1}}])
    assert view_of(legacy).rows["fields"] == [{"name": "k", "value": '{"a": 1}'}]

    switch = node("s", "switch", conditions=[{"field": "age", "operator": "gt", "value": "17"}, {"field": "x"}])
    assert view_of(switch).rows["conditions"] == [
        {"field": "age", "operator": "gt", "value": "17"},
        {"field": "x", "operator": "equals", "value": ""},  # a missing field shows its default
    ]

    tools = view_of(node("t", "toolset", tool_names=["http_get"]))
    assert tools.rows["tool_names"] == [{"value": "http_get"}]
    assert tools.flags[option_flag("tool_names", "http_get")] is True
    assert tools.flags[option_flag("tool_names", "calculator")] is False


def test_problems_of_stored_values_expressions_and_model_references():
    bad = node("a", "agent", temperature=3, reasoning_effort="extreme", model="gpt-4o")
    errors = view_of(bad).errors
    assert errors["temperature"] == "3 is above the maximum 2"
    assert "'extreme' is not one of" in errors["reasoning_effort"]
    assert errors["model"] == "write provider:model, for example openai:gpt-4o-mini (got 'gpt-4o')"
    assert "unknown provider 'acme'" in view_of(node("a", "agent", model="acme:x")).errors["model"]

    broken = view_of(node("a", "agent", instructions="Hi {{ $json.name ")).errors["instructions"]
    assert "unterminated '{{'" in broken
    nested = node("e", "edit-fields", fields=[{"name": "a", "value": "ok"}, {"name": "b", "value": "{{ nope }}"}])
    assert view_of(nested).errors["fields"].startswith("row 2 value: unknown name 'nope'")
    # A verbatim parameter (expressions=False) is never parsed as an expression.
    verbatim = Parameter(id="code", label="Code", type="code", expressions=False)
    assert parse_field(verbatim, "{{ broken") == "{{ broken"


def test_expression_mode_follows_the_value_or_the_toggle_and_skips_booleans_and_selects():
    agent = node("a", "agent", instructions="Answer {{ $json.message }}")
    view = view_of(agent, modes={"temperature", "markdown", "reasoning_effort"})
    assert view.expression["instructions"] is True        # the value holds an expression
    assert view.expression["temperature"] is True         # toggled on by the user
    assert view.expression["model"] is False
    assert view.expression["markdown"] is False           # booleans and selects have no expression mode
    assert view.expression["reasoning_effort"] is False
    as_expression = view_of(node("a", "agent", temperature="{{ $json.t }}"))
    assert as_expression.expression["temperature"] is True
    assert as_expression.texts["temperature"] == "{{ $json.t }}"
    assert as_expression.errors == {}


# 2. Wires and upstream names --------------------------------------------------------------------

def test_wired_parameters_name_the_source_and_its_handle():
    #   Chat --> Agent <-(model, link)-- Picker
    #   Prompt --(prompt, text)--> Agent.instructions
    chat, agent = node("chat", "chat-start", "Chat"), node("agent", "agent", "Agent")
    picker, prompt = node("picker", "model-selector", "Picker"), node("prompt", "prompt-template", "Prompt")
    edges = [flow("chat", "agent"), link("picker", "model", "agent", "model"),
             flow("prompt", "agent", "prompt", "instructions")]
    view = view_of(agent, chat, picker, prompt, edges=edges)
    assert view.wired == {"model": "wired from 'Picker'.model", "instructions": "wired from 'Prompt'.prompt"}


def test_upstream_names_nearest_first_over_flow_edges_only():
    #   Chat --> Classify --> Agent --> Summary
    #   Manual ---------------^           ^
    #   Picker ~~(link)~~> Agent          (Summary's upstream: Agent, Classify, Manual, Chat)
    nodes = [node("chat", "chat-start", "Chat"), node("classify", "classifier", "Classify"),
             node("manual", "manual-trigger", "Manual"), node("agent", "agent", "Agent"),
             node("summary", "llm-completion", "Summary"), node("picker", "model-selector", "Picker")]
    edges = [flow("chat", "classify"), flow("classify", "agent", "category-0"), flow("manual", "agent"),
             flow("agent", "summary"), link("picker", "model", "agent", "model")]
    graph = Graph(nodes=nodes, edges=edges)
    assert upstream_names(graph, "summary") == ["Agent", "Classify", "Manual", "Chat"]
    assert upstream_names(graph, "chat") == []
    assert field_view(definition("llm-completion"), nodes[4], graph).upstream == ["Agent", "Classify", "Manual", "Chat"]


def test_upstream_names_end_on_loops_through_a_container():
    #   Start --> Loop --> Inner --> Loop   (a child wired back to its For Each)
    nodes = [node("start", "manual-trigger", "Start"), node("loop", "for-each", "Loop"),
             node("inner", "edit-fields", "Inner").model_copy(update={"parentId": "loop"})]
    graph = Graph(nodes=nodes, edges=[flow("start", "loop"), flow("loop", "inner"), flow("inner", "loop")])
    assert upstream_names(graph, "inner") == ["Loop", "Start"]


def test_field_view_walks_a_chain_deeper_than_the_recursion_limit():
    #   T --> N1 --> N2 --> ... --> N2999   (the walk is iterative: no RecursionError, every name once, nearest first)
    count = 3000
    nodes = [node("t", "manual-trigger", "T")] + [node(f"n{i}", "edit-fields", f"N{i}") for i in range(1, count)]
    edges = [flow("t", "n1")] + [flow(f"n{i}", f"n{i + 1}") for i in range(1, count - 1)]
    graph = Graph(nodes=nodes, edges=edges)
    view = field_view(definition("edit-fields"), nodes[-1], graph)
    assert len(view.upstream) == count - 1 == len(set(view.upstream))
    assert view.upstream[0] == f"N{count - 2}" and view.upstream[-1] == "T"


# 3. parse_field: every type, and the messages of bad input --------------------------------------

def test_numbers_parse_with_bounds_and_empty_optional_numbers_become_none():
    temperature, limit = param("agent", "temperature"), param("agent", "tool_call_limit")
    assert parse_field(temperature, "0.7") == 0.7
    assert parse_field(temperature, " 1 ") == 1.0 and isinstance(parse_field(temperature, "1"), float)
    assert parse_field(temperature, "") is None
    assert parse_field(temperature, 1.5) == 1.5           # a slider sends a number
    assert parse_field(temperature, [0.3]) == 0.3         # ... or a list of one thumb
    assert parse_field(limit, "3") == 3 and isinstance(parse_field(limit, "3.0"), int)
    with pytest.raises(FieldError, match=r"^Temperature: 3 is above the maximum 2$"):
        parse_field(temperature, "3")
    with pytest.raises(FieldError, match=r"^Temperature: -0.5 is below the minimum 0$"):
        parse_field(temperature, "-0.5")
    with pytest.raises(FieldError, match=r"^Temperature: 'warm' is not a number$"):
        parse_field(temperature, "warm")
    with pytest.raises(FieldError, match=r"^Temperature: nan is not a finite number$"):
        parse_field(temperature, "nan")
    with pytest.raises(FieldError, match=r"^Tool call limit: 2.5 is not a whole number$"):
        parse_field(limit, "2.5")
    with pytest.raises(FieldError, match=r"^Tool call limit: 0 is below the minimum 1$"):
        parse_field(limit, "0")
    with pytest.raises(FieldError, match="expected a number"):
        parse_field(limit, True)
    # A number with a non-empty default must stay a number.
    with pytest.raises(FieldError, match=r"^Concurrency: enter a number$"):
        parse_field(param("for-each", "concurrency"), "")
    with pytest.raises(FieldError, match=r"^Concurrency: 33 is above the maximum 32$"):
        parse_field(param("for-each", "concurrency"), "33")


def test_text_model_boolean_and_select():
    assert parse_field(param("agent", "instructions"), "  Be brief.\n") == "  Be brief.\n"
    assert parse_field(param("agent", "model"), " openai:gpt-4o ") == "openai:gpt-4o"
    assert parse_field(param("agent", "markdown"), True) is True
    assert parse_field(param("agent", "markdown"), "false") is False
    with pytest.raises(FieldError, match="^Markdown: expected on or off"):
        parse_field(param("agent", "markdown"), "maybe")
    assert parse_field(param("merge", "mode"), "combine_by_key") == "combine_by_key"
    with pytest.raises(FieldError, match=r"^Mode: 'zip' is not one of 'Append into one list'"):
        parse_field(param("merge", "mode"), "zip")


def test_json_parses_and_bad_json_names_line_and_column():
    schema = param("structured-output", "schema")
    assert parse_field(schema, '{"type": "object"}') == {"type": "object"}
    assert parse_field(schema, "") is None
    with pytest.raises(FieldError, match=r"^Schema: invalid JSON at line 2, column 3: Expecting property name"):
        parse_field(schema, '{\n  ,}')
    with pytest.raises(FieldError, match="NaN is not valid JSON"):
        parse_field(schema, '{"a": NaN}')
    # key_value and list parameters take JSON text too (their expression editor, an import).
    assert parse_field(param("prompt-template", "variables"), '{"a": "b"}') == {"a": "b"}
    with pytest.raises(FieldError, match=r"^Variables: expected a list of rows or an object, got str$"):
        parse_field(param("prompt-template", "variables"), '"a=b"')
    with pytest.raises(FieldError, match=r"^Conditions: row 1 operator: "):
        parse_field(param("switch", "conditions"), '[{"field": "a", "operator": "like"}]')


def test_expressions_are_stored_verbatim_for_any_type():
    assert parse_field(param("agent", "temperature"), "{{ $json.t }}") == "{{ $json.t }}"
    assert parse_field(param("agent", "tool_call_limit"), "{{ $('Plan').item.json.n }}") == "{{ $('Plan').item.json.n }}"
    assert parse_field(param("structured-output", "schema"), "{{ $json.schema }}") == "{{ $json.schema }}"
    assert parse_field(param("edit-fields", "fields"), "{{ $json.rows }}") == "{{ $json.rows }}"
    assert parse_field(param("agent", "instructions"), "Hi {{ $json.name }}") == "Hi {{ $json.name }}"


# 4. Rows: edit, add, remove (never mutating the current value) ------------------------------------

def test_key_value_rows_are_stored_as_name_value_objects():
    fields = param("edit-fields", "fields")
    current = [{"name": "status", "value": "adult"}]
    added = add_row(fields, current)
    assert added == [{"name": "status", "value": "adult"}, {"name": "", "value": ""}]
    named = set_row_field(fields, added, 1, "name", "greeting")
    valued = set_row_field(fields, named, 1, "value", "Hi {{ $json.name }}")
    assert valued == [{"name": "status", "value": "adult"}, {"name": "greeting", "value": "Hi {{ $json.name }}"}]
    assert remove_row(fields, valued, 0) == [{"name": "greeting", "value": "Hi {{ $json.name }}"}]
    assert current == [{"name": "status", "value": "adult"}]  # untouched
    # "key" is accepted as the name field; an object value becomes rows on its first edit.
    assert set_row_field(fields, {"a": "1"}, 0, "key", "b") == [{"name": "b", "value": "1"}]
    assert add_row(fields, None) == [{"name": "", "value": ""}]
    assert set_row_field(fields, [{"key": "old", "value": 1}], 0, "name", "new") == [{"name": "new", "value": 1}]


def test_key_value_cells_keep_their_type_when_the_text_is_unchanged_or_still_json():
    fields = param("edit-fields", "fields")
    current = [{"name": "n", "value": 3}]
    assert set_row_field(fields, current, 0, "value", "3") is not current
    assert set_row_field(fields, current, 0, "value", "3")[0]["value"] == 3
    assert set_row_field(fields, current, 0, "value", "4")[0]["value"] == 4
    assert set_row_field(fields, current, 0, "value", "four")[0]["value"] == "four"
    assert set_row_field(fields, [{"name": "s", "value": "3"}], 0, "value", "4")[0]["value"] == "4"


def test_list_items_with_fields_parse_each_field_by_its_type():
    conditions = param("switch", "conditions")
    current = [{"field": "age", "operator": "equals", "value": ""}]
    added = add_row(conditions, current)
    assert added[1] == {"field": "", "operator": "equals", "value": ""}
    changed = set_row_field(conditions, added, 1, "operator", "gt")
    assert changed[1]["operator"] == "gt" and added[1]["operator"] == "equals"
    with pytest.raises(FieldError, match=r"^Operator: 'like' is not one of"):
        set_row_field(conditions, added, 1, "operator", "like")
    with pytest.raises(FieldError, match=r"^Conditions: an item has no field 'colour'$"):
        set_row_field(conditions, added, 0, "colour", "red")
    with pytest.raises(FieldError, match=r"^Conditions: there is no row 3$"):
        set_row_field(conditions, added, 2, "field", "x")
    with pytest.raises(FieldError, match=r"^Conditions: there is no row 5$"):
        remove_row(conditions, added, 4)
    # A missing field is filled with its default when the item is edited.
    assert set_row_field(conditions, [{"field": "x"}], 0, "value", "1") == [
        {"field": "x", "operator": "equals", "value": "1"}]
    categories = param("classifier", "categories")
    assert add_row(categories, [])[0] == {"name": "", "description": ""}


def test_lists_of_options_toggle_by_option_index_in_option_order():
    tools = param("toolset", "tool_names")
    index = {o.value: i for i, o in enumerate(tools.options)}
    current = ["current_datetime"]
    checked = set_row_field(tools, current, index["calculator"], "checked", True)
    assert checked == ["calculator", "current_datetime"] and current == ["current_datetime"]
    assert set_row_field(tools, checked, index["calculator"], "checked", "false") == ["current_datetime"]
    assert set_row_field(tools, checked, index["calculator"], "checked", True) == checked
    assert set_row_field(tools, ["custom", "http_get"], index["calculator"], "checked", True) == [
        "calculator", "http_get", "custom"]  # unknown values stay, after the options
    assert add_row(tools, ["calculator"]) == ["calculator", "current_datetime"]
    assert remove_row(tools, ["calculator", "http_get"], 0) == ["http_get"]
    with pytest.raises(FieldError, match="every option is already chosen"):
        add_row(tools, [o.value for o in tools.options])


def test_rows_of_a_value_that_is_an_expression_cannot_be_edited_as_rows():
    with pytest.raises(FieldError, match="switch off the expression"):
        add_row(param("edit-fields", "fields"), "{{ $json.rows }}")


# 5. Settings ------------------------------------------------------------------------------------

def test_settings_parse_and_restore_defaults():
    settings = NodeSettings()
    assert parse_setting(settings, "error_mode", "error_output").error_mode == "error_output"
    retried = parse_setting(settings, "max_attempts", "3")
    assert retried.retry.max_attempts == 3 and settings.retry.max_attempts == 1
    assert parse_setting(retried, "max_attempts", "").retry.max_attempts == 1
    assert parse_setting(settings, "initial_interval", "0.5").retry.initial_interval == 0.5
    assert parse_setting(settings, "initial_interval", "0").retry.initial_interval == 0
    timed = parse_setting(settings, "timeout", "30")
    assert timed.timeout == 30.0
    assert parse_setting(timed, "timeout", "").timeout is None
    assert parse_setting(settings, "backoff_factor", "1.5").retry.backoff_factor == 1.5
    # The result is still a valid NodeSettings.
    NodeSettings.model_validate(parse_setting(retried, "timeout", "2").model_dump())


@pytest.mark.parametrize("key, raw, message", [
    ("error_mode", "ignore", r"^Error mode: 'ignore' is not one of stop, continue, error_output$"),
    ("max_attempts", "0", r"^Max attempts: enter a whole number from 1 to 20$"),
    ("max_attempts", "21", r"^Max attempts: enter a whole number from 1 to 20$"),
    ("max_attempts", "2.5", r"^Max attempts: enter a whole number from 1 to 20$"),
    ("max_attempts", "many", r"^Max attempts: 'many' is not a number$"),
    ("initial_interval", "-1", r"^Wait between retries: -1 is below the minimum 0$"),
    ("timeout", "0", r"^Timeout: 0 must be more than 0 seconds \(empty: no limit\)$"),
    ("timeout", "inf", r"^Timeout: inf is not a finite number$"),
    ("backoff_factor", "0.5", r"^Backoff factor: 0.5 is below the minimum 1$"),
    ("colour", "red", r"^unknown setting 'colour'"),
])
def test_bad_settings_say_what_is_wrong(key, raw, message):
    with pytest.raises(FieldError, match=message):
        parse_setting(NodeSettings(), key, raw)


def test_settings_texts():
    settings = NodeSettings(error_mode="continue", retry=RetryPolicy(max_attempts=3, initial_interval=0.5), timeout=10)
    view = view_of(node("a", "agent").model_copy(update={"settings": settings}))
    assert view.settings["error_mode"] == "continue"
    assert view.settings["max_attempts"] == "3"
    assert view.settings["initial_interval"] == "0.5"
    assert view.settings["timeout"] == "10.0"
    assert view_of(node("a", "agent")).settings["timeout"] == ""


# 6. What is stored passes the normalizer -----------------------------------------------------------

def test_values_built_here_pass_the_graph_normalizer():
    #   Chat --> Switch (conditions edited here) --> Edit (fields edited here)
    switch = param("switch", "conditions")
    conditions = set_row_field(switch, add_row(switch, []), 0, "operator", "contains")
    fields = param("edit-fields", "fields")
    rows = set_row_field(fields, add_row(fields, []), 0, "name", "x")
    nodes = [node("chat", "chat-start", "Chat"), node("sw", "switch", "Switch", conditions=conditions),
             node("ed", "edit-fields", "Edit", fields=rows),
             node("ag", "agent", "Agent", temperature=parse_field(param("agent", "temperature"), "0.2"))]
    nodes[3] = nodes[3].model_copy(update={"settings": parse_setting(NodeSettings(), "timeout", "5")})
    graph = Graph(nodes=nodes, edges=[flow("chat", "sw"), flow("sw", "ed", "condition-0"), flow("ed", "ag")])
    _, issues = normalize(graph, REGISTRY)
    assert issues == []


def test_rows_come_back_as_plain_lists_and_dicts_even_from_wrapped_values():
    """EditorState hands in values read through Reflex's state proxies; what comes back is stored and serialized."""
    wrapt = pytest.importorskip("wrapt")

    def wrapped(value):
        if isinstance(value, dict):
            return wrapt.ObjectProxy({k: wrapped(v) for k, v in value.items()})
        if isinstance(value, list):
            return wrapt.ObjectProxy([wrapped(v) for v in value])
        return value

    def plain(value) -> bool:
        if isinstance(value, dict):
            return type(value) is dict and all(plain(v) for v in value.values())
        if isinstance(value, list):
            return type(value) is list and all(plain(v) for v in value)
        return True

    fields, conditions = param("edit-fields", "fields"), param("switch", "conditions")
    rows = wrapped([{"name": "a", "value": {"nested": [1]}}])
    assert plain(add_row(fields, rows))
    assert plain(set_row_field(fields, rows, 0, "name", "b"))
    assert plain(remove_row(fields, wrapped([{"name": "a", "value": 1}, {"name": "b", "value": [2]}]), 0))
    assert plain(set_row_field(conditions, wrapped([{"field": "x", "operator": "equals", "value": ""}]), 0, "value", "1"))
    assert plain(set_row_field(param("toolset", "tool_names"), wrapped(["http_get"]), 0, "checked", True))
    assert plain(add_row(param("prompt-template", "variables"), wrapped({"k": {"v": [1]}})))


@pytest.mark.parametrize("text, problem", [
    ("{{ $json.items[²] }}", "expected a quoted key or a whole number inside [ ], found '²' at column 16"),
    ("{{ $json.items[①] }}", "expected a quoted key or a whole number inside [ ], found '①' at column 16"),
    ("{{ $json.a[" + "9" * 5000 + "] }}", "the number is too long (an index has at most 18 digits) at column 12"),
])
def test_the_inspector_shows_an_unreadable_expression_as_a_problem_never_a_crash(text, problem):
    errors = view_of(node("a", "agent", instructions=text)).errors
    assert errors["instructions"].startswith(problem)


@pytest.mark.parametrize("text, problem", [
    ("[" * 5000 + "]" * 5000, "Test payload: the JSON is nested deeper than 100 levels (the limit)"),
    ('{"a": ' * 150 + "1" + "}" * 150, "Test payload: $.a.a.a.a.a.a.…(100 steps in all)….a.a.a.a: nested deeper than 100 "
                                       "levels (the limit)"),
    ("1" * 5000, "Test payload: a whole number of over 4,300 digits is not valid JSON"),
    ("NaN", "Test payload: NaN is not valid JSON"),
])
def test_json_that_cannot_travel_is_refused_with_a_clear_error(text, problem):
    with pytest.raises(FieldError) as caught:
        parse_field(param("manual-trigger", "payload"), text)
    assert str(caught.value) == problem


@pytest.mark.parametrize(("raw", "kept"), [
    ("7.5", 7.5), ("-5", -5), ("2.0", 2.0), ("abc", "abc"), (" 1e999 ", "1e999"), ("", None), ([3], 3),
])
def test_typed_number_keeps_what_was_typed(raw, kept):
    from nodeflow_app.editor.fields import typed_number

    assert typed_number(raw) == kept and type(typed_number(raw)) is type(kept)


def test_a_kept_invalid_number_shows_as_typed_with_its_problem():
    view = view_of(node("a", "agent", temperature="abc"))
    assert view.texts["temperature"] == "abc"
    assert view.errors["temperature"] == "expected float, got str 'abc'"


def test_a_model_whose_provider_is_not_configured_is_a_warning(monkeypatch, tmp_path):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("NODEFLOW_DATA_DIR", str(tmp_path))
    view = view_of(node("a", "agent", model="openai:gpt-4o-mini"))
    assert "model" not in view.errors
    assert view.warnings["model"].startswith("OpenAI is not configured")


def test_output_fields_are_expressions_that_read_the_last_output():
    from nodeflow_app.editor.fields import output_fields
    from nodeflow_app.runtime.expressions import render

    output = {"message": "hi", "user": {"name": "Ada", "tags": ["a", "b"]}, "odd key": 3}
    fields_ = output_fields("Chat Start", output)
    assert [(f["path"], f["preview"]) for f in fields_] == [
        ("message", "hi"), ("user.name", "Ada"), ("user.tags[0]", "a"), ('["odd key"]', "3")]

    class Scope:  # every expression reads the value it was offered for
        def node_output(self, name):
            assert name == "Chat Start"
            return output

        def direct_input(self):
            return None

        def trigger_output(self):
            return None

    assert [render(f["expression"], Scope()) for f in fields_] == ["hi", "Ada", "a", 3]
    assert output_fields("It's", "plain")[0]["expression"] == '{{ $("It\'s").item.json }}'
    assert len(output_fields("N", {f"k{i}": i for i in range(50)})) == 20


def test_json_that_is_not_json_is_kept_as_typed_and_numbers_as_typed_number():
    from nodeflow_app.editor.fields import kept_as_typed
    from nodeflow_app.runtime.graph import INVALID_JSON

    payload = param("manual-trigger", "payload")
    assert kept_as_typed(payload, '{"a": 1') == {INVALID_JSON: '{"a": 1'}
    assert kept_as_typed(payload, "   ") is None  # nothing typed: nothing to keep
    assert kept_as_typed(param("agent", "temperature"), "warm") == "warm"
    assert kept_as_typed(param("llm-completion", "prompt"), "x") is None


def test_a_kept_invalid_json_text_shows_as_typed_with_the_error_it_had_when_typed():
    from nodeflow_app.runtime.graph import invalid_json

    view = view_of(node("m", "manual-trigger", payload=invalid_json('{"a": 1')))
    assert view.texts["payload"] == '{"a": 1'
    with pytest.raises(FieldError) as typed:
        parse_field(param("manual-trigger", "payload"), '{"a": 1')
    assert view.errors["payload"] == str(typed.value)
    assert view.errors["payload"].startswith("Test payload: invalid JSON at line 1, column 8")
