"""What each socket type means for values: which other types convert into it along a wire, how, and what a
value of the type looks like. Part of the contract (like SOCKET_TYPES): the kernel applies the table and
the editor shows it; neither knows what a `messages` or a `document` value is.
"""

from __future__ import annotations

import json
from typing import Any, Callable


def to_string(value: Any) -> str:
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


# (source, target) -> converter. Same type always connects; `any` connects to everything.
CONVERSIONS: dict[tuple[str, str], Callable[[Any], Any]] = {
    ("int", "float"): float,
    ("int", "string"): to_string,
    ("float", "string"): to_string,
    ("boolean", "string"): to_string,
    ("string", "text"): _identity,
    ("text", "string"): _identity,
    ("json", "string"): lambda v: json.dumps(v, separators=(",", ":"), ensure_ascii=False, default=str),
    ("json", "text"): lambda v: json.dumps(v, indent=2, ensure_ascii=False, default=str),
    ("document", "text"): lambda v: v["text"] if isinstance(v, dict) else v.text,
    ("document", "json"): lambda v: v if isinstance(v, dict) else dict(v),
    ("string", "messages"): lambda v: [{"role": "user", "content": v}],
    ("messages", "string"): _last_content,
}

# What a value of each type looks like (an `any` value entering a typed socket is checked against it).
SHAPES: dict[str, Callable[[Any], bool]] = {
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
