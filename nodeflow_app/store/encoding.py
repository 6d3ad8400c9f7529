"""Text and JSON any database can hold, made from values that come from outside (payloads, model answers).

PostgreSQL text has no NUL character and no encoding has a lone surrogate (a stray byte from argv, a
"\\ud800" in a JSON payload). JSON escapes NUL by itself; `json_text` also escapes lone surrogates
(as \\udXXX), so both read back as the very same value. `plain_text` shows them escaped as `\\x00` and
`\\udXXX` in columns that are not JSON (errors, names).
"""

from __future__ import annotations

import json
import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")

# Built once: json.dumps with options builds a new encoder on every call.
_encode = json.JSONEncoder(default=str, ensure_ascii=False).encode


def json_text(value: Any) -> str:
    """`value` as JSON text (non-JSON objects as their str) that any database can store."""
    text = _encode(value)
    return text if text.isascii() else storable_json(text)  # ASCII (the usual row) needs no scan: one call less


def storable_json(text: str) -> str:
    """JSON text with any raw lone surrogate escaped; a lone surrogate only ever sits inside a JSON string."""
    if text.isascii() or _SURROGATE.search(text) is None:  # isascii: a fast scan, and the usual case
        return text
    return _SURROGATE.sub(lambda found: f"\\u{ord(found.group()):04x}", text)


def plain_text(value: str | None) -> str | None:
    """Text a non-JSON column can hold: NUL and lone surrogates shown escaped."""
    if not value:
        return value
    if "\x00" in value:
        value = value.replace("\x00", "\\x00")
    if not value.isascii() and _SURROGATE.search(value):
        value = value.encode("utf-8", "backslashreplace").decode("utf-8")
    return value


def shown_surrogates(value: Any) -> Any:
    """`value` with each lone surrogate in its text written out as the six characters `\\udXXX`: what a page
    shows, since its websocket carries only UTF-8. The value itself when it holds none (the usual case)."""
    if isinstance(value, str):
        return value if value.isascii() or _SURROGATE.search(value) is None else \
            _SURROGATE.sub(lambda found: f"\\u{ord(found.group()):04x}", value)
    return _surrogates_replaced(value, lambda found: f"\\\\u{ord(found.group()):04x}")


def replaced_surrogates(value: Any) -> Any:
    """`value` with each lone surrogate replaced by U+FFFD, for writers that must emit UTF-8 (the MCP library's
    own JSON). The value itself when it has none, the usual case."""
    return _surrogates_replaced(value, lambda _found: "\ufffd")


def _surrogates_replaced(value: Any, replacement: Any) -> Any:
    """`value` through its JSON text, each lone surrogate there (it only ever sits inside a string) replaced."""
    text = _encode(value)
    if text.isascii() or _SURROGATE.search(text) is None:
        return value
    return json.loads(_SURROGATE.sub(replacement, text))
