"""The coercion table: which socket types connect, and how values convert along a wire.

The socket types are the contract's (SOCKET_TYPES); how they look is the editor catalog's.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from nodeflow_app.contract import SOCKET_TYPES


class CoercionError(ValueError):
    """A runtime value that cannot become the target socket's type."""


def _to_string(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _last_content(messages: Any) -> str:
    if not messages:
        return ""
    last = messages[-1]
    return str(last.get("content", "")) if isinstance(last, dict) else str(last)


def _identity(value: Any) -> Any:
    return value


# (source, target) -> converter. Same type always connects; `any` is handled in can_connect.
COERCIONS: dict[tuple[str, str], Callable[[Any], Any]] = {
    ("int", "float"): float,
    ("int", "string"): _to_string,
    ("float", "string"): _to_string,
    ("boolean", "string"): _to_string,
    ("string", "text"): _identity,
    ("text", "string"): _identity,
    ("json", "string"): lambda v: json.dumps(v, separators=(",", ":"), ensure_ascii=False, default=str),
    ("json", "text"): lambda v: json.dumps(v, indent=2, ensure_ascii=False, default=str),
    ("document", "text"): lambda v: v["text"] if isinstance(v, dict) else v.text,
    ("document", "json"): lambda v: v if isinstance(v, dict) else dict(v),
    ("string", "messages"): lambda v: [{"role": "user", "content": v}],
    ("messages", "string"): _last_content,
}


def can_connect(source_type: str, target_type: str) -> tuple[bool, str]:
    """Whether a wire from a `source_type` socket may enter a `target_type` socket, and why not."""
    for socket_type in (source_type, target_type):
        if socket_type not in SOCKET_TYPES:
            return False, f"unknown socket type '{socket_type}'"
    if source_type == target_type or "any" in (source_type, target_type):
        return True, ""
    if (source_type, target_type) in COERCIONS:
        return True, ""
    accepted = sorted(s for (s, t) in COERCIONS if t == target_type)
    hint = f"; a {target_type} socket accepts {', '.join([target_type, *accepted, 'any'])}"
    return False, f"a {source_type} output cannot connect to a {target_type} input{hint}"


def coerce(value: Any, source_type: str, target_type: str) -> Any:
    """Convert a runtime value along one wire; `any` sources are checked against the target's shape."""
    if source_type == target_type or target_type == "any":
        return value
    if source_type == "any":
        return _coerce_any(value, target_type)
    converter = COERCIONS.get((source_type, target_type))
    if converter is None:
        raise CoercionError(f"cannot convert {source_type} to {target_type}")
    try:
        return converter(value)
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise CoercionError(f"cannot convert {source_type} value {_preview(value)} to {target_type}: {error}") from error


_CHECKS: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "text": lambda v: isinstance(v, str),
    "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "float": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "json": lambda v: isinstance(v, (dict, list)),
    "array": lambda v: isinstance(v, list),
    "messages": lambda v: isinstance(v, list) and all(isinstance(m, dict) and "content" in m for m in v),
    "document": lambda v: isinstance(v, dict) and "text" in v,
    "vector": lambda v: isinstance(v, list) and all(isinstance(x, (int, float)) for x in v),
}


def _coerce_any(value: Any, target_type: str) -> Any:
    """An `any` value entering a typed socket: accept it if it already fits, else try the natural conversion."""
    check = _CHECKS.get(target_type)
    if check is None or check(value):
        return float(value) if target_type == "float" else value
    if target_type in ("string", "text"):
        if isinstance(value, (dict, list)):
            return COERCIONS[("json", target_type)](value)
        return _to_string(value)
    if target_type == "float" and isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            pass
    if target_type == "int" and isinstance(value, (str, float)):
        try:
            number = float(value)
            if number.is_integer():
                return int(number)
        except ValueError:
            pass
    if target_type == "messages" and isinstance(value, str):
        return COERCIONS[("string", "messages")](value)
    raise CoercionError(f"value {_preview(value)} is not a valid {target_type}")


def _preview(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
