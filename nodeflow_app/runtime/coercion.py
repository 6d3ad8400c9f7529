"""The coercion table: which socket types connect, and how values convert along a wire.

The socket types and their conversions are the contract's (SOCKET_TYPES, contract/conversions.py); how they
look is the editor catalog's. This module applies them.
"""

from __future__ import annotations

from typing import Any

from nodeflow_app.contract import SOCKET_TYPES
from nodeflow_app.contract.conversions import CONVERSIONS, SHAPES, to_string


class CoercionError(ValueError):
    """A runtime value that cannot become the target socket's type."""


def can_connect(source_type: str, target_type: str) -> tuple[bool, str]:
    """Whether a wire from a `source_type` socket may enter a `target_type` socket, and why not."""
    for socket_type in (source_type, target_type):
        if socket_type not in SOCKET_TYPES:
            return False, f"unknown socket type '{socket_type}'"
    if source_type == target_type or "any" in (source_type, target_type):
        return True, ""
    if (source_type, target_type) in CONVERSIONS:
        return True, ""
    accepted = sorted(s for (s, t) in CONVERSIONS if t == target_type)
    hint = f"; a {target_type} socket accepts {', '.join([target_type, *accepted, 'any'])}"
    return False, f"a {source_type} output cannot connect to a {target_type} input{hint}"


def coerce(value: Any, source_type: str, target_type: str) -> Any:
    """Convert a runtime value along one wire; `any` sources are checked against the target's shape."""
    if source_type == target_type or target_type == "any":
        return value
    if source_type == "any":
        return _coerce_any(value, target_type)
    converter = CONVERSIONS.get((source_type, target_type))
    if converter is None:
        raise CoercionError(f"cannot convert {source_type} to {target_type}")
    try:
        return converter(value)
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise CoercionError(f"cannot convert {source_type} value {preview(value)} to {target_type}: {error}") from error


def _coerce_any(value: Any, target_type: str) -> Any:
    """An `any` value entering a typed socket: accept it if it already fits, else try the natural conversion
    (the contract's, from the type the value has; whole and decimal numbers also from text)."""
    shape = SHAPES.get(target_type)
    if shape is None or shape(value):
        return float(value) if target_type == "float" else value
    converter = CONVERSIONS.get((_natural_type(value), target_type))
    if converter is not None:
        return converter(value)
    if target_type in ("string", "text"):
        return to_string(value)
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
    raise CoercionError(f"value {preview(value)} is not a valid {target_type}")


def _natural_type(value: Any) -> str | None:
    if isinstance(value, str):
        return "string"
    if isinstance(value, (dict, list)):
        return "json"
    return None


def preview(value: Any, limit: int = 60) -> str:
    """`value` as repr, cut to `limit` characters (for error messages)."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
