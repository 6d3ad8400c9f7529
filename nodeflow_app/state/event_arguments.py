"""Whether an event's payload fits its handler's parameters: `access.AccessMiddleware` asks before every handler.

Reflex calls a handler with the payload the browser sent, as keyword arguments. It turns a text into an int or a
float where the annotation asks for one (its `deserializers`) and checks nothing else, so a forged event (any JSON
over the websocket) gave handlers a dict for a str, None, a list, an unknown or a missing argument, and they
crashed. This checks the top level against the annotations (str, int, float, bool, dict[...], list[...], Literal,
Any, unions such as `X | None`, defaults); what a dict or a list holds is the handler's to check. A value of another
class (an upload's chunk iterator) comes from Reflex itself, never from the browser's JSON: it must already be one.
"""

from __future__ import annotations

import functools
import inspect
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, Literal, get_args, get_origin

from reflex_base.utils.serializers import deserializers

_NAMED = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


@functools.cache
def _parameters(fn: Callable) -> tuple[dict[str, Any], frozenset[str], bool]:
    """(annotation of each named parameter but self, the ones without a default, whether it takes **kwargs)."""
    try:
        hints = typing.get_type_hints(fn)
    except (NameError, TypeError):  # a name only imported for type checkers: the test of every handler says so
        hints = {}
    params = list(inspect.signature(fn).parameters.values())[1:]
    named = [p for p in params if p.kind in _NAMED]
    return ({p.name: hints.get(p.name, Any) for p in named},
            frozenset(p.name for p in named if p.default is inspect.Parameter.empty),
            any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params))


def argument_problem(fn: Callable, payload: Any) -> str:
    """What is wrong with calling handler `fn` with `payload` ("text must be str, not dict"); "" when it fits."""
    if not isinstance(payload, Mapping):
        return f"its arguments must be an object, not {_kind(payload)}"
    hints, required, takes_any = _parameters(fn)
    unknown = [key for key in payload if key not in hints]
    if unknown and not takes_any:
        name = unknown[0]  # any text a forger chose: shown only when it reads as a name
        return f"unknown argument: {name if name.isidentifier() else repr(name[:40])}"
    missing = sorted(required - payload.keys())
    if missing:
        return f"missing argument: {missing[0]}"
    for key, value in payload.items():
        if key in hints and not fits(value, hints[key]):
            return f"{key} must be {_name(hints[key])}, not {_kind(value)}"
    return ""


def fits(value: Any, hint: Any) -> bool:
    """Whether `value` (as the browser sent it) is what annotation `hint` allows, at its top level."""
    origin = get_origin(hint)
    if hint is Any:
        return True
    if origin in (typing.Union, types.UnionType):
        return any(fits(value, option) for option in get_args(hint))
    if origin is Literal:
        return value in get_args(hint)
    if hint is None or hint is type(None):
        return value is None
    expected = origin or hint
    if typing.is_typeddict(expected):
        expected = dict
    if not isinstance(expected, type):
        return True  # an annotation no isinstance can test (a TypeVar): the handler checks its value itself
    if isinstance(value, bool) and expected in (int, float):
        return False  # JSON's true is no number (though Python's bool is an int)
    if isinstance(value, str) and expected in deserializers:
        return _converts(value, expected)
    return isinstance(value, (int, float) if expected is float else expected)


def _converts(text: str, expected: type) -> bool:
    """Whether Reflex turns `text` into an `expected` before the call (else it passes the text on, unchanged)."""
    try:
        deserializers[expected](text)
    except (ValueError, OverflowError):
        return False
    return True


def _kind(value: Any) -> str:
    return "None" if value is None else type(value).__name__


def _name(hint: Any) -> str:
    return inspect.formatannotation(hint).replace("typing.", "")  # "dict[str, Any] | None"
