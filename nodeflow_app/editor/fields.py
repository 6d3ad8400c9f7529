"""The inspector's data side: a node's parameters as the texts its controls show, and typed input back.

Pure Python (no reflex): `field_view` turns a node into what the inspector displays; `parse_field`,
`set_row_field`, `add_row`, `remove_row` and `parse_setting` turn what a control sends into the value
to store, or raise `FieldError` with a sentence that names the field. Nothing here mutates its input.
Called on every edit of the selected node, so it reads the graph once per call (1,000-node graphs).
"""

from __future__ import annotations

import json
import math
import re
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from nodeflow_app.runtime.expressions import has_expression
from nodeflow_app.runtime.values import MAX_DEPTH, value_problem
from nodeflow_app.runtime.graph import (
    Graph, Node, NodeSettings, RetryPolicy, boolean_of, invalid_json, invalid_json_text, parameter_problem,
)
from nodeflow_app.secret_values import is_set
from nodeflow_app.contract import ERROR_MODES, NodeDefinition, Parameter
from nodeflow_app.validation import node_issues

# Controls whose value is one of a fixed set: an expression toggle makes no sense there.
NO_EXPRESSION_TYPES = frozenset({"boolean", "select"})
NUMBER_TYPES = frozenset({"int", "float"})
TEXT_TYPES = frozenset({"string", "text", "code", "model"})
# The field ids of a key_value row, as stored (nodes._helpers.key_value_pairs also reads "key").
KEY_FIELD, VALUE_FIELD = "name", "value"
# In the rows of a secret key_value parameter: "true" when the row's value is set (the value is never shown).
SECRET_SET_FIELD = "set"
# `set_row_field(..., field_id=CHECKED_FIELD)` on a list with options toggles option `index`.
CHECKED_FIELD = "checked"
SETTING_LABELS = {
    "error_mode": "Error mode", "max_attempts": "Max attempts", "initial_interval": "Wait between retries",
    "backoff_factor": "Backoff factor", "max_interval": "Longest wait", "timeout": "Timeout",
}


class FieldError(ValueError):
    """A value the user typed that cannot be stored; the message names the field."""


@dataclass
class FieldView:
    """What the inspector shows for one node; every dict is keyed by parameter id."""

    texts: dict[str, str] = field(default_factory=dict)
    flags: dict[str, bool] = field(default_factory=dict)
    rows: dict[str, list[dict[str, str]]] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    warnings: dict[str, str] = field(default_factory=dict)
    wired: dict[str, str] = field(default_factory=dict)
    expression: dict[str, bool] = field(default_factory=dict)
    settings: dict[str, str] = field(default_factory=dict)
    upstream: list[str] = field(default_factory=list)
    # True for each parameter the node's other settings hide (`Parameter.show_if`): its value stays stored.
    hidden: dict[str, bool] = field(default_factory=dict)


def accepts_expression(parameter: Parameter) -> bool:
    """Whether the inspector offers the expression toggle ("fx") for this parameter (never for a secret: its
    text is never shown)."""
    return parameter.expressions and parameter.type not in NO_EXPRESSION_TYPES and not parameter.secret


def option_flag(parameter_id: str, value: Any) -> str:
    """The `flags` key of one option's checkbox in a list of options (e.g. `tool_names:calculator`)."""
    return f"{parameter_id}:{value}"


# 1. Node -> view --------------------------------------------------------------------------------

def field_view(definition: NodeDefinition, node: Node, graph: Graph,
               expression_modes: set[str] | frozenset[str] = frozenset()) -> FieldView:
    """The inspector's texts, flags, rows, problems, wires and expression modes for `node`."""
    view = FieldView(settings=setting_texts(node.settings))
    names = {n.id: n.name for n in graph.nodes}
    incoming: dict[str, list[tuple[str, str]]] = {}  # target id -> [(source id, handle)] on flow edges
    wires: dict[str, list[str]] = {}
    for edge in graph.edges:
        if edge.target == node.id:
            wires.setdefault(edge.targetHandle, []).append(
                f"'{names.get(edge.source, edge.source)}'.{edge.sourceHandle}")
        if edge.data.channel == "flow":
            incoming.setdefault(edge.target, []).append((edge.source, edge.sourceHandle))
    view.upstream = _walk_upstream(incoming, names, node.id)
    view.hidden = dict.fromkeys(definition.hidden_parameters(node.data), True)
    for issue in node_issues(graph, _Only(definition), node.id):  # the same checks as Validate and the CLI
        shown = view.errors if issue.severity == "error" else view.warnings
        shown.setdefault(issue.parameter or "", issue.message)
    for parameter in definition.parameters:
        if parameter.mode == "output":
            continue
        pid = parameter.id
        value = node.data.get(pid, parameter.default)
        _show(view, parameter, value)
        if parameter.mode in ("hybrid", "input") and pid in wires:
            view.wired[pid] = "wired from " + ", ".join(wires[pid])
        view.expression[pid] = accepts_expression(parameter) and (has_expression(value) or pid in expression_modes)
    return view


class _Only:
    """The node's own definition as a definition source (the inspector checks one node)."""

    def __init__(self, definition: NodeDefinition):
        self._definition = definition

    def definition(self, node_type: str) -> NodeDefinition | None:
        return self._definition if node_type == self._definition.id else None


def _show(view: FieldView, parameter: Parameter, value: Any) -> None:
    pid = parameter.id
    if parameter.secret:
        _show_secret(view, parameter, value)
        return
    if isinstance(value, str) and has_expression(value):
        view.texts[pid] = value
    elif parameter.type == "boolean":
        view.flags[pid] = bool(value)
        view.texts[pid] = "true" if value else "false"
    elif parameter.type in NUMBER_TYPES:
        view.texts[pid] = "" if value is None else _number_text(value)
    elif parameter.type in TEXT_TYPES or parameter.type == "select":
        view.texts[pid] = _text(value)
    elif parameter.type == "json" and (kept := invalid_json_text(value)) is not None:
        view.texts[pid] = kept  # what was typed, with the same message as when it was typed
        try:
            parse_json(kept, parameter.label or pid)
        except FieldError as error:
            view.errors[pid] = str(error)
    else:  # json, key_value, list: the JSON text serves the expression editor and the JSON editor
        view.texts[pid] = "" if value is None else json.dumps(value, indent=2, ensure_ascii=False, default=str)
    if parameter.type in ("key_value", "list"):
        view.rows[pid] = _rows(parameter, value)
        if parameter.type == "list" and parameter.options and not parameter.fields:
            chosen = value if isinstance(value, list) else []
            for option in parameter.options:
                view.flags[option_flag(pid, option.value)] = option.value in chosen


def _show_secret(view: FieldView, parameter: Parameter, value: Any) -> None:
    """A secret's controls show whether it is set, never its text (nor its ciphertext): `SECRET_SET_FIELD` per row."""
    pid = parameter.id
    view.texts[pid] = ""
    if parameter.type == "key_value":
        view.rows[pid] = [{KEY_FIELD: _text(name), VALUE_FIELD: "", SECRET_SET_FIELD: "true" if is_set(item) else ""}
                          for name, item in _pairs(value)]
    else:
        view.flags[pid] = is_set(value)


def _rows(parameter: Parameter, value: Any) -> list[dict[str, str]]:
    if parameter.type == "key_value":
        return [{KEY_FIELD: _text(name), VALUE_FIELD: _text(item)} for name, item in _pairs(value)]
    if not isinstance(value, list):
        return []
    if parameter.fields:
        return [{f.id: _text(item.get(f.id, f.default)) if isinstance(item, dict) else "" for f in parameter.fields}
                for item in value]
    return [{VALUE_FIELD: _text(item)} for item in value]


def setting_texts(settings: NodeSettings) -> dict[str, str]:
    retry = settings.retry
    return {
        "error_mode": settings.error_mode,
        "max_attempts": str(retry.max_attempts),
        "initial_interval": _number_text(retry.initial_interval),
        "backoff_factor": _number_text(retry.backoff_factor),
        "max_interval": _number_text(retry.max_interval),
        "timeout": "" if settings.timeout is None else _number_text(settings.timeout),
    }


def upstream_names(graph: Graph, node_id: str) -> list[str]:
    """Names of every node upstream of `node_id` on flow edges, nearest first (ties in edge order)."""
    incoming: dict[str, list[tuple[str, str]]] = {}
    for edge in graph.edges:
        if edge.data.channel == "flow":
            incoming.setdefault(edge.target, []).append((edge.source, edge.sourceHandle))
    return _walk_upstream(incoming, {n.id: n.name for n in graph.nodes}, node_id)


def _walk_upstream(incoming: dict[str, list[tuple[str, str]]], names: dict[str, str], node_id: str) -> list[str]:
    seen, found = {node_id}, []
    queue = deque([node_id])
    while queue:
        for source, _ in incoming.get(queue.popleft(), ()):
            if source not in seen:
                seen.add(source)
                queue.append(source)
                if source in names:
                    found.append(names[source])
    return found


_IDENTIFIER = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")


def output_fields(node_name: str, value: Any, limit: int = 20, depth: int = 3) -> list[dict[str, str]]:
    """The fields of a node's output (its last run) as the expressions that read them, with a preview:
    `[{node, path, expression, preview}]`, leaves first-come, lists through their first item."""
    found: list[dict[str, str]] = []
    call = f"$('{node_name}')" if "'" not in node_name and "\\" not in node_name else (
        "$(" + json.dumps(node_name, ensure_ascii=False) + ")")

    def walk(item: Any, path: str, level: int) -> None:
        if len(found) >= limit:
            return
        if isinstance(item, dict) and item and level < depth:
            for key, child in item.items():
                step = f".{key}" if _IDENTIFIER.match(str(key)) else f"[{json.dumps(str(key), ensure_ascii=False)}]"
                walk(child, path + step, level + 1)
            return
        if isinstance(item, list) and item and level < depth:
            walk(item[0], path + "[0]", level + 1)
            return
        preview = _text(item)
        found.append({"node": node_name, "path": path.lstrip(".") or "(the whole output)",
                      "expression": "{{ " + call + ".item.json" + path + " }}",
                      "preview": preview if len(preview) <= 40 else preview[:39] + "…"})

    walk(value, "", 0)
    return found


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return _number_text(value)
    return json.dumps(value, ensure_ascii=False, default=str)


def _number_text(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return _text(value)
    return repr(value)


# 2. Control -> value ----------------------------------------------------------------------------

def parse_field(parameter: Parameter, raw: Any) -> Any:
    """The typed value to store for what a control sent: a str (input), a bool (switch), a number (slider)."""
    label = parameter.label or parameter.id
    if isinstance(raw, str) and parameter.expressions and has_expression(raw):
        return raw
    kind = parameter.type
    if kind in NUMBER_TYPES:
        return _parse_number(parameter, raw, label)
    if kind == "boolean":
        return _parse_bool(raw, label)
    if kind == "select":
        return _parse_select(parameter, raw, label)
    if kind in ("json", "key_value", "list"):
        return _parse_structure(parameter, raw, label)
    text = "" if raw is None else raw if isinstance(raw, str) else _text(raw)
    return text.strip() if kind == "model" else text


def _parse_number(parameter: Parameter, raw: Any, label: str) -> int | float | None:
    if isinstance(raw, list) and len(raw) == 1:  # a slider sends [value]
        raw = raw[0]
    if isinstance(raw, bool):
        raise FieldError(f"{label}: expected a number, got {_text(raw)}")
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        if parameter.required or parameter.default is not None:
            raise FieldError(f"{label}: enter a number")
        return None
    if isinstance(raw, (int, float)):
        number: float = raw
        shown = _number_text(raw)
    else:
        shown = str(raw).strip()
        try:
            number = float(shown)
        except ValueError:
            raise FieldError(f"{label}: {shown!r} is not a number") from None
    if not math.isfinite(number):
        raise FieldError(f"{label}: {shown} is not a finite number")
    if parameter.type == "int":
        if number != int(number):
            raise FieldError(f"{label}: {shown} is not a whole number")
        number = int(number)
    else:
        number = float(number)
    if parameter.min is not None and number < parameter.min:
        raise FieldError(f"{label}: {shown} is below the minimum {parameter.min:g}")
    if parameter.max is not None and number > parameter.max:
        raise FieldError(f"{label}: {shown} is above the maximum {parameter.max:g}")
    return number


def typed_number(raw: Any) -> Any:
    """What a number field holds when its text is not a valid value: the number as typed (out of range, not
    whole), else the text itself; None when nothing was typed. Stored as is, so Validate and a run report it
    (a field that silently keeps its old value would let the run use a value nobody sees)."""
    if isinstance(raw, list) and len(raw) == 1:
        raw = raw[0]
    text = "" if raw is None else str(raw).strip()
    if not text:
        return None
    try:
        number = float(text)
    except ValueError:
        return text
    if not math.isfinite(number):
        return text
    return int(number) if number.is_integer() and "." not in text else number


def kept_as_typed(parameter: Parameter, raw: Any) -> Any:
    """What to store for a control's text that `parse_field` refused, or None to store nothing: a number field
    keeps `typed_number`, a json field its text in an `invalid_json` envelope (n8n keeps what was typed too).
    Validate and a run refuse both, naming the node and the parameter, until the text is fixed."""
    if parameter.type in NUMBER_TYPES:
        return typed_number(raw)
    if parameter.type == "json" and isinstance(raw, str) and raw.strip():
        return invalid_json(raw)
    return None


def _parse_bool(raw: Any, label: str) -> bool:
    flag = boolean_of(raw)
    if flag is None:
        raise FieldError(f"{label}: expected on or off (true/false), got {raw!r}")
    return flag


def _parse_select(parameter: Parameter, raw: Any, label: str) -> Any:
    for option in parameter.options:
        if option.value == raw or _text(option.value) == _text(raw):
            return option.value
    if not parameter.options:
        return raw
    allowed = ", ".join(repr(o.label or o.value) for o in parameter.options)
    raise FieldError(f"{label}: {raw!r} is not one of {allowed}")


def _parse_structure(parameter: Parameter, raw: Any, label: str) -> Any:
    if isinstance(raw, str):
        if not raw.strip():
            if parameter.required:
                raise FieldError(f"{label}: a value is required")
            return None if parameter.type == "json" else []
        raw = parse_json(raw, label)
    expected = {"key_value": (dict, list), "list": (list,)}.get(parameter.type)
    if expected and not isinstance(raw, expected):
        shape = "a list of rows or an object" if parameter.type == "key_value" else "a list"
        raise FieldError(f"{label}: expected {shape}, got {type(raw).__name__}")
    problem = parameter_problem(parameter, raw)
    if problem:
        raise FieldError(f"{label}: {problem}")
    return raw


def parse_json(text: str, label: str) -> Any:
    """JSON text as a value; FieldError with line and column (NaN and Infinity are not JSON)."""
    def refuse(constant: str) -> Any:
        raise ValueError(constant)

    try:
        value = json.loads(text, parse_constant=refuse)
    except json.JSONDecodeError as error:
        raise FieldError(f"{label}: invalid JSON at line {error.lineno}, column {error.colno}: {error.msg}") from None
    except RecursionError:
        raise FieldError(f"{label}: the JSON is nested deeper than {MAX_DEPTH} levels (the limit)") from None
    except ValueError as error:  # NaN, Infinity, or a whole number of thousands of digits
        what = "a whole number of over 4,300 digits" if "digits" in str(error) else str(error)
        raise FieldError(f"{label}: {what} is not valid JSON") from None
    problem = value_problem(value)
    if problem:
        raise FieldError(f"{label}: {problem}")
    return value


# 3. Rows of key_value and list parameters --------------------------------------------------------

def set_row_field(parameter: Parameter, current: Any, index: int, field_id: str, raw: Any) -> Any:
    """The new value after editing field `field_id` of row `index` (a new list; `current` is untouched).

    key_value rows are stored as `[{"name", "value"}]` (field ids "name"/"key" and "value"); a list with
    `fields` edits `item[field_id]`; a list of scalars edits the item (field id "value"); a list with
    `options` and no fields takes field id "checked" with `index` = the option's index, to toggle it.
    """
    label = parameter.label or parameter.id
    if parameter.type == "list" and parameter.options and not parameter.fields and field_id == CHECKED_FIELD:
        return _toggle_option(parameter, current, index, _parse_bool(raw, label))
    rows = _row_list(parameter, current)
    if not 0 <= index < len(rows):
        raise FieldError(f"{label}: there is no row {index + 1}")
    row = rows[index]
    if parameter.type == "key_value":
        key = KEY_FIELD if field_id in (KEY_FIELD, "key") else VALUE_FIELD if field_id == VALUE_FIELD else None
        if key is None:
            raise FieldError(f"{label}: a row has a name and a value, not {field_id!r}")
        base = row if isinstance(row, dict) else {VALUE_FIELD: row}
        if parameter.secret and key == VALUE_FIELD and (raw in (None, "")):
            return rows  # the control shows a set secret empty: leaving it empty keeps the secret
        old = base.get(KEY_FIELD, base.get("key")) if key == KEY_FIELD else base.get(VALUE_FIELD)
        secret_text = parameter.secret and key == VALUE_FIELD  # a secret stays text (the state seals it)
        updated: Any = {**base, key: str(raw) if secret_text else _cell(old, raw)}
        if key == KEY_FIELD:
            updated.pop("key", None)  # rows written as {"key", ...} (an import) are stored as {"name", ...}
    elif parameter.fields:
        spec = next((f for f in parameter.fields if f.id == field_id), None)
        if spec is None:
            raise FieldError(f"{label}: an item has no field {field_id!r}")
        base = row if isinstance(row, dict) else {}
        old = base.get(field_id, spec.default)
        value = old if _same_text(old, raw) else parse_field(spec, raw)
        updated = {**{f.id: f.default for f in parameter.fields}, **base, field_id: value}
    else:
        if field_id != VALUE_FIELD:
            raise FieldError(f"{label}: an item has no field {field_id!r}")
        updated = _cell(row, raw)
    return [*rows[:index], updated, *rows[index + 1:]]


def add_row(parameter: Parameter, current: Any) -> Any:
    """The value with one more row: an empty name/value, the fields' defaults, or the next unused option."""
    rows = _row_list(parameter, current)
    if parameter.type == "key_value":
        return [*rows, {KEY_FIELD: "", VALUE_FIELD: ""}]
    if parameter.fields:
        return [*rows, {f.id: f.default for f in parameter.fields}]
    if parameter.options:
        unused = next((o.value for o in parameter.options if o.value not in rows), None)
        if unused is None:
            raise FieldError(f"{parameter.label or parameter.id}: every option is already chosen")
        return [*rows, unused]
    return [*rows, ""]


def remove_row(parameter: Parameter, current: Any, index: int) -> Any:
    rows = _row_list(parameter, current)
    if not 0 <= index < len(rows):
        raise FieldError(f"{parameter.label or parameter.id}: there is no row {index + 1}")
    return [*rows[:index], *rows[index + 1:]]


def _row_list(parameter: Parameter, current: Any) -> list[Any]:
    """The rows of the current value (a plain copy); a key_value object becomes name/value rows."""
    if current is None:
        return []
    if parameter.type == "key_value" and isinstance(current, dict):
        return [{KEY_FIELD: str(name), VALUE_FIELD: _plain(item)} for name, item in current.items()]
    if isinstance(current, list):
        return [_plain(item) for item in current]
    raise FieldError(f"{parameter.label or parameter.id}: holds {_text(current)[:60]!r}, not rows; "
                     "switch off the expression to edit rows")


def _plain(value: Any) -> Any:
    """A deep copy made of plain dicts and lists: the caller's value may be wrapped (Reflex state
    proxies), and what is returned here is stored in the graph and serialized."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


def _pairs(value: Any) -> list[tuple[Any, Any]]:
    if isinstance(value, dict):
        return list(value.items())
    if not isinstance(value, list):
        return []
    return [(row.get(KEY_FIELD, row.get("key")), row.get(VALUE_FIELD)) if isinstance(row, dict) else ("", row)
            for row in value]


def _cell(old: Any, raw: Any) -> Any:
    """A cell's new value: unchanged when the text is the same, typed like the old one when it reads as JSON."""
    if _same_text(old, raw):
        return old
    text = "" if raw is None else raw if isinstance(raw, str) else _text(raw)
    if old is not None and not isinstance(old, str) and not has_expression(text):
        try:
            return json.loads(text)
        except ValueError:
            pass
    return text


def _same_text(old: Any, raw: Any) -> bool:
    return _text(old) == (raw if isinstance(raw, str) else _text(raw))


def _toggle_option(parameter: Parameter, current: Any, index: int, checked: bool) -> list[Any]:
    if not 0 <= index < len(parameter.options):
        raise FieldError(f"{parameter.label or parameter.id}: there is no option {index + 1}")
    chosen = _row_list(parameter, current)
    value = parameter.options[index].value
    if checked == (value in chosen):
        return chosen
    if not checked:
        return [item for item in chosen if item != value]
    known = [o.value for o in parameter.options]
    # Keep the options' order; values that are not options (from an import) stay at the end.
    return [v for v in known if v in chosen or v == value] + [item for item in chosen if item not in known]


# 4. Settings ------------------------------------------------------------------------------------

def parse_setting(settings: NodeSettings, key: str, raw: Any) -> NodeSettings:
    """New settings with `key` set from its text; an empty text restores the default (timeout: none)."""
    label = SETTING_LABELS.get(key)
    if label is None:
        raise FieldError(f"unknown setting {key!r}; settings are {', '.join(SETTING_LABELS)}")
    text = "" if raw is None else str(raw).strip()
    if key == "error_mode":
        if text not in ERROR_MODES:
            raise FieldError(f"{label}: {text!r} is not one of {', '.join(ERROR_MODES)}")
        return settings.model_copy(update={"error_mode": text})
    if key == "timeout":
        value = None if not text else _setting_number(text, label, minimum=0, strict=True)
        return settings.model_copy(update={"timeout": value})
    default = RetryPolicy.model_fields[key].default
    if not text:
        value: Any = default
    elif key == "max_attempts":
        value = _setting_number(text, label, minimum=1, maximum=20, whole=True)
    else:
        value = _setting_number(text, label, minimum=1 if key == "backoff_factor" else 0)
    return settings.model_copy(update={"retry": settings.retry.model_copy(update={key: value})})


def _setting_number(text: str, label: str, *, minimum: float, maximum: float | None = None,
                    whole: bool = False, strict: bool = False) -> int | float:
    try:
        number = float(text)
    except ValueError:
        raise FieldError(f"{label}: {text!r} is not a number") from None
    if not math.isfinite(number):
        raise FieldError(f"{label}: {text} is not a finite number")
    if whole:
        if number != int(number) or not minimum <= number <= (maximum or math.inf):
            raise FieldError(f"{label}: enter a whole number from {minimum:g} to {maximum:g}")
        return int(number)
    if strict and number <= minimum:
        raise FieldError(f"{label}: {text} must be more than {minimum:g} seconds (empty: no limit)")
    if number < minimum:
        raise FieldError(f"{label}: {text} is below the minimum {minimum:g}")
    return number
