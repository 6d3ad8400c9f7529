"""The value check's fast paths (a C JSON encode, a flat check) must agree with the exact walk."""

import math

import pytest
from hypothesis import given, settings, strategies as st

from nodeflow_app.runtime import values
from nodeflow_app.runtime.values import MAX_DEPTH, MAX_INT_BITS, value_problem


def walked(value, strict_text=False):
    """The answer of the walk alone (no fast path)."""
    try:
        values._walk(value, 0, strict_text)
    except values._Bad as bad:
        return f"{values.format_path(reversed(bad.path))}: {bad.problem}"
    return None


def nested(depth, inner=1):
    value = inner
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    return value


@pytest.mark.parametrize("value", [
    nested(MAX_DEPTH), nested(MAX_DEPTH + 1), nested(MAX_DEPTH - 1, "[[[{{{"),
    {"text": "[" * 300}, [{"a": [1, 2, {"b": "]}"}]}] * 60, nested(MAX_DEPTH + 1, "x"),
    {"n": math.nan}, {"n": -math.inf}, [1 << (MAX_INT_BITS + 1)], [1 << (MAX_INT_BITS - 1)], 10 ** 4100,
    {"nul": "a\x00b"}, {"key\x00": 1}, {"lone": "\ud800"}, {"\udfff": "x"}, {"esc": "\\u0000 is text"},
    {"quote": 'say "[{"'}, {1: "int key"}, {(1, 2): "tuple key"}, {"set": {1, 2}}, ("a", 1.5, None, True),
])
@pytest.mark.parametrize("strict_text", [False, True])
def test_fast_paths_agree_with_the_walk(value, strict_text):
    assert value_problem(value, strict_text=strict_text) == walked(value, strict_text)


def test_a_circular_value_is_named():
    loop: list = [1]
    loop.append(loop)
    assert value_problem(loop) == "$[1]: contains itself (a circular reference)"


SPECIAL = st.sampled_from(["\x00", "\ud800", "\udfff", "[", "{", '"', "\\", "é", "0"])
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(alphabet=SPECIAL | st.characters()),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(alphabet=SPECIAL | st.characters(), max_size=5), inner, max_size=4),
    max_leaves=60)


@settings(max_examples=400, deadline=None)
@given(json_values, st.booleans())
def test_any_value_gets_the_walks_answer(value, strict_text):
    assert value_problem(value, strict_text=strict_text) == walked(value, strict_text)


def test_bad_scalars_inside_lists_and_objects_are_named_with_their_path():
    rows = [{"id": i, "total": 1.5, "ok": True, "note": None, "name": "x"} for i in range(3)]
    assert value_problem({"output": rows}) is None
    rows[2]["total"] = math.nan
    assert value_problem({"output": rows}) == (
        "$.output[2].total: nan is not a number JSON can hold (NaN and Infinity are refused)")
    assert value_problem([1, 2, 1 << (MAX_INT_BITS + 1)]).startswith("$[2]: a whole number of")
    assert value_problem({"a": [math.inf]}).startswith("$.a[0]: inf is not a number")
    assert value_problem({"text": "a\x00b"}) is None  # run values may hold NUL (the run store escapes it)
    assert value_problem({"text": "a\x00b"}, strict_text=True).startswith("$.text: holds a NUL character")


def test_small_nested_outputs_are_decided_without_the_walk():
    """The kernel checks every node's outputs: a webhook's payload, an object in an object, needs no walk."""
    payload = {"output": {"body": {"sku": "pen", "qty": 3, "tags": ["a", 1.5]}, "headers": {"host": "x"}, "query": {}}}
    assert values.plain_and_fine(payload) and values.plain_and_fine([[{"a": [None, True]}]])
    for bad in ({"output": {"body": {"n": math.nan}}}, {"output": [[1 << 70]]}, {"output": {"t": (1, 2)}},
                {"output": [list(range(80))]}, nested(6)):
        assert not values.plain_and_fine(bad), bad
    loop: dict = {}
    loop["self"] = loop
    assert not values.plain_and_fine(loop)


@settings(max_examples=400, deadline=None)
@given(json_values)
def test_what_the_plain_check_passes_the_walk_passes(value):
    assert not values.plain_and_fine(value) or walked(value) is None
