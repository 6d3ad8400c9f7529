"""A small JSON Schema checker for the subset a Structured Output node uses: `type` (object, array, string,
number, integer, boolean, null, or a list of them), `properties`, `required`, `additionalProperties`,
`items`, `enum` and `const`. Other keywords (descriptions, formats, lengths) are accepted and not checked.

Stdlib only. Problems are returned as text naming the field (`items[0].name`), not raised.
"""

from __future__ import annotations

import json
from typing import Any

TYPES = ("object", "array", "string", "number", "integer", "boolean", "null")


def schema_problem(schema: Any, where: str = "") -> str | None:
    """Why `schema` is not a usable schema of the subset, or None; `where` locates a nested one."""
    at = f" at {where}" if where else ""
    if not isinstance(schema, dict):
        return f"expected a JSON object{at}, got {_describe(schema)}"
    kind = schema.get("type")
    for name in [] if kind is None else kind if isinstance(kind, list) else [kind]:
        if name not in TYPES:
            return f"unknown type {name!r}{at}; use one of: {', '.join(TYPES)}"
    properties = schema.get("properties", {})
    if not isinstance(properties, dict):
        return f"'properties'{at} must be an object of field schemas"
    for key, sub in properties.items():
        if problem := schema_problem(sub, _join(where, key)):
            return problem
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        return f"'required'{at} must be a list of field names"
    extra = schema.get("additionalProperties", True)
    if not isinstance(extra, bool) and (problem := schema_problem(extra, f"{where or 'root'}.additionalProperties")):
        return problem
    if "items" in schema and (problem := schema_problem(schema["items"], f"{where}[]")):
        return problem
    if "enum" in schema and (not isinstance(schema["enum"], list) or not schema["enum"]):
        return f"'enum'{at} must be a non-empty list of values"
    return None


def value_problem(value: Any, schema: dict[str, Any], path: str = "") -> str | None:
    """The first way `value` breaks `schema` (a schema without problems), or None when it conforms."""
    field = f"field {path!r}" if path else "the answer"
    kind = schema.get("type")
    kinds = [kind] if isinstance(kind, str) else kind if isinstance(kind, list) else []
    if kinds and not any(_is(value, k) for k in kinds):
        return f"{field} should be {' or '.join(kinds)}, got {_describe(value)}"
    if "enum" in schema and not any(_same(value, option) for option in schema["enum"]):
        allowed = ", ".join(json.dumps(option, ensure_ascii=False) for option in schema["enum"])
        return f"{field} should be one of {allowed}, got {_describe(value)}"
    if "const" in schema and not _same(value, schema["const"]):
        return f"{field} should be {json.dumps(schema['const'], ensure_ascii=False)}, got {_describe(value)}"
    if isinstance(value, dict):
        return _object_problem(value, schema, path)
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            if problem := value_problem(item, schema["items"], f"{path}[{index}]"):
                return problem
    return None


def _object_problem(value: dict[str, Any], schema: dict[str, Any], path: str) -> str | None:
    properties = schema.get("properties", {})
    for name in schema.get("required", []):
        if name not in value:
            return f"field {_join(path, name)!r} is required but missing"
    extra = schema.get("additionalProperties", True)
    for key, item in value.items():
        if key in properties:
            sub = properties[key]
        elif extra is False:
            return f"field {_join(path, key)!r} is not in the schema (additionalProperties is false)"
        else:
            sub = extra if isinstance(extra, dict) else {}
        if problem := value_problem(item, sub, _join(path, key)):
            return problem
    return None


def _is(value: Any, kind: str) -> bool:
    if kind == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer())
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, {"object": dict, "array": list, "string": str, "boolean": bool,
                              "null": type(None)}.get(kind, object))


def _same(left: Any, right: Any) -> bool:
    """JSON equality: `1 == 1.0`, but `true` is not `1`."""
    if isinstance(left, bool) or isinstance(right, bool):
        return type(left) is type(right) and left == right
    return left == right


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _describe(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    if value is None:
        return "null"
    kind = names.get(type(value), "an integer" if isinstance(value, int) else "a number")
    shown = json.dumps(value, ensure_ascii=False, default=str)
    return f"{kind} {shown[:60] + '…' if len(shown) > 60 else shown}"
