"""nodes/_helpers.py: paths, text, numbers, the comparison operators shared by Conditional and Switch,
and regular expressions with a time limit."""

import asyncio
import time

import pytest

from nodes._helpers import (
    MISSING, OPERATORS, compare, compare_async, get_path, is_empty, key_value_pairs, parse_path, primary_text,
    regex_search, require_path, set_path, to_number, to_text,
)
from nodeflow_app.contract import NodeError
from nodes.flow.conditional.definition import OPERATOR_OPTIONS
from tests.nodes.loop_ticks import loop_ticks

DOC = {"user": {"name": "Ada", "tags": ["a", "b"], "age": 36}, "items": [{"id": 1}, {"id": 2}],
       "weird key": {"x": None}}


# paths ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("path, steps", [
    ("", []),
    ("a", ["a"]),
    ("a.b.c", ["a", "b", "c"]),
    ("a.b[0].c", ["a", "b", 0, "c"]),
    ("items[-1]", ["items", -1]),
    ('["weird key"].x', ["weird key", "x"]),
    ("a['b.c']", ["a", "b.c"]),
    ("[0][1]", [0, 1]),
])
def test_parse_path(path, steps):
    assert parse_path(path) == steps


@pytest.mark.parametrize("name", ["sku", "  qty ", "order id", "a'b\"c", "é", "", "  "])
def test_a_plain_name_is_one_step_without_the_step_pattern(name, monkeypatch):
    """Edit Fields sets its fields by path on every call: a name without `.`, `[` or `]` takes no regex."""
    from nodes import _helpers

    expected = parse_path(name.strip() + ".x")[:-1] if name.strip() else []  # what the step pattern makes of it
    monkeypatch.setattr(_helpers, "_STEP", None)
    assert parse_path(name) == expected


@pytest.mark.parametrize("path", ["a..b", "a.", "a[x]", "a[0]b", "a[", ".a.", "a]", "]"])
def test_parse_path_rejects_malformed_paths(path):
    with pytest.raises(NodeError, match="invalid path"):
        parse_path(path)


def test_a_path_an_expression_made_a_number_or_null_is_read_as_text():
    """A whole-value expression ({{ $json.sort_by }}) keeps its type: a number reached `.strip()` as an int."""
    assert parse_path(3) == ["3"] and parse_path(None) == []
    assert get_path({"3": "c"}, 3) == "c" and get_path(["a", "b", "c", "d"], 3) == "d"
    with pytest.raises(NodeError, match=r"a path must be text, not list '\[1\]'"):
        parse_path([1])
    with pytest.raises(NodeError, match=r"a path must be text, not dict"):
        get_path({}, {"a": 1})



@pytest.mark.parametrize("path, expected", [
    ("", DOC),
    ("user.name", "Ada"),
    ("user.tags[1]", "b"),
    ("user.tags[-1]", "b"),
    ("user.tags.0", "a"),
    ("items[1].id", 2),
    ('["weird key"].x', None),
])
def test_get_path_finds_values(path, expected):
    assert get_path(DOC, path) == expected


@pytest.mark.parametrize("path", ["nope", "user.nope", "user.tags[5]", "user.name.first", "items.x", "user.age.x"])
def test_get_path_returns_missing(path):
    assert get_path(DOC, path) is MISSING
    assert get_path(DOC, path, default="d") == "d"


def test_missing_is_distinct_from_none_and_falsy():
    assert get_path({"a": None}, "a") is None
    assert not MISSING and repr(MISSING) == "MISSING"


def test_require_path_names_the_missing_path():
    assert require_path(DOC, "user.age") == 36
    with pytest.raises(NodeError, match=r"nothing at path 'user\.nope'"):
        require_path(DOC, "user.nope")


def test_set_path_creates_nested_objects_and_overwrites():
    target = {"user": {"name": "Ada"}, "list": [{"x": 1}]}
    set_path(target, "user.email", "ada@example.com")
    set_path(target, "meta.source.kind", "chat")
    set_path(target, "list[0].x", 2)
    set_path(target, "user.name", "Grace")
    assert target == {"user": {"name": "Grace", "email": "ada@example.com"},
                      "meta": {"source": {"kind": "chat"}}, "list": [{"x": 2}]}


def test_set_path_refuses_to_descend_into_a_scalar():
    with pytest.raises(NodeError, match=r"cannot set 'user\.name\.first': 'user\.name' is a str, not an object"):
        set_path({"user": {"name": "Ada"}}, "user.name.first", "A")
    with pytest.raises(NodeError, match=r"cannot set 'list\[3\]': 'list' has no item 3"):
        set_path({"list": []}, "list[3]", 1)
    with pytest.raises(NodeError, match="cannot be empty"):
        set_path({}, "  ", 1)


# key_value parameters ---------------------------------------------------------------------------

def test_key_value_pairs_accepts_rows_and_objects():
    assert key_value_pairs({"a": 1, "b": 2}, "fields") == [("a", 1), ("b", 2)]
    rows = [{"name": "a", "value": 1}, {"key": "b", "value": "x"}, {"name": "", "value": ""}, {}]
    assert key_value_pairs(rows, "fields") == [("a", 1), ("b", "x")]
    assert key_value_pairs([{"name": "", "value": 5}], "fields") == [("", 5)]
    assert key_value_pairs(None, "fields") == []


def test_key_value_pairs_rejects_other_shapes():
    with pytest.raises(NodeError, match="variables must be a list of name/value rows or an object, got str"):
        key_value_pairs("a=1", "variables")
    with pytest.raises(NodeError, match="fields row 1 must be an object"):
        key_value_pairs([{"name": "a"}, "b"], "fields")


# text and numbers -------------------------------------------------------------------------------

@pytest.mark.parametrize("value, text", [
    ("hi", "hi"), (None, ""), (MISSING, ""), (3, "3"), (2.5, "2.5"), (True, "true"),
    ({"a": [1, "é"]}, '{"a":[1,"é"]}'),
])
def test_to_text(value, text):
    assert to_text(value) == text


@pytest.mark.parametrize("value, text", [
    ({"message": "m", "response": "r", "text": "t"}, "m"),
    ({"response": "r", "text": "t"}, "r"),
    ({"text": "t"}, "t"),
    ({"message": None, "text": "t"}, "t"),
    ({"message": {"k": 1}}, '{"k":1}'),
    ({"other": 1}, '{"other": 1}'),
    ("plain string", "plain string"),
    ([1, 2], "[1, 2]"),
    (7, "7"),
    (None, ""),
])
def test_primary_text(value, text):
    assert primary_text(value) == text


@pytest.mark.parametrize("value, number", [
    (3, 3.0), (2.5, 2.5), ("4", 4.0), (" -1.5 ", -1.5), ("1e3", 1000.0),
    (True, None), ("", None), ("abc", None), (None, None), ([1], None), ("nan", None), (float("nan"), None),
    pytest.param(10**400, float("inf"), id="10**400"), pytest.param(-(10**400), float("-inf"), id="-10**400"),  # past a float: infinite, not an OverflowError
])
def test_to_number(value, number):
    assert to_number(value) == number


def test_huge_whole_numbers_compare_as_infinities():
    assert compare(10**400, "gt", "5") and compare(10**400, "gt", 10**399) is False
    assert compare(10**400, "equals", "5") is False and compare(10**400, "equals", 10**400)


@pytest.mark.parametrize("value, empty", [
    (MISSING, True), (None, True), ("", True), ([], True), ({}, True),
    (0, False), (False, False), (" ", False), ([None], False), ("x", False),
])
def test_is_empty(value, empty):
    assert is_empty(value) is empty


# comparisons ------------------------------------------------------------------------------------

def test_operator_options_match_the_evaluator():
    assert tuple(option.value for option in OPERATOR_OPTIONS) == OPERATORS


@pytest.mark.parametrize("actual, operator, expected, result", [
    # equals / not_equals: numbers numerically, text case-insensitively by default
    ("Ada", "equals", "ada", True),
    ("Ada", "equals", "Bob", False),
    (36, "equals", "36", True),
    ("36.0", "equals", "36", True),
    (True, "equals", "true", True),
    (None, "equals", "", True),
    ({"a": 1}, "equals", '{"a":1}', True),
    ("Ada", "not_equals", "ada", False),
    ("Ada", "not_equals", "Bob", True),
    (1, "not_equals", "1.0", False),
    # contains / not_contains: substring, list item, object key
    ("Hello World", "contains", "world", True),
    ("Hello", "contains", "xyz", False),
    (["a", "B"], "contains", "b", True),
    ([1, 2, 3], "contains", "2", True),
    ([1, 2, 3], "contains", "4", False),
    ({"Name": 1}, "contains", "name", True),
    ("Hello World", "not_contains", "world", False),
    (["a"], "not_contains", "b", True),
    # starts_with / ends_with
    ("Hello World", "starts_with", "hello", True),
    ("Hello World", "starts_with", "World", False),
    ("Hello World", "ends_with", "WORLD", True),
    ("Hello World", "ends_with", "Hello", False),
    (12345, "starts_with", "12", True),
    # gt / gte / lt / lte
    (10, "gt", "9", True),
    ("10", "gt", "9", True),  # numerically, not as text
    (9, "gt", 9, False),
    (9, "gte", "9", True),
    (8.5, "gte", "9", False),
    (-1, "lt", "0", True),
    (0, "lt", "0", False),
    (0, "lte", "0", True),
    (1, "lte", "0.5", False),
    # is_empty / is_not_empty
    ("", "is_empty", "", True),
    ([], "is_empty", "ignored", True),
    ("x", "is_empty", "", False),
    (0, "is_not_empty", "", True),
    ({}, "is_not_empty", "", False),
    # regex: search, case-insensitive by default
    ("order #1234", "regex", r"#\d{4}", True),
    ("ORDER", "regex", "^order$", True),
    ("order", "regex", r"^\d+$", False),
    (42, "regex", "^4", True),
])
def test_compare(actual, operator, expected, result):
    assert compare(actual, operator, expected) is result


@pytest.mark.parametrize("operator, expected, result", [
    ("equals", "ada", False), ("equals", "Ada", True), ("not_equals", "ada", True),
    ("contains", "DA", False), ("starts_with", "ad", False), ("ends_with", "DA", False),
    ("regex", "^ada$", False), ("regex", "^Ada$", True),
])
def test_compare_case_sensitive(operator, expected, result):
    assert compare("Ada", operator, expected, case_sensitive=True) is result


def test_case_sensitive_list_contains():
    assert compare(["A"], "contains", "a", case_sensitive=True) is False
    assert compare(["A"], "contains", "A", case_sensitive=True) is True


@pytest.mark.parametrize("operator, result", [
    ("is_empty", True), ("is_not_empty", False), ("equals", False), ("not_equals", False),
    ("contains", False), ("not_contains", False), ("starts_with", False), ("ends_with", False),
    ("gt", False), ("gte", False), ("lt", False), ("lte", False), ("regex", False),
])
def test_missing_value_is_empty_and_fails_other_tests(operator, result):
    assert compare(MISSING, operator, "x") is result


@pytest.mark.parametrize("actual, expected, shown", [("abc", "1", "'abc'"), (5, "five", "'five'"),
                                                     (True, "1", "'true'"), (5, "", "''")])
def test_ordering_needs_numbers(actual, expected, shown):
    with pytest.raises(NodeError, match=f"operator 'gt' compares numbers, but {shown} is not a number"):
        compare(actual, "gt", expected)


def test_bad_regex_is_a_node_error():
    with pytest.raises(NodeError, match=r"invalid regular expression '\(unclosed': missing \) at position 9"):
        compare("x", "regex", "(unclosed")


def test_unknown_operator():
    with pytest.raises(NodeError, match="unknown operator 'equal'; use one of: equals, not_equals"):
        compare("x", "equal", "x")


# A pattern that backtracks exponentially: (a|a)* tries 2^n ways before the '!' makes it fail.
CATASTROPHIC, VICTIM = r"^(a|a)*$", "a" * 40 + "!"


def test_a_catastrophic_regex_stops_at_its_time_limit_with_a_node_error():
    started = time.monotonic()
    with pytest.raises(NodeError, match=r"regular expression '\^\(a\|a\)\*\$' took longer than 0.2 s on a text "
                                        r"of 41 characters; simplify it"):
        regex_search(CATASTROPHIC, VICTIM, time_limit=0.2)
    assert time.monotonic() - started < 3  # the limit is checked periodically: a little over it
    assert regex_search(r"(\d+)-(\d+)", "call 555-1234").groups() == ("555", "1234")


async def test_a_regex_runs_off_the_event_loop_and_a_timeout_ends_the_wait_at_once():
    started = time.monotonic()
    async with loop_ticks() as ticks:
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.3):  # what the kernel does for a node's timeout
                await compare_async(VICTIM, "regex", CATASTROPHIC)
    waited = time.monotonic() - started
    assert waited < 0.6, waited  # the node's timeout, not the search's own 1 s limit
    assert ticks[0] >= 5, ticks  # the event loop kept running meanwhile (blocked, it would tick once at most)
    assert await compare_async("Hello", "regex", "^h") is True  # case-insensitive unless asked
    assert await compare_async("Hello", "regex", "^h", case_sensitive=True) is False


# prepared conditions, path getters, lists, escapes (the data nodes) -------------------------------

from nodes._helpers import condition, items_at, path_getter, unescape  # noqa: E402


@pytest.mark.parametrize("actual", ["Ada", "ada lovelace", 36, "36", 36.0, ["ada"], {"ada": 1}, None, MISSING, "", True])
@pytest.mark.parametrize("operator, expected", [(o, e) for o in OPERATORS for e in ("ada", "36", "^a")
                                                if o not in ("gt", "gte", "lt", "lte")])
def test_a_prepared_condition_answers_like_compare(actual, operator, expected):
    for case_sensitive in (False, True):
        test = condition(operator, expected, case_sensitive=case_sensitive)
        assert test(actual) == compare(actual, operator, expected, case_sensitive=case_sensitive)


def test_a_prepared_ordering_checks_the_expected_side_on_first_use():
    test = condition("gt", "ten")  # no error yet: a missing actual never needs the bound
    assert test(MISSING) is False
    with pytest.raises(NodeError, match="'ten' is not a number"):
        test(3)
    assert condition("lte", "2.5")(2) and condition("gt", 1)("1.5") and not condition("gt", 1)(float(1))
    with pytest.raises(NodeError, match="'NaN' is not a number"):
        condition("gt", 1)(float("nan"))
    with pytest.raises(NodeError, match="unknown operator 'near'"):
        condition("near", 1)


def test_path_getter_matches_get_path():
    for path in ("", "user", "user.name", "items[1].id", '["weird key"].x', "nope", "user.tags[5]"):
        assert path_getter(path)(DOC) == get_path(DOC, path)
    assert path_getter("a")([1]) is MISSING and path_getter("0")(["x"]) == "x"


def test_items_at():
    assert items_at(DOC, "items") is DOC["items"]
    assert items_at([1, 2], "") == [1, 2] and items_at((1, 2), "") == [1, 2]
    with pytest.raises(NodeError, match=r"nothing at field 'orders'; the input has: user, items, weird key"):
        items_at(DOC, "orders")
    with pytest.raises(NodeError, match=r"field 'user\.name' holds str 'Ada', not a list"):
        items_at(DOC, "user.name")


def test_unescape():
    assert unescape(r"a\nb\tc\rd\\n") == "a\nb\tc\rd\\n" and unescape("é, ") == "é, "


def test_a_prepared_regex_condition_has_the_time_limit_too():
    test = condition("regex", CATASTROPHIC)  # what Filter runs per item
    with pytest.raises(NodeError, match=r"took longer than 1 s on a text of 41 characters"):
        test(VICTIM)
    assert test("aaa") is True
