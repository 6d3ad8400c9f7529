"""The inspector builds from every registered definition, with one control per parameter (by test id)."""

from __future__ import annotations

import re

import pytest
from reflex.compiler.compiler import compile_page

from nodeflow_app.components.inspector import inspector, model_refs, node_form, settings_section
from nodeflow_app.editor.fields import accepts_expression
from nodes._registry import default_registry
from nodeflow_app.contract import NodeDefinition, Option, Parameter, Socket

DEFINITIONS = default_registry().definitions()


def ids_in(rendered: str) -> set[str]:
    return set(re.findall(r'"data-testid":"([^"]+)"', rendered))


def element(rendered: str, testid: str) -> tuple[str, str]:
    """(tag, props text) of the last element carrying `testid` (after the expression editor, if any)."""
    at = rendered.rindex(f'"data-testid":"{testid}"')
    start = rendered.rindex("jsx(", 0, at) + 4
    tag = rendered[start:rendered.index(",", start)]
    end = rendered.find("jsx(", at)
    return tag, rendered[start:end if end != -1 else len(rendered)]


@pytest.fixture(scope="module")
def page() -> str:
    """The inspector over every definition, compiled as Reflex compiles a page."""
    return compile_page("inspector-test", inspector(DEFINITIONS))[1]


def test_the_whole_inspector_compiles_with_its_panel_empty_state_and_settings(page):
    ids = ids_in(page)
    assert {"inspector", "inspector-empty", "inspector-name", "inspector-settings"} <= ids
    assert {f"setting-{key}" for key in ("error_mode", "max_attempts", "initial_interval", "timeout")} <= ids
    assert "Select a node to edit it" in page
    # One form per node type, chosen by the selected type.
    assert {f"inspector-form-{d.id}" for d in DEFINITIONS} <= ids


@pytest.mark.parametrize("definition", DEFINITIONS, ids=lambda d: d.id)
def test_every_parameter_has_its_control_and_expression_toggle(definition: NodeDefinition):
    rendered = str(node_form(definition))
    ids = ids_in(rendered)
    for parameter in definition.parameters:
        if parameter.mode == "output":
            assert f"field-{parameter.id}" not in ids
            continue
        assert f"field-{parameter.id}" in ids, parameter.id
        assert f"param-{parameter.id}" in ids, parameter.id
        assert (f"expr-{parameter.id}" in ids) == accepts_expression(parameter), parameter.id
        assert parameter.label in rendered


def test_controls_are_the_right_kind():
    agent = str(node_form(default_registry().definition("agent")))
    assert element(agent, "field-markdown")[0] == "RadixThemesSwitch"
    assert element(agent, "field-reasoning_effort")[0] == "RadixThemesSelect.Trigger"
    tag, props = element(agent, "field-temperature")
    # A text input: a number input would empty itself on letters (which then vanish without a word).
    assert tag == "RadixThemesTextField.Root" and 'inputMode:"decimal"' in props and "type:" not in props
    assert "set_number_draft" in props  # the slider follows the text as it is typed
    assert element(agent, "field-instructions")[0] == "RadixThemesTextArea"
    assert 'list:"nodeflow-model-refs"' in element(agent, "field-model")[1]
    assert "slider-temperature" in agent  # min and max: a slider beside the number
    assert "slider-tool_call_limit" not in agent  # min only
    switch = str(node_form(default_registry().definition("switch")))
    assert {"row-conditions-field", "row-conditions-operator", "row-conditions-value", "add-conditions",
            "remove-conditions", "item-conditions"} <= ids_in(switch)
    assert '"is greater than"' in switch  # the operator select lists the option labels
    prompt = str(node_form(default_registry().definition("prompt-template")))
    assert {"row-variables-name", "row-variables-value", "add-variables", "remove-variables"} <= ids_in(prompt)
    toolset = str(node_form(default_registry().definition("toolset")))
    assert {f"option-tool_names-{v}" for v in ("calculator", "http_get")} <= ids_in(toolset)
    structured = str(node_form(default_registry().definition("structured-output")))
    assert "JSON editor" in structured


def test_model_suggestions_cover_every_provider(page):
    refs = model_refs()
    assert "openai:gpt-4o-mini" in refs
    assert {ref.split(":", 1)[0] for ref in refs} == {"openai", "anthropic", "google", "groq", "ollama", "openrouter",
                                                       "openai-compatible"}
    assert "model_options" in page  # the datalist follows the install's configured providers


def test_configured_providers_models_come_first_and_the_others_are_marked():
    from nodeflow_app.provider_settings import default_model, model_choices

    choices = model_choices(["openai-compatible"])
    assert choices[0] == {"value": "openai-compatible:local-model", "label": "OpenAI-compatible URL"}
    assert {"value": "openai:gpt-4o-mini", "label": "OpenAI (not configured)"} in choices
    assert default_model(["openai-compatible"], "openai:gpt-4o-mini") == "openai-compatible:local-model"
    assert default_model(["openai", "groq"], "openai:gpt-4o-mini") is None
    assert default_model([], "openai:gpt-4o-mini") is None


def test_a_new_node_type_gets_a_form_without_inspector_code():
    plugin = NodeDefinition(
        id="plugin-thing", name="Plugin Thing", description="A node from a plugin folder.", category="utility",
        inputs=(Socket(id="input"),), outputs=(Socket(id="output", side="right"),),
        parameters=(
            Parameter(id="level", label="Level", type="int", default=3, min=1, max=5),
            Parameter(id="source", label="Source", type="text", mode="input"),
            Parameter(id="mode", label="Mode", type="select", default="a", options=(Option(value="a"), Option(value="b"))),
            Parameter(id="snippet", label="Snippet", type="code", default="", expressions=False),
            Parameter(id="tags", label="Tags", type="list", default=[]),
            Parameter(id="result", label="Result", type="string", mode="output"),
        ),
    )
    ids = ids_in(str(node_form(plugin)))
    assert {"field-level", "slider-level", "field-source", "field-mode", "field-snippet", "field-tags",
            "row-tags-value", "add-tags"} <= ids
    assert "field-result" not in ids
    assert "expr-snippet" not in ids and "expr-source" not in ids and "expr-level" in ids


def test_settings_name_their_choices():
    rendered = str(settings_section())
    for label in ("Stop the run", "Route to error output", "Retries (max attempts)", "Wait between retries (s)",
                  "Timeout (s)"):
        assert label in rendered
