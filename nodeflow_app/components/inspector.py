"""The inspector: the selected node's name, parameters and run settings, on the right of the editor.

Its structure is generated at compile time from the registry's definitions (one form per node type,
picked with `rx.match` on `EditorState.selected_type`), so every control is the right kind with its
options, bounds and item fields built in; the values come from EditorState's small view vars
(filled by `nodeflow_app.editor.fields.field_view`). No per-node-type code: a new node folder gets
its form automatically.

Text controls are uncontrolled (`default_value`): a text field is saved a moment after the last keystroke
(`type_field`, debounced, as n8n saves as you type) and when it is left (`on_blur`, or Enter in a one-line
input); numbers, names and secrets only when left. Keys come from `EditorState.field_keys`, which change
with the selection, on undo, when rows are added or removed, and for the fields someone else's edit changed,
so those controls remount with the new values while a field being typed in keeps its text (secrets have keys of
their own, `EditorState.secret_keys`, which change when the stored secret does); numbers also carry
their own text, so moving a slider remounts them. Before the page is left with text the room does not have
yet, the field is left (which sends it) and the browser asks (`UNSENT_GUARD`).
"""

from __future__ import annotations

from collections.abc import Sequence

import reflex as rx
from reflex_base.vars.function import FunctionVar

from nodeflow_app.components.palette import icon_name
from nodeflow_app.components.run_panel import run_to_here_button
from nodeflow_app.components.theme import BORDER, PANEL_BG
from nodeflow_app.components.trigger_panel import trigger_panel
from nodeflow_app.editor.fields import (
    CHECKED_FIELD, KEY_FIELD, SECRET_SET_FIELD, VALUE_FIELD, accepts_expression, option_flag,
)
from nodeflow_app.provider_settings import SUGGESTED_MODELS
from nodeflow_app.llm.providers import PROVIDERS
from nodeflow_app.state.editor_state import EditorState
from nodeflow_app.contract import ERROR_MODES, NodeDefinition, Parameter

INSPECTOR_WIDTH = "340px"
MONO = "var(--code-font-family, ui-monospace, SFMono-Regular, Menlo, monospace)"
MODEL_LIST_ID = "nodeflow-model-refs"
_ERROR_MODE_TEXT = {"stop": "Stop the run", "continue": "Continue (error as output)",
                    "error_output": "Route to error output"}
ERROR_MODE_LABELS = tuple((mode, _ERROR_MODE_TEXT[mode]) for mode in ERROR_MODES)  # the modes are the contract's
# Numbers are typed into text inputs: a `type=number` input empties itself on letters, which then vanish
# without a word; as text they reach the server, which says what is wrong.
NUMBER_TEXT = {"inputMode": "decimal", "autoComplete": "off"}
# Enter in a one-line input leaves it, which commits it through on_blur.
BLUR_ON_ENTER = rx.Var(_js_expr="((e) => { if (e.key === 'Enter') { e.currentTarget.blur(); } })")
# A text field is saved this long after its last keystroke (one event per pause, not per keystroke).
TYPING_MS = 500
# Leaving the page (reload, close, another address) with a text field whose text the room does not have yet
# (typed a moment ago, JSON not valid yet, a number or a name not left yet): the field is left, which sends it,
# and the browser asks whether to leave. A field's `defaultValue` is the text the server last sent for it, so
# the room has what it shows (give or take surrounding blanks, or JSON written differently: `1.50` for 1.5).
# In the page's head (`unsent_guard`), so it listens before Reflex, which closes the websocket on beforeunload:
# the save goes out first, and while the browser asks the socket stays open (pagehide closes it if the page
# does go). Closed, a "Stay" left the page offline until its next event, whose reconnect reloaded the graph
# and emptied the inspector. (No <, > or & in it: it is the text of a script element.)
UNSENT_GUARD = """
window.addEventListener('beforeunload', function (event) {
  var panel = document.querySelector('[data-testid="inspector"]');
  var typed = 'textarea, input:not([type]), input[type="text"], input[type="password"]';
  var controls = panel ? panel.querySelectorAll(typed) : [];
  var same = function (a, b) {
    if (a.trim() === b.trim()) return true;
    try { return JSON.stringify(JSON.parse(a)) === JSON.stringify(JSON.parse(b)); } catch (e) { return false; }
  };
  var unsent = Array.prototype.filter.call(controls, function (c) {
    return c.disabled ? false : !same(c.value, c.defaultValue);
  });
  if (unsent.length === 0) return;
  if (unsent.indexOf(document.activeElement) !== -1) document.activeElement.blur();
  event.stopImmediatePropagation();
  event.preventDefault();
  event.returnValue = '';
});
"""


def model_refs() -> list[str]:
    """`provider:model` suggestions, for every known provider."""
    return [f"{provider}:{model}" for provider in PROVIDERS for model in SUGGESTED_MODELS.get(provider, ())]


def unsent_guard() -> rx.Component:
    """For the app's head: see UNSENT_GUARD."""
    return rx.el.script(UNSENT_GUARD)


def _testid(name: str, **more: object) -> dict[str, object]:
    return {"data-testid": name, **more}


def _key(*parts: object) -> rx.Var:
    """A React key under the current form (see the module docstring)."""
    key = EditorState.form_key
    for part in parts:
        key = key + (part if isinstance(part, rx.Var) else str(part))
    return key


def _field_key(pid: str) -> rx.Var:
    """The React key of a parameter's control, and what its saves send (see EditorState.field_keys)."""
    return EditorState.field_keys[pid]


def _saves(pid: str) -> dict[str, object]:
    """A text field's events: saved while it is typed in (a moment after the last keystroke) and when left.
    (Reflex debounces by event name: a pending save of a field left for another one was sent by its on_blur.)"""
    key = _field_key(pid)
    return {"on_blur": lambda value: EditorState.set_field(pid, value, key),
            "on_change": lambda value: EditorState.type_field(pid, value, key).debounce(TYPING_MS)}


def _wired(pid: str) -> rx.Var:
    return EditorState.field_wired[pid].bool()


def _text(pid: str) -> rx.Var:
    return EditorState.field_texts[pid]


# 1. Controls of one parameter ------------------------------------------------------------------

def _one_line_input(value: rx.Var, on_blur, key: rx.Var, placeholder: str = "", *,
                    testid: str, disabled: rx.Var | bool = False, **props) -> rx.Component:
    attrs = _testid(testid, onKeyDown=BLUR_ON_ENTER, **props.pop("attrs", {}))
    props.setdefault("width", "100%")
    return rx.input(default_value=value, on_blur=on_blur, key=key, placeholder=placeholder, disabled=disabled,
                    size="2", custom_attrs=attrs, **props)


def _text_area(value: rx.Var, on_blur, key: rx.Var, placeholder: str = "", *, testid: str, mono: bool = False,
               rows: str = "4", disabled: rx.Var | bool = False, on_change=None, aria_label: str = "") -> rx.Component:
    return rx.text_area(
        default_value=value, on_blur=on_blur, key=key, placeholder=placeholder, rows=rows, disabled=disabled,
        aria_label=aria_label or None,
        width="100%", resize="vertical", spell_check=False if mono else None,
        style={"fontFamily": MONO, "fontSize": "12px"} if mono else {},
        custom_attrs=_testid(testid), **({"on_change": on_change} if on_change is not None else {}),
    )


def _typed_text_area(pid: str, value: rx.Var, key: rx.Var, placeholder: str = "", **props) -> rx.Component:
    """A parameter's text area, saved while it is typed in and when left."""
    saves = _saves(pid)
    return _text_area(value, saves["on_blur"], key, placeholder, on_change=saves["on_change"], **props)


def _select(options: Sequence[tuple[str, str]], value: rx.Var, on_change, *, testid: str, aria_label: str,
            disabled: rx.Var | bool = False, placeholder: str = "Choose…") -> rx.Component:
    return rx.select.root(
        rx.select.trigger(placeholder=placeholder, width="100%", aria_label=aria_label, custom_attrs=_testid(testid)),
        rx.select.content(*(rx.select.item(label, value=value_) for value_, label in options)),
        value=value, on_change=on_change, disabled=disabled, size="2",
    )


def _install_select(parameter: Parameter, on_change, *, testid: str, disabled: rx.Var | bool) -> rx.Component:
    """A select whose options the install provides (`Parameter.choices`, e.g. the declared MCP servers)."""
    choices = EditorState.choice_options[parameter.choices]
    return rx.cond(
        choices.length() > 0,
        rx.select.root(
            rx.select.trigger(placeholder="Choose…", width="100%", aria_label=parameter.label,
                              custom_attrs=_testid(testid)),
            rx.select.content(rx.foreach(choices, lambda c: rx.select.item(c[1], value=c[0]))),
            value=_text(parameter.id), on_change=on_change, disabled=disabled, size="2",
        ),
        rx.text("None declared by this install yet (see docs/security.md).", size="1", color_scheme="amber",
                custom_attrs=_testid(testid)),
    )


def _options(parameter: Parameter) -> list[tuple[str, str]]:
    return [(_option_text(o.value), o.label or _option_text(o.value)) for o in parameter.options]


def _option_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _number(parameter: Parameter, text: rx.Var, on_commit, key: rx.Var, *, testid: str,
            disabled: rx.Var | bool = False) -> rx.Component:
    """A text input (a `type=number` input empties itself on letters, which then vanish without a word),
    with a slider beside it when the parameter is bounded; the slider follows the text as it is typed."""
    slider = _has_slider(parameter)
    extra = {"on_change": lambda value: EditorState.set_number_draft(parameter.id, value)} if slider else {}
    number_input = _one_line_input(
        text, on_commit, key + text, parameter.placeholder or ("default" if parameter.default is None else ""),
        testid=testid, disabled=disabled, width="96px" if slider else "100%", flex_shrink="0",
        attrs=NUMBER_TEXT, aria_label=parameter.label, **extra,
    )
    if not slider:
        return number_input
    draft = EditorState.number_drafts[parameter.id]
    shown = rx.cond(draft.is_not_none(), draft, text)
    bounded = rx.Var(f"((t) => {{ const n = Number(t); return (t === '' || !isFinite(n)) ? {parameter.min!r} : "
                     f"Math.min({parameter.max!r}, Math.max({parameter.min!r}, n)); }})").to(FunctionVar)
    return rx.hstack(number_input, rx.slider(
        default_value=bounded.call(shown).to(float),
        min=parameter.min, max=parameter.max, step=parameter.step or (1 if parameter.type == "int" else 0.01),
        on_value_commit=lambda value: EditorState.set_field(parameter.id, value[0]),
        key=key + "slider" + text + "|" + shown, disabled=disabled, size="1",
        # The mouse's shortcut to the named text field beside it: out of the tab order and the accessibility tree
        # (Radix Themes gives its thumb no name, so a screen reader would meet an unnamed second control).
        custom_attrs=_testid(f"slider-{parameter.id}", tabIndex="-1", **{"aria-hidden": "true"}),
    ), align="center", spacing="3", width="100%")


# A slider beyond this many steps cannot pick a value (1 to 100,000 is a few hundred per pixel): type it.
SLIDER_STEPS = 1000


def _has_slider(parameter: Parameter) -> bool:
    if parameter.type not in ("int", "float") or parameter.min is None or parameter.max is None:
        return False
    step = parameter.step or (1 if parameter.type == "int" else 0.01)
    return (parameter.max - parameter.min) / step <= SLIDER_STEPS


def control(parameter: Parameter) -> rx.Component:
    """The inline control of a parameter, chosen by its type (`data-testid="field-<id>"`), named by its label."""
    pid, kind, name = parameter.id, parameter.type, parameter.label
    testid, disabled = f"field-{pid}", _wired(pid)
    commit = lambda value: EditorState.set_field(pid, value)  # noqa: E731 - switches, selects, secrets
    saves, key = _saves(pid), _field_key(pid)
    if kind == "boolean":
        return rx.switch(checked=EditorState.field_flags[pid], on_change=commit, disabled=disabled, aria_label=name,
                         custom_attrs=_testid(testid))
    if kind == "select" and parameter.choices:
        return _install_select(parameter, commit, testid=testid, disabled=disabled)
    if kind == "select":
        return _select(_options(parameter), _text(pid), commit, testid=testid, aria_label=name, disabled=disabled)
    if kind in ("int", "float"):
        return _number(parameter, _text(pid), saves["on_blur"], key, testid=testid, disabled=disabled)
    if kind in ("text", "code"):
        return _typed_text_area(pid, _text(pid), key, parameter.placeholder, testid=testid, mono=kind == "code",
                                rows="8" if kind == "code" else "4", disabled=disabled, aria_label=name)
    if kind == "json":
        return rx.vstack(
            _typed_text_area(pid, _text(pid), key, parameter.placeholder or "{}", testid=testid, mono=True, rows="6",
                             disabled=disabled, aria_label=name),
            rx.text("JSON editor: saved as you type once it is valid JSON, checked when you leave the field.",
                    size="1", color_scheme="gray"),
            spacing="1", width="100%",
        )
    if kind == "key_value":
        return _key_value_rows(parameter)
    if kind == "list" and parameter.fields:
        return _item_cards(parameter)
    if kind == "list" and parameter.options:
        return _option_checkboxes(parameter)
    if kind == "list":
        return _scalar_rows(parameter)
    if parameter.secret:
        return _secret_input(pid, commit, testid=testid, disabled=disabled, aria_label=name)
    attrs = {"list": MODEL_LIST_ID, "autoComplete": "off"} if kind == "model" else {}
    return _one_line_input(_text(pid), saves["on_blur"], key, parameter.placeholder, testid=testid, disabled=disabled,
                           attrs=attrs, on_change=saves["on_change"], aria_label=name)


def _secret_input(pid: str, commit, *, testid: str, disabled: rx.Var | bool, aria_label: str) -> rx.Component:
    """A one-line secret: never shown; says whether it is set; typing replaces it, leaving it empty keeps it.
    Its key (`EditorState.secret_keys`) changes when the stored secret does: the typed text does not stay in the page
    once it is stored, and stays while others edit other fields."""
    is_set = EditorState.field_flags[pid]
    return _one_line_input(
        "", commit, EditorState.secret_keys[pid],
        rx.cond(is_set, "•••• set (type to replace)", "secret value"), testid=testid, disabled=disabled,
        type="password", aria_label=aria_label, attrs={"autoComplete": "new-password", "data-secret-set": is_set.to_string()},
    )


def _remove_button(pid: str, index: rx.Var) -> rx.Component:
    return rx.icon_button(
        rx.icon("x", size=14), on_click=EditorState.remove_row(pid, index), variant="ghost", color_scheme="gray",
        size="1", title="Remove", aria_label="Remove", custom_attrs=_testid(f"remove-{pid}"),
    )


def _add_button(pid: str, label: str = "Add") -> rx.Component:
    return rx.button(rx.icon("plus", size=14), label, on_click=EditorState.add_row(pid), variant="soft",
                     size="1", custom_attrs=_testid(f"add-{pid}"))


def _cell_key(pid: str, index: rx.Var, field_id: str) -> rx.Var:
    return _field_key(pid) + ":" + index.to_string() + ":" + field_id


def _cell_saves(pid: str, index: rx.Var, field_id: str) -> dict[str, object]:
    """A row cell's events: saved while it is typed in (a moment after the last keystroke) and when left."""
    key = _field_key(pid)
    return {"on_blur": lambda raw: EditorState.set_row_field(pid, index, field_id, raw, key),
            "on_change": lambda raw: EditorState.type_row_field(pid, index, field_id, raw, key).debounce(TYPING_MS)}


def _cell_input(pid: str, row: rx.Var, index: rx.Var, field_id: str, placeholder: str, testid: str,
                **props) -> rx.Component:
    saves = _cell_saves(pid, index, field_id)
    return _one_line_input(row[field_id].to(str), saves["on_blur"], _cell_key(pid, index, field_id), placeholder,
                           testid=testid, on_change=saves["on_change"], **props)


def _secret_cell(pid: str, row: rx.Var, index: rx.Var, aria_label: str) -> rx.Component:
    """A secret value: never shown; says whether it is set; typing replaces it, leaving it empty keeps it (keyed as
    `_secret_input`)."""
    is_set = row[SECRET_SET_FIELD].to(str) == "true"
    return _one_line_input(
        "", lambda raw: EditorState.set_row_field(pid, index, VALUE_FIELD, raw),
        EditorState.secret_keys[pid] + ":" + index.to_string(),
        rx.cond(is_set, "•••• set (type to replace)", "secret value"), testid=f"row-{pid}-value",
        type="password", aria_label=aria_label, attrs={"autoComplete": "new-password", "data-secret-set": is_set.to_string()},
    )


def _key_value_rows(parameter: Parameter) -> rx.Component:
    pid = parameter.id

    def row_view(row: rx.Var, index: rx.Var) -> rx.Component:
        value_name = f"{parameter.label}: value"
        value = (_secret_cell(pid, row, index, value_name) if parameter.secret
                 else _cell_input(pid, row, index, VALUE_FIELD, "value", f"row-{pid}-value", aria_label=value_name))
        return rx.hstack(
            _cell_input(pid, row, index, KEY_FIELD, "name", f"row-{pid}-name", aria_label=f"{parameter.label}: name"),
            value,
            _remove_button(pid, index),
            align="center", spacing="2", width="100%",
        )

    return rx.vstack(
        rx.foreach(EditorState.field_rows[pid], row_view),
        _add_button(pid),
        spacing="2", width="100%", custom_attrs=_testid(f"field-{pid}"),
    )


def _scalar_rows(parameter: Parameter) -> rx.Component:
    pid = parameter.id

    def row_view(row: rx.Var, index: rx.Var) -> rx.Component:
        return rx.hstack(
            _cell_input(pid, row, index, VALUE_FIELD, parameter.placeholder, f"row-{pid}-value",
                        aria_label=parameter.label),
            _remove_button(pid, index),
            align="center", spacing="2", width="100%",
        )

    return rx.vstack(
        rx.foreach(EditorState.field_rows[pid], row_view),
        _add_button(pid),
        spacing="2", width="100%", custom_attrs=_testid(f"field-{pid}"),
    )


def _item_field(pid: str, spec: Parameter, row: rx.Var, index: rx.Var) -> rx.Component:
    """One field of one list item, by the field's type (select fields are selects)."""
    testid = f"row-{pid}-{spec.id}"
    commit = lambda raw: EditorState.set_row_field(pid, index, spec.id, raw)  # noqa: E731
    value = row[spec.id].to(str)
    if spec.type == "select":
        inner = _select(_options(spec), value, commit, testid=testid, aria_label=spec.label)
    elif spec.type == "boolean":
        inner = rx.switch(checked=value == "true", on_change=commit, aria_label=spec.label,
                          custom_attrs=_testid(testid))
    elif spec.type in ("text", "code", "json"):
        saves = _cell_saves(pid, index, spec.id)
        inner = _text_area(value, saves["on_blur"], _cell_key(pid, index, spec.id), spec.placeholder, testid=testid,
                           mono=spec.type != "text", rows="2", on_change=saves["on_change"], aria_label=spec.label)
    else:
        extra = {"attrs": NUMBER_TEXT} if spec.type in ("int", "float") else {}
        inner = _cell_input(pid, row, index, spec.id, spec.placeholder, testid, aria_label=spec.label, **extra)
    return rx.vstack(rx.text(spec.label, size="1", color_scheme="gray"), inner, spacing="1", width="100%")


def _item_cards(parameter: Parameter) -> rx.Component:
    pid = parameter.id

    def card(row: rx.Var, index: rx.Var) -> rx.Component:
        return rx.card(
            rx.vstack(
                rx.hstack(
                    rx.text("#", (index + 1).to_string(), size="1", weight="bold", color_scheme="gray"),
                    rx.spacer(),
                    _remove_button(pid, index),
                    align="center", width="100%",
                ),
                *(_item_field(pid, spec, row, index) for spec in parameter.fields),
                spacing="2", width="100%",
            ),
            size="1", width="100%", custom_attrs=_testid(f"item-{pid}"),
        )

    return rx.vstack(
        rx.foreach(EditorState.field_rows[pid], card),
        _add_button(pid),
        spacing="2", width="100%", custom_attrs=_testid(f"field-{pid}"),
    )


def _option_checkboxes(parameter: Parameter) -> rx.Component:
    pid = parameter.id
    return rx.vstack(
        *(
            rx.checkbox(
                option.label or _option_text(option.value),
                checked=EditorState.field_flags[option_flag(pid, option.value)],
                on_change=lambda checked, index=index: EditorState.set_row_field(pid, index, CHECKED_FIELD, checked),
                disabled=_wired(pid), size="2",
                custom_attrs=_testid(f"option-{pid}-{option.value}"),
            )
            for index, option in enumerate(parameter.options)
        ),
        spacing="2", width="100%", custom_attrs=_testid(f"field-{pid}"),
    )


# 2. Expressions -------------------------------------------------------------------------------

def expression_toggle(pid: str) -> rx.Component:
    on = EditorState.field_expression[pid].bool()
    return rx.button(
        "fx", on_click=EditorState.toggle_expression(pid), size="1", variant=rx.cond(on, "solid", "soft"),
        color_scheme=rx.cond(on, "amber", "gray"), title="Use an expression ({{ … }})",
        style={"fontFamily": MONO, "fontStyle": "italic", "padding": "0 6px", "height": "20px"},
        custom_attrs=_testid(f"expr-{pid}", **{"aria-pressed": on}),
    )


def expression_editor(parameter: Parameter) -> rx.Component:
    pid = parameter.id
    return rx.vstack(
        _typed_text_area(pid, _text(pid), _field_key(pid) + "-fx", "{{ $json.field }}", testid=f"field-{pid}",
                         mono=True, rows="3", disabled=_wired(pid), aria_label=f"{parameter.label} (expression)"),
        inspector_expression_hint(),
        spacing="1", width="100%",
    )


# Clicking an upstream chip or field inserts its expression where the cursor is in the inspector's text
# field (mousedown keeps the focus there); with no such field focused it is copied, and the hint says so.
KEEP_FOCUS = rx.Var(_js_expr="((e) => e.preventDefault())")
INSERT_EXPRESSION = rx.Var(_js_expr="""((e) => {
  const ref = e.currentTarget.dataset.expression;
  const field = document.activeElement;
  const panel = document.querySelector('[data-testid="inspector"]');
  const note = panel && panel.querySelector('[data-testid="expression-inserted"]');
  const typeable = field && (field.tagName === 'TEXTAREA' || (field.tagName === 'INPUT' && field.type === 'text'));
  if (panel && typeable && panel.contains(field) && !field.disabled && !field.readOnly) {
    field.setRangeText(ref, field.selectionStart, field.selectionEnd, 'end');
    field.dispatchEvent(new Event('input', { bubbles: true }));
    if (note) note.textContent = 'Inserted ' + ref;
    return;
  }
  if (navigator.clipboard) navigator.clipboard.writeText(ref);
  if (note) note.textContent = 'Copied ' + ref + ': paste it into a field';
})""")


def _insert_attrs(testid: str, expression: rx.Var) -> dict[str, object]:
    return _testid(testid, onMouseDown=KEEP_FOCUS, onClick=INSERT_EXPRESSION, **{"data-expression": expression})


def _upstream_chip(name: rx.Var) -> rx.Component:
    ref = "{{ $('" + name + "').item.json }}"
    return rx.badge(name, variant="surface", color_scheme="gray", cursor="pointer", title="Insert " + ref,
                    custom_attrs=_insert_attrs("upstream-name", ref))


def _output_field(row: rx.Var) -> rx.Component:
    """One field of an upstream node's last output: click inserts the expression that reads it."""
    return rx.hstack(
        rx.text(row["node"], size="1", color_scheme="gray", white_space="nowrap"),
        rx.el.code(row["path"], style={"fontFamily": MONO, "fontSize": "11px"}),
        rx.text(row["preview"], size="1", color_scheme="gray", overflow="hidden", text_overflow="ellipsis",
                white_space="nowrap", min_width="0", flex="1"),
        spacing="2", align="center", width="100%", cursor="pointer", padding="2px 4px",
        border_radius="var(--radius-1)", _hover={"background": "var(--gray-a3)"}, title=row["expression"],
        custom_attrs=_insert_attrs("upstream-field", row["expression"]),
    )


@rx.memo
def inspector_expression_hint() -> rx.Component:
    """The syntax of expressions, the upstream names and their last outputs' fields (one memo: every
    expression editor shows it)."""
    code = {"fontFamily": MONO, "fontSize": "11px"}
    return rx.vstack(
        rx.text(rx.el.code("{{ $json.x }}", style=code), " the direct input; ",
                rx.el.code("{{ $('Node').item.json.x }}", style=code), " any node upstream.", size="1",
                color_scheme="gray"),
        rx.cond(
            EditorState.upstream_names.length() > 0,
            rx.flex(rx.text("Upstream:", size="1", color_scheme="gray"), rx.foreach(EditorState.upstream_names,
                    _upstream_chip), wrap="wrap", gap="4px", align="center"),
            rx.text("No node upstream yet: wire one into this node's input.", size="1", color_scheme="gray"),
        ),
        rx.cond(
            EditorState.upstream_fields.length() > 0,
            rx.text("The fields of their last output are under Input, at the top.", size="1", color_scheme="gray"),
            rx.cond(EditorState.upstream_names.length() > 0,
                    rx.text("Run the graph once to pick fields of their output under Input.", size="1",
                            color_scheme="gray")),
        ),
        spacing="1", width="100%", custom_attrs=_testid("expression-hint"),
    )


@rx.memo
def inspector_input_panel() -> rx.Component:
    """Like n8n's input panel: what the upstream nodes gave in the graph's last runs, one row per field;
    a click inserts the expression that reads it where the cursor is (or copies it)."""
    return rx.cond(
        EditorState.upstream_fields.length() > 0,
        rx.el.details(
            rx.el.summary(rx.text("Input from the last run", as_="span", size="2", weight="bold"), cursor="pointer"),
            rx.vstack(
                rx.text("Click a field to insert its expression where the cursor is.", size="1",
                        color_scheme="gray"),
                rx.foreach(EditorState.upstream_fields, _output_field),
                spacing="0", width="100%", max_height="200px", overflow_y="auto", padding_top="6px",
            ),
            rx.text("", size="1", color_scheme="green", custom_attrs=_testid("expression-inserted")),
            open=True, width="100%", custom_attrs=_testid("upstream-fields"),
        ),
        rx.text("", size="1", color_scheme="green", custom_attrs=_testid("expression-inserted")),
    )


_OUTPUT_STYLE = {"fontFamily": MONO, "fontSize": "11px", "margin": 0, "padding": "6px 8px", "maxHeight": "240px",
                 "overflow": "auto", "background": "var(--gray-a3)", "borderRadius": "var(--radius-2)",
                 "whiteSpace": "pre-wrap", "wordBreak": "break-word", "width": "100%"}


@rx.memo
def inspector_output_panel() -> rx.Component:
    """Like n8n's output panel, under the input: what the node gave in the graph's latest run where it ran (its
    status, its output as JSON, or its whole error; the card shows one line of it)."""
    result = EditorState.node_result
    status = result["status"].to(str)
    return rx.cond(
        result.length() > 0,
        rx.el.details(
            rx.el.summary(rx.text("Output of the last run", as_="span", size="2", weight="bold"), cursor="pointer"),
            rx.vstack(
                rx.hstack(
                    rx.badge(status, color_scheme=rx.cond(status == "failed", "red", "green"), variant="soft",
                             custom_attrs=_testid("node-output-status")),
                    rx.text(result["started"], " · ", result["duration"], size="1", color_scheme="gray"),
                    spacing="2", align="center",
                ),
                rx.cond(result["error"].to(str) != "",
                        rx.el.pre(result["error"], style={**_OUTPUT_STYLE, "color": "var(--red-11)"},
                                  custom_attrs=_testid("node-output-error"))),
                rx.cond(result["output"].to(str) != "",
                        rx.el.pre(result["output"], style=_OUTPUT_STYLE, custom_attrs=_testid("node-output-json"))),
                rx.cond(result["cut"].to(str) != "",
                        rx.button("Show all", on_click=EditorState.show_whole_output, size="1", variant="soft",
                                  custom_attrs=_testid("node-output-more"))),
                spacing="2", width="100%", padding_top="6px",
            ),
            open=True, width="100%", custom_attrs=_testid("node-output"),
        ),
        rx.text("No output yet: Run to here shows what this node gives.", size="1", color_scheme="gray",
                custom_attrs=_testid("node-output-none")),
    )


# 3. A parameter with its label, help, wire and problem ---------------------------------------

def _input_only(parameter: Parameter) -> rx.Component:
    """A socket-only parameter: its value comes from a wire."""
    pid = parameter.id
    return rx.text(rx.cond(_wired(pid), EditorState.field_wired[pid], "Not wired: connect a value to this input."),
                   size="1", color_scheme="gray", custom_attrs=_testid(f"field-{pid}"))


@rx.memo
def inspector_wired_badge(pid: rx.Var[str]) -> rx.Component:
    return rx.cond(
        EditorState.field_wired[pid].bool(),
        rx.badge(rx.icon("cable", size=12), EditorState.field_wired[pid], variant="soft", color_scheme="cyan",
                 custom_attrs=_testid("wired-" + pid)),
    )


@rx.memo
def inspector_field_error(pid: rx.Var[str]) -> rx.Component:
    error = EditorState.field_errors[pid]
    return rx.cond(error.bool(), rx.text(error, size="1", color_scheme="red", custom_attrs=_testid("error-" + pid)))


@rx.memo
def inspector_field_warning(pid: rx.Var[str]) -> rx.Component:
    warning = EditorState.field_warnings[pid]
    return rx.cond(warning.bool(), rx.text(warning, size="1", color_scheme="amber",
                                           custom_attrs=_testid("warning-" + pid)))


def parameter_field(parameter: Parameter) -> rx.Component:
    pid = parameter.id
    body = _input_only(parameter) if parameter.mode == "input" else control(parameter)
    if parameter.mode != "input" and accepts_expression(parameter):
        body = rx.cond(EditorState.field_expression[pid], expression_editor(parameter), body)
    wired = _wired(pid)
    label = rx.hstack(
        rx.text(parameter.label, "*" if parameter.required else "", size="2", weight="medium"),
        rx.spacer(),
        expression_toggle(pid) if parameter.mode != "input" and accepts_expression(parameter) else rx.fragment(),
        align="center", width="100%",
    )
    return rx.vstack(
        label,
        inspector_wired_badge(pid=pid) if parameter.mode != "input" else rx.fragment(),
        rx.box(body, width="100%", opacity=rx.cond(wired, "0.5", "1")),
        rx.text(parameter.description, size="1", color_scheme="gray") if parameter.description else rx.fragment(),
        inspector_field_error(pid=pid),
        inspector_field_warning(pid=pid),
        spacing="1", width="100%", custom_attrs=_testid(f"param-{pid}"),
    )


# 4. Header, name, settings, whole panel --------------------------------------------------------

def node_header(definition: NodeDefinition) -> rx.Component:
    return rx.hstack(
        rx.center(rx.icon(icon_name(definition.icon), size=18), width="34px", height="34px", flex_shrink="0",
                  border_radius="var(--radius-2)", background="var(--accent-a3)", color="var(--accent-11)"),
        rx.vstack(
            rx.text(definition.name, size="3", weight="bold", custom_attrs=_testid("inspector-type")),
            rx.text(definition.description, size="1", color_scheme="gray"),
            spacing="1", min_width="0",
        ),
        align="start", spacing="3", width="100%",
    )


def name_input() -> rx.Component:
    return rx.vstack(
        rx.text("Name", size="2", weight="medium"),
        _one_line_input(EditorState.selected_name, EditorState.rename_selected,
                        _key("__name:") + EditorState.selected_name, "Node name", testid="inspector-name",
                        aria_label="Node name"),
        rx.cond(EditorState.name_error != "",
                rx.text(EditorState.name_error, size="1", color_scheme="red", custom_attrs=_testid("inspector-name-error"))),
        rx.text("Unique in the graph; expressions refer to it as $('Name').", size="1", color_scheme="gray"),
        spacing="1", width="100%",
    )


def _shown_field(parameter: Parameter) -> rx.Component:
    """A parameter's field; one with `show_if` only while the node's other settings show it (its value stays)."""
    if not parameter.show_if:
        return parameter_field(parameter)
    return rx.cond(EditorState.field_hidden[parameter.id], rx.fragment(), parameter_field(parameter))


def node_form(definition: NodeDefinition) -> rx.Component:
    """The form of one node type: header, name and one field per parameter, in definition order."""
    fields = [_shown_field(p) for p in definition.parameters if p.mode != "output"]
    return rx.vstack(
        node_header(definition),
        name_input(),
        rx.separator(size="4"),
        *(fields or [rx.text("This node has no parameters.", size="2", color_scheme="gray")]),
        spacing="4", width="100%", custom_attrs=_testid(f"inspector-form-{definition.id}"),
    )


def _setting(key: str, label: str, body: rx.Component, help_text: str = "") -> rx.Component:
    error = EditorState.field_errors[f"setting:{key}"]
    return rx.vstack(
        rx.text(label, size="2", weight="medium"),
        body,
        rx.text(help_text, size="1", color_scheme="gray") if help_text else rx.fragment(),
        rx.cond(error.bool(), rx.text(error, size="1", color_scheme="red", custom_attrs=_testid(f"error-setting-{key}"))),
        spacing="1", width="100%",
    )


def _setting_number(key: str, label: str, placeholder: str) -> rx.Component:
    text = EditorState.settings_texts[key]
    return _one_line_input(
        text, lambda raw: EditorState.set_setting(key, raw), _key("setting-", key, ":") + text, placeholder,
        testid=f"setting-{key}", attrs=NUMBER_TEXT, aria_label=label,
    )


def settings_section() -> rx.Component:
    """Run settings every node has: error mode, retries and timeout (collapsed by default)."""
    return rx.el.details(
        rx.el.summary(rx.text("Settings", as_="span", size="2", weight="bold"), cursor="pointer",
                      custom_attrs=_testid("inspector-settings-toggle")),
        rx.vstack(
            _setting("error_mode", "On error",
                     _select(ERROR_MODE_LABELS, EditorState.settings_texts["error_mode"],
                             lambda raw: EditorState.set_setting("error_mode", raw), testid="setting-error_mode",
                             aria_label="On error"),
                     "Route to error output adds an Error output to the node."),
            _setting("max_attempts", "Retries (max attempts)",
                     _setting_number("max_attempts", "Retries (max attempts)", "1"), "1 runs once; up to 20 attempts."),
            _setting("initial_interval", "Wait between retries (s)",
                     _setting_number("initial_interval", "Wait between retries (s)", "1"),
                     "Grows after each failed attempt (×2 by default)."),
            _setting("timeout", "Timeout (s)", _setting_number("timeout", "Timeout (s)", "No limit"),
                     "Empty: no limit."),
            spacing="3", width="100%", padding_top="12px",
        ),
        width="100%",
        custom_attrs=_testid("inspector-settings"),
    )


def empty_state() -> rx.Component:
    return rx.center(
        rx.vstack(
            rx.icon("mouse-pointer-click", size=28, color="var(--gray-9)"),
            rx.text("Select a node to edit it", size="2", color_scheme="gray"),
            align="center", spacing="2",
        ),
        height="100%", width="100%", min_height="200px", custom_attrs=_testid("inspector-empty"),
    )


def unknown_type() -> rx.Component:
    return rx.callout(
        rx.text("This node's type (", EditorState.selected_type, ") is not installed, so it cannot be edited here."),
        icon="triangle-alert", color_scheme="amber", size="1", width="100%",
    )


def _title_bar(fold: rx.Component) -> rx.Component:
    return rx.hstack(rx.text("Inspector", size="1", weight="bold", color_scheme="gray", text_transform="uppercase"),
                     rx.box(flex="1"), fold, align="center", width="100%", margin_bottom="8px")


def inspector(definitions: Sequence[NodeDefinition], fold: rx.Component | None = None) -> rx.Component:
    """The right-side panel: an empty state, or the selected node's form and settings; `fold` folds it."""
    forms = [(d.id, node_form(d)) for d in definitions]
    return rx.box(
        # Configured providers' models first; the others say "not configured" (EditorState.model_options).
        rx.el.datalist(rx.foreach(EditorState.model_options, lambda o: rx.el.option(o["label"], value=o["value"])),
                       id=MODEL_LIST_ID),
        _title_bar(fold) if fold is not None else rx.fragment(),
        rx.cond(
            EditorState.selected_id == "",
            empty_state(),
            rx.vstack(
                run_to_here_button(),
                inspector_input_panel(),
                inspector_output_panel(),
                rx.match(EditorState.selected_type, *forms, unknown_type()),
                trigger_panel(),
                rx.separator(size="4"),
                settings_section(),
                spacing="4", width="100%",
                # A viewer reads the form; nothing in it reacts (the server refuses their edits too).
                pointer_events=rx.cond(EditorState.read_only, "none", "auto"),
                opacity=rx.cond(EditorState.read_only, "0.75", "1"),
            ),
        ),
        width=INSPECTOR_WIDTH, min_width=INSPECTOR_WIDTH, height="100%", overflow_y="auto", padding="16px",
        background=PANEL_BG, border_left=BORDER,
        custom_attrs=_testid("inspector"),
    )
