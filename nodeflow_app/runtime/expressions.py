"""The `{{ ... }}` expression language of string parameters: parse (cached), check, render, resolve.

Grammar (property access and indexing only, never Python `eval`):

    expression := root accessor*
    root       := "$json" | "input" | "$trigger" ".json"
                | "$(" STRING ")" ( ".item.json" | ".json" )
    accessor   := "." NAME | "[" STRING "]" | "[" INT "]"          (INT may be negative)

A text that is exactly one expression (surrounding whitespace allowed) renders to the raw value;
mixed text renders to a string. Positions in errors are 1-based columns (plus a line number when
the text has several lines).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "ExpressionError",
    "close_match",
    "NodeUnavailable",
    "Scope",
    "check_syntax",
    "has_expression",
    "referenced_nodes",
    "render",
    "resolve",
]

_OPEN, _CLOSE = "{{", "}}"
# The longest text one parameter's expressions may make. Each expression copies its value into the text, so a
# short template repeating one over a large input asked for gigabytes: the server's memory, every run's.
MAX_RENDERED_CHARS = 16 * 1024 * 1024
_ROOTS_HINT = "expressions start with $json, input, $trigger.json or $('Node name')"


class ExpressionError(ValueError):
    """A broken or failing expression; the message names the parameter, the expression and the column."""

    def __init__(
        self,
        message: str,
        *,
        expression: str = "",
        position: int | None = None,
        parameter: str | None = None,
        line: int | None = None,
        where: str = "",
    ) -> None:
        self.message = message
        self.expression = expression
        self.position = position  # 1-based column on `line` (line 1 when `line` is None)
        self.parameter = parameter
        self.line = line
        self.where = where  # the spot inside the parameter's value (values.place: "row 2 value"), if any
        text = f"{where}: {message}" if where else message
        text = f"parameter '{parameter}': {text}" if parameter else text
        if position is not None:
            text += f" at line {line}, column {position}" if line else f" at column {position}"
        if expression:
            text += f" in {expression}"
        super().__init__(text)

    def __reduce__(self) -> tuple[Any, ...]:
        kwargs = {"expression": self.expression, "position": self.position,
                  "parameter": self.parameter, "line": self.line, "where": self.where}
        return (_rebuild_error, (type(self), self.message, kwargs))


def _rebuild_error(cls: type[ExpressionError], message: str, kwargs: dict[str, Any]) -> ExpressionError:
    return cls(message, **kwargs)


class NodeUnavailable(KeyError):
    """Raised by `Scope.node_output`: the named node's output cannot be read here, and why (a sentence)."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(name)
        self.reason = reason


@runtime_checkable
class Scope(Protocol):
    """What an expression can see while one node runs; the kernel provides it."""

    def node_output(self, name: str) -> Any:
        """Output of the upstream node `name`; raises NodeUnavailable (or KeyError) if it is not upstream or
        did not run."""
        ...

    def direct_input(self) -> Any:
        """The node's direct data input (`$json`, `input`)."""
        ...

    def trigger_output(self) -> Any:
        """The trigger node's output (`$trigger.json`); raises KeyError if the run has none."""
        ...


# --- parsed form (immutable, shared through the parse cache) ---------------------------------


@dataclass(frozen=True, slots=True)
class _Step:
    key: str | int
    start: int  # offset of the '.' or '['
    key_start: int  # offset of the name / key literal
    end: int  # offset just past the accessor


@dataclass(frozen=True, slots=True)
class _Expr:
    source: str  # the whole "{{ ... }}" as written
    root: str  # "node" | "input" | "trigger"
    node: str | None
    root_start: int
    call_end: int  # offset just past `$('X')`, `$json`, `input` or `$trigger`
    steps: tuple[_Step, ...]


@dataclass(frozen=True, slots=True)
class _Issue:
    message: str
    offset: int  # 0-based offset in the template
    source: str  # the "{{ ... }}" the issue is in


@dataclass(frozen=True, slots=True)
class _Template:
    segments: tuple[str | _Expr, ...]
    raw: _Expr | None  # the only expression, when nothing but whitespace surrounds it
    issues: tuple[_Issue, ...]
    nodes: frozenset[str]


# --- tokenizer + recursive-descent parser ------------------------------------------------------


class _SyntaxIssue(Exception):
    def __init__(self, message: str, offset: int) -> None:
        super().__init__(message)
        self.message = message
        self.offset = offset


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str  # name | string | int | . [ ] ( ) | close | eof | other
    value: Any
    start: int
    end: int


def _describe_token(tok: _Token) -> str:
    if tok.kind == "eof":
        return "end of text"
    if tok.kind == "close":
        return "'}}'"
    if tok.kind == "string":
        return f"text {json.dumps(tok.value, ensure_ascii=False)}"
    return f"'{tok.value}'"


def _is_name_start(ch: str) -> bool:
    return ch.isalpha() or ch in "_$"


def _is_name_char(ch: str) -> bool:
    return ch.isalnum() or ch in "_$"


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r"}
_DIGITS = frozenset("0123456789")  # str.isdigit() also takes '²' and '①', which int() refuses
_MAX_INDEX_DIGITS = 18


class _Parser:
    """Parses one expression starting just after its "{{"; lexes lazily so the leftmost problem wins."""

    def __init__(self, text: str, open_at: int) -> None:
        self.text = text
        self.open_at = open_at
        self.pos = open_at + 2
        self.tok = self._lex()

    def _lex(self) -> _Token:
        text, n = self.text, len(self.text)
        i = self.pos
        while i < n and text[i].isspace():
            i += 1
        if i >= n:
            self.pos = i
            return _Token("eof", None, i, i)
        ch = text[i]
        if text.startswith(_CLOSE, i):
            tok = _Token("close", _CLOSE, i, i + 2)
        elif ch in ".[]()":
            tok = _Token(ch, ch, i, i + 1)
        elif _is_name_start(ch):
            j = i + 1
            while j < n and _is_name_char(text[j]):
                j += 1
            tok = _Token("name", text[i:j], i, j)
        elif ch in _DIGITS or (ch == "-" and i + 1 < n and text[i + 1] in _DIGITS):
            j = i + 1
            while j < n and text[j] in _DIGITS:
                j += 1
            if j - i > _MAX_INDEX_DIGITS:
                raise _SyntaxIssue(f"the number is too long (an index has at most {_MAX_INDEX_DIGITS} digits)", i)
            tok = _Token("int", int(text[i:j]), i, j)
        elif ch in "'\"":
            tok = self._lex_string(i)
        else:
            tok = _Token("other", ch, i, i + 1)
        self.pos = tok.end
        return tok

    def _lex_string(self, start: int) -> _Token:
        text, quote = self.text, self.text[start]
        chars: list[str] = []
        i = start + 1
        while i < len(text):
            ch = text[i]
            if ch == quote:
                return _Token("string", "".join(chars), start, i + 1)
            if ch == "\\" and i + 1 < len(text):
                i += 1
                chars.append(_ESCAPES.get(text[i], text[i]))
            else:
                chars.append(ch)
            i += 1
        raise _SyntaxIssue(f"the quote {quote} is never closed", start)

    def _advance(self) -> _Token:
        tok = self.tok
        self.tok = self._lex()
        return tok

    def _unexpected(self, tok: _Token, message: str) -> _SyntaxIssue:
        if tok.kind == "eof":  # the text ended inside the expression: point at its '{{'
            return _SyntaxIssue("unterminated '{{' (no closing '}}')", self.open_at)
        return _SyntaxIssue(message, tok.start)

    def _expect(self, kind: str, wanted: str) -> _Token:
        if self.tok.kind != kind:
            raise self._unexpected(self.tok, f"expected {wanted}, found {_describe_token(self.tok)}")
        return self._advance()

    def _expect_name(self, name: str, wanted: str) -> _Token:
        if self.tok.kind != "name" or self.tok.value != name:
            raise self._unexpected(self.tok, f"expected {wanted}, found {_describe_token(self.tok)}")
        return self._advance()

    def parse(self) -> _Expr:
        """Parse `root accessor* }}`; returns the expression with its source span."""
        open_at, tok = self.open_at, self.tok
        if tok.kind == "close":
            raise _SyntaxIssue("empty expression", tok.start)
        root_start = tok.start
        root, node, call_end = self._root()
        steps: list[_Step] = []
        while self.tok.kind in (".", "["):
            steps.append(self._accessor())
        if self.tok.kind != "close":
            raise self._unexpected(self.tok, f"unexpected {_describe_token(self.tok)}")
        end = self.tok.end
        return _Expr(self.text[open_at:end], root, node, root_start, call_end, tuple(steps))

    def _root(self) -> tuple[str, str | None, int]:
        tok = self._advance()
        if tok.kind != "name":
            raise self._unexpected(tok, f"unexpected {_describe_token(tok)}; {_ROOTS_HINT}")
        if tok.value in ("$json", "input"):
            return "input", None, tok.end
        if tok.value == "$trigger":
            self._expect(".", "'.json' after $trigger")
            self._expect_name("json", "'.json' after $trigger")
            return "trigger", None, tok.end
        if tok.value == "$":
            self._expect("(", "'(' after $, as in $('Node name')")
            name = self._expect("string", "a quoted node name, as in $('Node name')")
            call_end = self._expect(")", "')' after the node name").end
            self._expect(".", "'.item.json' or '.json' after $(...)")
            if self.tok.kind == "name" and self.tok.value == "item":
                self._advance()
                self._expect(".", "'.json' after '.item'")
            self._expect_name("json", "'.item.json' or '.json' after $(...)")
            return "node", name.value, call_end
        raise _SyntaxIssue(f"unknown name '{tok.value}'; {_ROOTS_HINT}", tok.start)

    def _accessor(self) -> _Step:
        opener = self._advance()
        if opener.kind == ".":
            name = self._expect("name", "a field name after '.'")
            return _Step(name.value, opener.start, name.start, name.end)
        key = self.tok
        if key.kind not in ("string", "int"):
            raise self._unexpected(
                key, f"expected a quoted key or a whole number inside [ ], found {_describe_token(key)}"
            )
        self._advance()
        close = self._expect("]", "']'")
        return _Step(key.value, opener.start, key.start, close.end)


# The parse cache is bounded in characters, not only in entries: 4,096 short texts (up to 4 KB each) and
# 16 long ones (up to 1 MB); longer texts are parsed each time (parsing is linear, ~1 ms per 100 KB).
_SHORT, _LONG = 4096, 1 << 20


def _parse(text: str) -> _Template:
    """Split a template into literal text and parsed expressions, collecting every syntax issue."""
    if len(text) <= _SHORT:
        return _parse_short(text)
    return _parse_long(text) if len(text) <= _LONG else _parse_text(text)


@lru_cache(maxsize=4096)
def _parse_short(text: str) -> _Template:
    return _parse_text(text)


@lru_cache(maxsize=16)
def _parse_long(text: str) -> _Template:
    return _parse_text(text)


def _parse_text(text: str) -> _Template:
    segments: list[str | _Expr] = []
    issues: list[_Issue] = []
    pos = 0
    while (open_at := text.find(_OPEN, pos)) != -1:
        if open_at > pos:
            segments.append(text[pos:open_at])
        try:
            expr = _Parser(text, open_at).parse()
        except _SyntaxIssue as issue:
            close_at = text.find(_CLOSE, max(issue.offset, open_at + 2))
            end = len(text) if close_at == -1 else close_at + 2
            issues.append(_Issue(issue.message, issue.offset, text[open_at:end]))
            pos = end
            continue
        segments.append(expr)
        pos = open_at + len(expr.source)
    if pos < len(text):
        segments.append(text[pos:])
    exprs = [s for s in segments if isinstance(s, _Expr)]
    raw = None
    if len(exprs) == 1 and not issues and all(isinstance(s, _Expr) or not s.strip() for s in segments):
        raw = exprs[0]
    nodes = frozenset(e.node for e in exprs if e.node is not None)
    return _Template(tuple(segments), raw, tuple(issues), nodes)


# --- errors ------------------------------------------------------------------------------------


def _error(text: str, offset: int, message: str, source: str, parameter: str | None) -> ExpressionError:
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return ExpressionError(message, expression=source, position=column,
                           parameter=parameter, line=line if "\n" in text else None)


def _describe(value: Any) -> str:
    if value is None:
        return "empty (null)"
    if isinstance(value, bool):
        return f"a boolean ({'true' if value else 'false'})"
    if isinstance(value, (int, float)):
        return f"a number ({value})"
    if isinstance(value, str):
        preview = value if len(value) <= 30 else value[:29] + "…"
        return f"a text ({json.dumps(preview, ensure_ascii=False)})"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, (list, tuple)):
        return "an empty list" if not value else f"a list of {len(value)} item{'s' * (len(value) != 1)}"
    return f"a {type(value).__name__} value"


def _missing_field(key: str, obj: Mapping[Any, Any]) -> str:
    names = [str(k) for k in obj]
    if not names:
        return f"field '{key}' not found (the object is empty)"
    guess = close_match(key, names)
    hint = f"did you mean '{guess[0]}'? " if guess else ""
    shown = ", ".join(n if len(n) <= 40 else n[:39] + "…" for n in names[:20]) + (
        f", … ({len(names) - 20} more)" if len(names) > 20 else "")
    return f"field '{key}' not found ({hint}available: {shown})"


def close_match(key: str, names: list[str]) -> list[str]:
    """[the closest of `names` to `key`] or [], for "did you mean" hints. Bounded: difflib's cost grows with
    the product of the lengths, so long keys and names, and names past the first 1,000, are not compared."""
    if len(key) > _HINT_LENGTH:
        return []
    candidates = [name for name in names[:_HINT_CANDIDATES] if len(name) <= _HINT_LENGTH]
    return difflib.get_close_matches(key, candidates, n=1)


_HINT_LENGTH, _HINT_CANDIDATES = 100, 1000

# --- evaluation --------------------------------------------------------------------------------


def _evaluate(expr: _Expr, scope: Scope, text: str, parameter: str | None) -> Any:
    if expr.root == "node":
        try:
            value = scope.node_output(expr.node)  # type: ignore[arg-type]
        except KeyError as error:
            call = text[expr.root_start : expr.call_end]
            reason = error.reason if isinstance(error, NodeUnavailable) else (
                f"no node named '{expr.node}' ran before this one (is it upstream and did it run?)")
            message = f"{call} — {reason}"
            raise _error(text, expr.root_start, message, expr.source, parameter) from None
    elif expr.root == "trigger":
        try:
            value = scope.trigger_output()
        except KeyError:
            message = "$trigger.json — this run has no trigger output"
            raise _error(text, expr.root_start, message, expr.source, parameter) from None
    else:
        value = scope.direct_input()

    for step in expr.steps:
        key = step.key
        if type(key) is str:
            if isinstance(value, Mapping) and key in value:
                value = value[key]
                continue
        elif isinstance(value, (list, tuple)) and -len(value) <= key < len(value):
            value = value[key]
            continue
        parent, path = text[expr.root_start : step.start].rstrip(), text[expr.root_start : step.end]
        raise _error(text, step.key_start, _step_problem(parent, path, key, value), expr.source, parameter)
    return value


def _step_problem(parent: str, path: str, key: str | int, value: Any) -> str:
    """Why `path` (a step of key `key` from `parent`, whose value is `value`) cannot be read."""
    if isinstance(key, str):
        if isinstance(value, Mapping):
            return f"{path}: {_missing_field(key, value)}"
        hint = f" (pick one item first, e.g. {parent}[0])" if isinstance(value, (list, tuple)) and value else ""
        return f"{path}: cannot read field '{key}' — {parent} is {_describe(value)}, not an object{hint}"
    if isinstance(value, (list, tuple)):
        size = "is an empty list" if not value else f"has {len(value)} item{'s' * (len(value) != 1)}"
        valid = f" (valid: 0 to {len(value) - 1}, or -1 to -{len(value)})" if value else ""
        return f"{path}: index {key} is out of range — {parent} {size}{valid}"
    return f"{path}: cannot take item [{key}] — {parent} is {_describe(value)}, not a list"


def _to_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (Mapping, list, tuple)):
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)
    return str(value)


# --- public API --------------------------------------------------------------------------------


def has_expression(text: str) -> bool:
    """True if `text` contains '{{' (it will be parsed as a template)."""
    return isinstance(text, str) and _OPEN in text


def check_syntax(text: str, *, parameter: str | None = None) -> list[ExpressionError]:
    """Every syntax problem in `text`, for static validation (no scope, nothing is evaluated)."""
    if not isinstance(text, str) or _OPEN not in text:
        return []
    return [_error(text, i.offset, i.message, i.source, parameter) for i in _parse(text).issues]


def render(text: str, scope: Scope, *, parameter: str | None = None) -> Any:
    """The raw value of a lone expression, or `text` with every expression's value interpolated."""
    if not isinstance(text, str) or _OPEN not in text:
        return text
    template = _parse(text)
    if template.issues:
        issue = template.issues[0]
        raise _error(text, issue.offset, issue.message, issue.source, parameter)
    if template.raw is not None:
        return _evaluate(template.raw, scope, text, parameter)
    pieces, size = [], 0
    for segment in template.segments:
        piece = segment if isinstance(segment, str) else _to_text(_evaluate(segment, scope, text, parameter))
        size += len(piece)
        if size > MAX_RENDERED_CHARS:
            raise ExpressionError(f"the text its expressions make is over {MAX_RENDERED_CHARS:,} characters; "
                                  "pass a large value as a lone expression, or on a wire", parameter=parameter)
        pieces.append(piece)
    return "".join(pieces)


def place(where: str, key: str | int) -> str:
    """`where` one step further in, as the inspector shows a parameter's rows: `row 2 value` (rows count from 1).
    Validate and a run's errors both name a spot inside a parameter's value with it."""
    step = f"row {key + 1}" if isinstance(key, int) else str(key)
    return f"{where} {step}" if where else step


_CONTAINERS = (str, dict, list, tuple)


def resolve(value: Any, scope: Scope, *, parameter: str | None = None, where: str = "") -> Any:
    """Render every string inside `value` (dicts and lists, recursively); other values pass through. An error
    inside names its spot (`where`, e.g. "row 2 value") as Validate does."""
    if isinstance(value, str):
        if _OPEN not in value:
            return value
        try:
            return render(value, scope, parameter=parameter)
        except ExpressionError as error:
            if not where:
                raise
            raise ExpressionError(error.message, expression=error.expression, position=error.position,
                                  parameter=error.parameter, line=error.line, where=where) from None
    if isinstance(value, dict):
        # Inline plain-value check: a node's data is mostly strings without '{{' (the hot path).
        return {
            k: v if ((_OPEN not in v) if type(v) is str else not isinstance(v, _CONTAINERS))
            else resolve(v, scope, parameter=parameter, where=place(where, k))
            for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        items = [
            v if ((_OPEN not in v) if type(v) is str else not isinstance(v, _CONTAINERS))
            else resolve(v, scope, parameter=parameter, where=place(where, i))
            for i, v in enumerate(value)
        ]
        return items if isinstance(value, list) else tuple(items)
    return value


def referenced_nodes(text: str) -> set[str]:
    """Names used in $('...') in `text` (from the expressions that parse)."""
    if not isinstance(text, str) or _OPEN not in text:
        return set()
    return set(_parse(text).nodes)
