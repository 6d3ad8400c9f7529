"""What a value may hold where it enters NodeFlow: JSON's values, finite numbers, nesting up to MAX_DEPTH.

Checked by the normalizer (node parameters, strictly: a graph is a document people edit, so text
must also be storable as is), by the kernel (every node's outputs) and by the CLI (a payload).
In run values NUL and lone surrogates are allowed: the run store escapes them (see store/runs.py).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

MAX_DEPTH = 100  # objects and lists inside each other; JSON from people and models stays far below
MAX_INT_BITS = 14_000  # about 4,200 digits: Python refuses to turn longer whole numbers into text

_SURROGATE = re.compile("[\ud800-\udfff]")
_LONG_NUMBER = re.compile(r"\d{4000,}")  # may hold a whole number over MAX_INT_BITS: walk to be sure
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_INNERMOST = re.compile(r"[\[{][^\[\]{}]*[\]}]")
_ELIDED = object()
# One encoder for every check. No circular-reference bookkeeping: a value holding itself recurses until
# RecursionError, which sends it to the walk like any value the encoder cannot vouch for (~15% faster).
_ENCODER = json.JSONEncoder(allow_nan=False, ensure_ascii=False, check_circular=False)
_SMALL_INT = 1 << 62


class _Bad(Exception):
    def __init__(self, problem: str):
        super().__init__(problem)
        self.problem = problem
        self.path: list[str | int] = []  # innermost key first, filled in while unwinding


def value_problem(value: Any, *, strict_text: bool = False) -> str | None:
    """Why `value` cannot travel as JSON, as `<path>: <what>` (path like `$.a[0]`), or None.

    Refused: NaN and Infinity, whole numbers over MAX_INT_BITS bits, nesting deeper than MAX_DEPTH;
    with `strict_text`, also NUL characters and lone surrogates in text (keys included).
    """
    # Run values (not strict) skip the encoder: the walk is 3-8x faster on them from 20 records up (measured with
    # 3 to 100,000 records); the encoder wins where text must be checked too (graphs).
    if plain_and_fine(value) if not strict_text else _surely_fine(value, strict_text):
        return None
    try:
        _walk(value, 0, strict_text)
    except _Bad as bad:
        return f"{format_path(reversed(bad.path))}: {bad.problem}"
    return None


def plain_and_fine(value: Any) -> bool:
    """A few plain values, or a dict or list of a few nested a few levels (most node outputs, a webhook's payload),
    checked without the encoder or the walk. True means fine; False means "take `value_problem`" (the kernel calls
    this first: once per node)."""
    return _plain_left(value, _PLAIN_NESTING, _PLAIN_ITEMS) >= 0


_PLAIN_NESTING, _PLAIN_ITEMS = 4, 64  # containers inside each other, values looked at in all: past these, the walk


def _plain_left(value: Any, nesting: int, left: int) -> int:
    """`left` less the values inside `value`, all fine; -1 when it cannot tell (too many, too deep, an odd or bad
    value: the walk then finds which). Bounded by `nesting`, so a value that holds itself ends here too."""
    kind = type(value)
    items = value.values() if kind is dict else value if kind is list else (value,)
    left -= len(items)
    if left < 0:
        return -1
    for item in items:
        kind = type(item)
        if kind is str or kind in _PLAIN:
            continue
        if (kind is int and -_SMALL_INT < item < _SMALL_INT) or (kind is float and math.isfinite(item)):
            continue
        if (kind is dict or kind is list) and nesting > 0:
            left = _plain_left(item, nesting - 1, left)
            if left >= 0:
                continue
        return -1
    return left


def _surely_fine(value: Any, strict_text: bool) -> bool:
    """The fast path (every node output and parameter passes here): one pass of the C JSON encoder refuses
    NaN, Infinity and circular references, and the text it writes bounds the nesting. Anything it cannot
    vouch for (an odd type, a long number, a NUL or a surrogate when text is strict) takes the walk, which
    finds the exact problem and its path."""
    try:
        text = _ENCODER.encode(value)
    except (ValueError, TypeError, RecursionError):
        return False
    if _LONG_NUMBER.search(text) or not _shallow(text):
        return False
    return not strict_text or ("\\u0000" not in text and (text.isascii() or not _SURROGATE.search(text)))


def _shallow(text: str) -> bool:
    """Whether JSON `text` nests at most MAX_DEPTH containers: each pass drops the innermost ones."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return True
    bare = _JSON_STRING.sub("", text)
    for _ in range(MAX_DEPTH):
        bare, dropped = _INNERMOST.subn("", bare)
        if not dropped:
            return True
    return "[" not in bare and "{" not in bare


def text_problem(text: str) -> str | None:
    """Why `text` cannot be stored as is (a NUL character, a lone surrogate), or None."""
    if "\x00" in text:
        return f"holds a NUL character (at {text.index(chr(0))})"
    found = _SURROGATE.search(text)
    if found:
        return f"holds a lone surrogate \\u{ord(found.group()):04x} (at {found.start()}), which is not Unicode text"
    return None


def format_path(parts: Any) -> str:
    """`$.user.tags[0]["odd key"]` from its parts (a very deep path shows its start and its end)."""
    parts = list(parts)
    total = len(parts)
    if total > 12:
        parts = [*parts[:6], _ELIDED, *parts[-4:]]
    path = "$"
    for part in parts:
        if part is _ELIDED:
            path += f".…({total} steps in all)…"
            continue
        if isinstance(part, int):
            path += f"[{part}]"
        elif isinstance(part, str) and part.isidentifier():
            path += f".{part}"
        else:
            path += f"[{_quoted(part)}]"
    return path


def _quoted(key: Any) -> str:
    text = str(key) if not isinstance(key, str) else key
    text = text if len(text) <= 40 else text[:39] + "…"
    return '"' + text.encode("unicode_escape").decode("ascii").replace('"', '\\"') + '"'


_PLAIN = frozenset({bool, type(None)})  # nothing to check (str, int and float are checked below)


def _walk(value: Any, depth: int, strict_text: bool, ancestors: set[int] | None = None) -> None:
    kind = type(value)
    if kind in _PLAIN or (kind is str and not strict_text):  # the common case, decided without isinstance
        return
    if isinstance(value, str):
        if strict_text and (problem := text_problem(value)):
            raise _Bad(problem)
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise _Bad(f"{value} is not a number JSON can hold (NaN and Infinity are refused)")
    elif isinstance(value, int):
        if value.bit_length() > MAX_INT_BITS:
            raise _Bad(f"a whole number of {value.bit_length():,} bits is too large (limit {MAX_INT_BITS:,} bits)")
    elif isinstance(value, (dict, list, tuple)):
        ancestors = ancestors if ancestors is not None else set()
        if id(value) in ancestors:
            raise _Bad("contains itself (a circular reference)")
        if depth >= MAX_DEPTH:
            raise _Bad(f"nested deeper than {MAX_DEPTH} levels (the limit)")
        ancestors.add(id(value))
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            kind = type(item)
            # Fine scalars are decided here, without a call per value (lists of 100,000 records stay cheap).
            if not strict_text and (kind is str or kind is bool or item is None
                                    or (kind is int and item.bit_length() <= MAX_INT_BITS)
                                    or (kind is float and math.isfinite(item))):
                continue
            try:
                if strict_text and isinstance(key, str) and (problem := text_problem(key)):
                    raise _Bad(f"the key {problem}")
                _walk(item, depth + 1, strict_text, ancestors)
            except _Bad as bad:
                bad.path.append(key)
                raise
        ancestors.discard(id(value))
