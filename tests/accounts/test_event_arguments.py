"""Every handler of every state, against the one argument check the access middleware runs before it: what the
handler's annotations allow gets through, any other JSON value (what a forged websocket event can hold), an unknown
argument or a missing one is refused with a message naming the argument. The samples below come from a table of
their own (not from the check), so a check that let anything through, or refused what a page sends, fails here."""

from __future__ import annotations

import inspect
import types
import typing
from typing import Any, Literal, get_args, get_origin

import pytest

from nodeflow_app.state.event_arguments import argument_problem

from .test_access import HANDLERS

# One value of each JSON kind a websocket event can carry, and what each annotation allows of them.
JSON_VALUES = {"str": "text", "numeric str": "7", "int": 3, "float": 2.5, "bool": True, "dict": {"k": 1},
               "list": [1], "None": None}
ALLOWED_KINDS = {str: {"str", "numeric str"}, int: {"int", "numeric str"}, float: {"int", "float", "numeric str"},
                 bool: {"bool"}, dict: {"dict"}, list: {"list"}, type(None): {"None"}}


def allowed(hint: Any) -> set[str]:
    """The JSON kinds a page may send for `hint` (Reflex turns a numeric text into the int or float asked for)."""
    if hint is Any:
        return set(JSON_VALUES)
    if get_origin(hint) in (typing.Union, types.UnionType):
        return set().union(*(allowed(option) for option in get_args(hint)))
    return ALLOWED_KINDS.get(get_origin(hint) or hint, set())  # a class of its own: no JSON value is one


def sample(hint: Any) -> Any:
    """A value fitting `hint`: a JSON one, else an instance of its class (as Reflex's upload route passes)."""
    kinds = allowed(hint)
    if kinds:
        return JSON_VALUES[sorted(kinds)[0]]
    assert get_origin(hint) is not Literal, "add Literal to this test's table"
    return hint.__new__(hint)


def sample_payload(fn) -> dict[str, Any]:
    """A payload the handler `fn` accepts: a value for each argument without a default."""
    hints = typing.get_type_hints(fn)
    return {p.name: sample(hints.get(p.name, Any)) for p in list(inspect.signature(fn).parameters.values())[1:]
            if p.default is inspect.Parameter.empty}


def _parameters(fn):
    hints = typing.get_type_hints(fn)
    return [(p, hints.get(p.name, Any)) for p in list(inspect.signature(fn).parameters.values())[1:]]


IDS = [f"{cls.__name__}.{name}" for cls, name, _ in HANDLERS]


@pytest.mark.parametrize("cls, name, handler", HANDLERS, ids=IDS)
def test_what_the_annotations_allow_gets_through_and_nothing_else(cls, name, handler):
    payload = sample_payload(handler.fn)
    assert argument_problem(handler.fn, payload) == ""
    for param, hint in _parameters(handler.fn):
        for kind, value in JSON_VALUES.items():
            problem = argument_problem(handler.fn, {**payload, param.name: value})
            if kind in allowed(hint):
                assert problem == "", f"{param.name}: {hint} allows a {kind}"
            else:
                assert problem.startswith(f"{param.name} must be "), f"{param.name}: {hint} refuses a {kind}"


@pytest.mark.parametrize("cls, name, handler", HANDLERS, ids=IDS)
def test_an_unknown_or_missing_argument_is_refused(cls, name, handler):
    payload = sample_payload(handler.fn)
    assert argument_problem(handler.fn, {**payload, "forged": 1}) == "unknown argument: forged"
    for missing in payload:
        rest = {key: value for key, value in payload.items() if key != missing}
        assert argument_problem(handler.fn, rest) == f"missing argument: {missing}"


@pytest.mark.parametrize("forged", [[], "text", None])
def test_a_payload_that_is_no_object_is_refused(forged):
    _, _, handler = HANDLERS[0]
    assert argument_problem(handler.fn, forged).startswith("its arguments must be an object")


def test_the_handlers_cover_every_kind_of_annotation_the_check_reads():
    """Else the test above proves less than it seems: each kind of annotation is met by some handler."""
    hints = {str(hint) for _, _, handler in HANDLERS for _, hint in _parameters(handler.fn)}
    for kind in ("<class 'str'>", "<class 'int'>", "<class 'bool'>", "typing.Any", "dict[str, typing.Any]",
                 "dict[str, typing.Any] | None", "int | str"):
        assert kind in hints
