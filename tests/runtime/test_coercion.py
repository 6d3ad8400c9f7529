"""The SPEC 4 coercion table: what connects (validated when wiring) and how values convert (at run time)."""

from __future__ import annotations

import pytest

from nodeflow_app.contract import SOCKET_TYPES
from nodeflow_app.runtime.coercion import CoercionError, can_connect, coerce

DOCUMENT = {"text": "Hello doc", "metadata": {"source": "a.txt"}}
MESSAGES = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "last words"}]

# Every row of the table: (source, target, value in, value out).
TABLE = [
    ("int", "float", 3, 3.0),
    ("int", "string", 42, "42"),
    ("float", "string", 1.5, "1.5"),
    ("boolean", "string", True, "true"),
    ("boolean", "string", False, "false"),
    ("string", "text", "hi", "hi"),
    ("text", "string", "hi", "hi"),
    ("json", "string", {"a": [1, 2], "b": "é"}, '{"a":[1,2],"b":"é"}'),
    ("json", "text", {"a": 1}, '{\n  "a": 1\n}'),
    ("document", "text", DOCUMENT, "Hello doc"),
    ("document", "json", DOCUMENT, DOCUMENT),
    ("string", "messages", "hello", [{"role": "user", "content": "hello"}]),
    ("messages", "string", MESSAGES, "last words"),
    ("messages", "string", [], ""),
]


@pytest.mark.parametrize(("source", "target", "value", "expected"), TABLE)
def test_table_row_connects_and_converts(source, target, value, expected):
    assert can_connect(source, target) == (True, "")
    converted = coerce(value, source, target)
    assert converted == expected
    assert type(converted) is type(expected)


@pytest.mark.parametrize("socket_type", sorted(SOCKET_TYPES))
def test_same_type_and_any_always_connect(socket_type):
    assert can_connect(socket_type, socket_type) == (True, "")
    assert can_connect(socket_type, "any") == (True, "")
    assert can_connect("any", socket_type) == (True, "")
    value = object()
    assert coerce(value, socket_type, socket_type) is value
    assert coerce(value, socket_type, "any") is value


@pytest.mark.parametrize(("source", "target", "accepted"), [
    ("json", "boolean", "boolean, any"),
    ("float", "int", "int, any"),
    ("string", "int", "int, any"),
    ("text", "messages", "messages, string, any"),
    ("string", "json", "json, document, any"),
    ("tools", "model", "model, any"),
    ("data", "string", "string, boolean, float, int, json, messages, text, any"),
    ("float", "text", "text, document, json, string, any"),
])
def test_refused_pairs_say_why(source, target, accepted):
    ok, reason = can_connect(source, target)
    assert not ok
    assert reason == f"a {source} output cannot connect to a {target} input; a {target} socket accepts {accepted}"


def test_coercion_is_one_way():
    # string<->text is the only pair that goes both ways.
    assert can_connect("float", "int")[0] is False
    assert can_connect("string", "boolean")[0] is False
    assert can_connect("text", "json")[0] is False
    assert can_connect("json", "document")[0] is False


def test_unknown_socket_type_is_refused():
    assert can_connect("agent", "tools") == (False, "unknown socket type 'agent'")
    assert can_connect("tools", "agent") == (False, "unknown socket type 'agent'")


def test_coerce_along_a_refused_wire_raises():
    with pytest.raises(CoercionError, match="cannot convert json to boolean"):
        coerce({"a": 1}, "json", "boolean")


def test_a_bad_value_on_a_valid_wire_raises_clearly():
    with pytest.raises(CoercionError, match=r"cannot convert document value \{'title': 'x'\} to text"):
        coerce({"title": "x"}, "document", "text")


# any -> X: accepted if the value already fits, else the natural conversion, else a clear error.
@pytest.mark.parametrize(("value", "target", "expected"), [
    ("hi", "string", "hi"),
    (7, "string", "7"),
    (True, "text", "true"),
    ({"a": 1}, "string", '{"a":1}'),
    ({"a": 1}, "text", '{\n  "a": 1\n}'),
    ("2.5", "float", 2.5),
    (2, "float", 2),
    ("3", "int", 3),
    ("3.0", "int", 3),
    (4.0, "int", 4),
    (False, "boolean", False),
    ([1, 2], "json", [1, 2]),
    ([1, 2], "array", [1, 2]),
    ([0.5, 1], "vector", [0.5, 1]),
    ("hello", "messages", [{"role": "user", "content": "hello"}]),
    (MESSAGES, "messages", MESSAGES),
    (DOCUMENT, "document", DOCUMENT),
    ("opaque", "tools", "opaque"),
    ("opaque", "data", "opaque"),
])
def test_any_to_typed_succeeds(value, target, expected):
    assert coerce(value, "any", target) == expected


@pytest.mark.parametrize(("value", "target"), [
    ("yes", "boolean"),
    (1, "boolean"),
    ("abc", "float"),
    ("3.5", "int"),
    (3.5, "int"),
    (True, "int"),
    ("x", "json"),
    ({"a": 1}, "array"),
    (["a"], "vector"),
    ([{"role": "user"}], "messages"),
    ({"title": "x"}, "document"),
])
def test_any_to_typed_fails_with_a_clear_error(value, target):
    with pytest.raises(CoercionError) as caught:
        coerce(value, "any", target)
    assert str(caught.value) == f"value {value!r} is not a valid {target}"


def test_long_values_are_shortened_in_errors():
    with pytest.raises(CoercionError) as caught:
        coerce("x" * 500, "any", "boolean")
    assert len(str(caught.value)) < 100
    assert "..." in str(caught.value)
