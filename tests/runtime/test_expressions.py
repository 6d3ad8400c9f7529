"""The `{{ ... }}` expression language: every syntax form, raw vs interpolated, resolve, every error."""

from __future__ import annotations

import ast
import pickle
from pathlib import Path
from typing import Any

import pytest

from nodeflow_app.runtime import expressions
from nodeflow_app.runtime.expressions import (
    ExpressionError,
    Scope,
    check_syntax,
    has_expression,
    referenced_nodes,
    render,
    resolve,
)

INPUT = {
    "user": {"name": "Ada", "age": 36, "tags": ["a", "b"]},
    "items": [{"id": 1}, {"id": 2}, {"id": 3}],
    "empty": [],
    "text": "hello",
    "flag": True,
    "off": False,
    "none": None,
    "ratio": 0.5,
    "odd key": "spaced",
    "it's": "quoted",
    "]}": "brackets",
}
NODES = {
    "Fetch User": {"body": {"email": "ada@example.com"}, "status": 200},
    'Say "hi"': {"ok": 1},
    "Lister": [10, 20, 30],
}
TRIGGER = {"message": "hi there", "files": []}


class FakeScope:
    """A Scope over fixed data; `trigger=None` means the run has no trigger output."""

    def __init__(self, nodes: dict[str, Any] | None = None, direct: Any = INPUT, trigger: Any = TRIGGER):
        self.nodes = NODES if nodes is None else nodes
        self.direct = direct
        self.trigger = trigger
        self.calls = 0

    def node_output(self, name: str) -> Any:
        self.calls += 1
        if name not in self.nodes:
            raise KeyError(name)
        return self.nodes[name]

    def direct_input(self) -> Any:
        self.calls += 1
        return self.direct

    def trigger_output(self) -> Any:
        self.calls += 1
        if self.trigger is None:
            raise KeyError("$trigger")
        return self.trigger


SCOPE = FakeScope()


def test_fake_scope_satisfies_the_protocol() -> None:
    assert isinstance(SCOPE, Scope)


# --- syntax forms (a lone expression renders to the raw value) ---------------------------------

RAW_CASES = [
    ("{{ $json }}", INPUT),
    ("{{$json}}", INPUT),
    ("{{ input }}", INPUT),
    ("{{ $json.user }}", INPUT["user"]),
    ("{{ input.user.name }}", "Ada"),
    ("{{ $json.user.age }}", 36),
    ("{{ $json.flag }}", True),
    ("{{ $json.none }}", None),
    ("{{ $json.ratio }}", 0.5),
    ("{{ $json['user']['name'] }}", "Ada"),
    ('{{ $json["user"]["name"] }}', "Ada"),
    ("{{ $json['odd key'] }}", "spaced"),
    ("{{ $json['it\\'s'] }}", "quoted"),
    ('{{ $json["it\'s"] }}', "quoted"),
    ("{{ $json[']}'] }}", "brackets"),
    ("{{ $json.items[0].id }}", 1),
    ("{{ $json.items[-1].id }}", 3),
    ("{{ $json.items[-3]['id'] }}", 1),
    ("{{ $json.user.tags[1] }}", "b"),
    ("{{ $json . user . name }}", "Ada"),
    ("{{ $json [ 'items' ] [ 1 ] . id }}", 2),
    ("  {{ $json.user.age }}\n", 36),
    ("{{ $('Fetch User').item.json.body.email }}", "ada@example.com"),
    ('{{ $("Fetch User").item.json.status }}', 200),
    ("{{ $('Fetch User').json.body }}", {"email": "ada@example.com"}),
    ("{{ $('Fetch User').json }}", NODES["Fetch User"]),
    ("{{ $( 'Fetch User' ) . item . json . status }}", 200),
    ('{{ $("Say \\"hi\\"").json.ok }}', 1),
    ("{{ $('Say \"hi\"').json.ok }}", 1),
    ("{{ $('Lister').json[2] }}", 30),
    ("{{ $trigger.json }}", TRIGGER),
    ("{{ $trigger.json.message }}", "hi there"),
    ("{{ $trigger.json['files'] }}", []),
]


@pytest.mark.parametrize(("text", "expected"), RAW_CASES, ids=[c[0] for c in RAW_CASES])
def test_lone_expression_renders_raw_value(text: str, expected: Any) -> None:
    assert check_syntax(text) == []
    assert render(text, SCOPE) == expected


def test_raw_value_is_the_object_itself_not_a_copy() -> None:
    assert render("{{ $json.user }}", SCOPE) is INPUT["user"]


# --- mixed text is interpolated --------------------------------------------------------------

INTERPOLATED_CASES = [
    ("Hi {{ $json.user.name }}!", "Hi Ada!"),
    ("{{ $json.user.name }} is {{ $json.user.age }}", "Ada is 36"),
    ("{{ $json.user.name }}{{ $json.user.age }}", "Ada36"),
    ("on={{ $json.flag }} off={{ $json.off }}", "on=true off=false"),
    ("none=[{{ $json.none }}]", "none=[]"),
    ("ratio {{ $json.ratio }}", "ratio 0.5"),
    ("user {{ $json.user }}", 'user {"name":"Ada","age":36,"tags":["a","b"]}'),
    ("tags {{ $json.user.tags }}", 'tags ["a","b"]'),
    ("unicode {{ $json.u }}", "unicode {\"k\":\"é\"}"),
    ("from {{ $('Fetch User').item.json.body.email }} via {{ $trigger.json.message }}",
     "from ada@example.com via hi there"),
    ("a } b }} c { d", "a } b }} c { d"),
    ("x {{ $json.text }} }} y", "x hello }} y"),
]


@pytest.mark.parametrize(("text", "expected"), INTERPOLATED_CASES, ids=[c[0] for c in INTERPOLATED_CASES])
def test_mixed_text_is_interpolated(text: str, expected: str) -> None:
    scope = FakeScope(direct={**INPUT, "u": {"k": "é"}})
    assert render(text, scope) == expected


@pytest.mark.parametrize("value", ["plain text", "", "a } b", "{ not { an expression }", 42, None, 1.5])
def test_text_without_braces_is_returned_untouched(value: Any) -> None:
    scope = FakeScope()
    assert render(value, scope) is value
    assert scope.calls == 0
    assert not has_expression(value)
    assert check_syntax(value) == []
    assert referenced_nodes(value) == set()


def test_has_expression() -> None:
    assert has_expression("{{ $json }}")
    assert has_expression("broken {{")
    assert not has_expression("{ single }")


# --- resolve ---------------------------------------------------------------------------------


def test_resolve_walks_dicts_and_lists() -> None:
    data = {
        "url": "https://x.test/{{ $json.user.name }}",
        "count": 3,
        "enabled": False,
        "body": "{{ $json.user }}",
        "fields": [
            {"name": "a", "value": "{{ $json.items[0].id }}"},
            {"name": "b", "value": "static"},
            ["{{ $trigger.json.message }}", None],
        ],
        "tuple": ("{{ $json.text }}",),
    }
    assert resolve(data, SCOPE) == {
        "url": "https://x.test/Ada",
        "count": 3,
        "enabled": False,
        "body": INPUT["user"],
        "fields": [
            {"name": "a", "value": 1},
            {"name": "b", "value": "static"},
            ["hi there", None],
        ],
        "tuple": ("hello",),
    }


def test_resolve_does_not_mutate_its_input() -> None:
    data = {"a": ["{{ $json.text }}"]}
    resolve(data, SCOPE)
    assert data == {"a": ["{{ $json.text }}"]}


@pytest.mark.parametrize(
    ("value", "parameter", "where", "start"),
    [
        ({"fields": [{}, {}, {"value": "{{ $json.nope }}"}]}, None, "fields row 3 value", "fields row 3 value: "),
        ([{}, {}, {"value": "{{ $json.nope }}"}], "fields", "row 3 value", "parameter 'fields': row 3 value: "),
        ({"headers": {"X-Key": "{{ $json.nope }}"}}, "options", "headers X-Key",
         "parameter 'options': headers X-Key: "),
        (["{{ $json.nope }}"], None, "row 1", "row 1: "),
        ("{{ $json.nope }}", "url", "", "parameter 'url': "),
    ],
)
def test_resolve_names_the_spot_inside_a_parameter_as_validate_does(value: Any, parameter: str | None, where: str,
                                                                    start: str) -> None:
    """As the inspector shows it, rows from 1 (validation._expression_texts names it with the same `place`)."""
    with pytest.raises(ExpressionError) as caught:
        resolve(value, SCOPE, parameter=parameter)
    assert (caught.value.parameter, caught.value.where) == (parameter, where)
    assert str(caught.value).startswith(f"{start}$json.nope: field 'nope' not found")


def test_resolve_fast_path_for_a_thousand_plain_parameters() -> None:
    """Plain values never reach the parser or the scope (speed itself is measured in benchmarks/)."""
    data = {f"p{i}": f"plain value {i}" if i % 2 else i for i in range(1000)}
    scope = FakeScope()
    expressions._parse_short.cache_clear()
    assert resolve(data, scope) == data
    assert scope.calls == 0
    assert expressions._parse_short.cache_info().currsize == 0


def test_parse_is_cached_per_template() -> None:
    expressions._parse_short.cache_clear()
    for _ in range(5):
        render("Hi {{ $json.user.name }}", SCOPE)
    info = expressions._parse_short.cache_info()
    assert (info.misses, info.hits) == (1, 4)


# --- referenced nodes --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{{ $('A').json }} and {{ $(\"B\").item.json.x }}", {"A", "B"}),
        ("{{ $('A').json.x }}{{ $('A').json.y }}", {"A"}),
        ("{{ $json.a }} {{ $trigger.json }} {{ input }}", set()),
        ("{{ $('Good').json }} {{ $('Broken'", {"Good"}),
        ("{{ $json['$(\\'Fake\\')'] }}", set()),
    ],
)
def test_referenced_nodes(text: str, expected: set[str]) -> None:
    assert referenced_nodes(text) == expected


# --- syntax errors ---------------------------------------------------------------------------

# (text, message before " at column", column, quoted expression)
SYNTAX_ERRORS = [
    ("Hello {{ $json.a] }}", "unexpected ']'", 17, "{{ $json.a] }}"),
    ("{{ $json.a + 1 }}", "unexpected '+'", 12, "{{ $json.a + 1 }}"),
    ("{{ $json.a() }}", "unexpected '('", 11, "{{ $json.a() }}"),
    ("{{ $json.a.b c }}", "unexpected 'c'", 14, "{{ $json.a.b c }}"),
    ("{{ $json 'x' }}", "unexpected text \"x\"", 10, "{{ $json 'x' }}"),
    ("{{ }}", "empty expression", 4, "{{ }}"),
    ("{{}}", "empty expression", 3, "{{}}"),
    ("{{ json.x }}", "unknown name 'json'; expressions start with $json, input, $trigger.json or $('Node name')",
     4, "{{ json.x }}"),
    ("{{ $node.x }}", "unknown name '$node'", 4, "{{ $node.x }}"),
    ("{{ 'text' }}", "unexpected text \"text\"; expressions start with", 4, "{{ 'text' }}"),
    ("{{ .x }}", "unexpected '.'; expressions start with", 4, "{{ .x }}"),
    ("{{ $json. }}", "expected a field name after '.', found '}}'", 11, "{{ $json. }}"),
    ("{{ $json.0 }}", "expected a field name after '.', found '0'", 10, "{{ $json.0 }}"),
    ("{{ $json[] }}", "expected a quoted key or a whole number inside [ ], found ']'", 10, "{{ $json[] }}"),
    ("{{ $json[a] }}", "expected a quoted key or a whole number inside [ ], found 'a'", 10, "{{ $json[a] }}"),
    ("{{ $json[1.5] }}", "expected ']', found '.'", 11, "{{ $json[1.5] }}"),
    ("{{ $json['a' }}", "expected ']', found '}}'", 14, "{{ $json['a' }}"),
    ("{{ $json['a }}", "the quote ' is never closed", 10, "{{ $json['a }}"),
    ("{{ $json[- 1] }}", "expected a quoted key or a whole number inside [ ], found '-'", 10, "{{ $json[- 1] }}"),
    ("{{ $ }}", "expected '(' after $, as in $('Node name'), found '}}'", 6, "{{ $ }}"),
    ("{{ $(Foo).json }}", "expected a quoted node name, as in $('Node name'), found 'Foo'", 6,
     "{{ $(Foo).json }}"),
    ("{{ $('Foo'.json }}", "expected ')' after the node name, found '.'", 11, "{{ $('Foo'.json }}"),
    ("{{ $('Foo') }}", "expected '.item.json' or '.json' after $(...), found '}}'", 13, "{{ $('Foo') }}"),
    ("{{ $('Foo').item }}", "expected '.json' after '.item', found '}}'", 18, "{{ $('Foo').item }}"),
    ("{{ $('Foo').item.x }}", "expected '.item.json' or '.json' after $(...), found 'x'", 18,
     "{{ $('Foo').item.x }}"),
    ("{{ $('Foo').first().json }}", "expected '.item.json' or '.json' after $(...), found 'first'", 13,
     "{{ $('Foo').first().json }}"),
    ("{{ $trigger }}", "expected '.json' after $trigger, found '}}'", 13, "{{ $trigger }}"),
    ("{{ $trigger.item.json }}", "expected '.json' after $trigger, found 'item'", 13,
     "{{ $trigger.item.json }}"),
    ("{{ $json.a {{ $json.b }}", "unexpected '{'", 12, "{{ $json.a {{ $json.b }}"),
    ("abc {{ $json.a", "unterminated '{{' (no closing '}}')", 5, "{{ $json.a"),
    ("{{ $json.", "unterminated '{{' (no closing '}}')", 1, "{{ $json."),
    ("{{ $('Foo'", "unterminated '{{' (no closing '}}')", 1, "{{ $('Foo'"),
    ("x {{", "unterminated '{{' (no closing '}}')", 3, "{{"),
]


@pytest.mark.parametrize(("text", "message", "column", "source"), SYNTAX_ERRORS, ids=[c[0] for c in SYNTAX_ERRORS])
def test_syntax_errors(text: str, message: str, column: int, source: str) -> None:
    [error] = check_syntax(text)
    assert error.message.startswith(message)
    assert (error.position, error.line, error.expression, error.parameter) == (column, None, source, None)
    assert str(error) == f"{error.message} at column {column} in {source}"
    with pytest.raises(ExpressionError) as caught:
        render(text, SCOPE, parameter="url")
    assert str(caught.value) == f"parameter 'url': {error.message} at column {column} in {source}"


def test_syntax_error_example_from_the_spec() -> None:
    [error] = check_syntax("Hello {{ $json.a] }}")
    assert str(error) == "unexpected ']' at column 17 in {{ $json.a] }}"


def test_check_syntax_reports_every_broken_expression_and_names_the_parameter() -> None:
    text = "{{ $json.a] }} ok {{ $json.b }} then {{ x }} and {{ $json."
    errors = check_syntax(text, parameter="body")
    assert [(e.message.split(";")[0], e.position, e.expression) for e in errors] == [
        ("unexpected ']'", 11, "{{ $json.a] }}"),
        ("unknown name 'x'", 41, "{{ x }}"),
        ("unterminated '{{' (no closing '}}')", 50, "{{ $json."),
    ]
    assert all(str(e).startswith("parameter 'body': ") for e in errors)


def test_multiline_text_reports_line_and_column() -> None:
    text = "Dear {{ $json.user.name }},\n  your order {{ $json.items[0]] }} shipped"
    [error] = check_syntax(text)
    assert (error.line, error.position) == (2, 31)
    assert str(error) == "unexpected ']' at line 2, column 31 in {{ $json.items[0]] }}"


# --- evaluation errors -----------------------------------------------------------------------

# (text, full message of str(error) without the parameter prefix)
EVALUATION_ERRORS = [
    (
        "{{ $('Foo').item.json.x }}",
        "$('Foo') — no node named 'Foo' ran before this one (is it upstream and did it run?)"
        " at column 4 in {{ $('Foo').item.json.x }}",
    ),
    (
        'x {{ $("Foo").json }}',
        "$(\"Foo\") — no node named 'Foo' ran before this one (is it upstream and did it run?)"
        ' at column 6 in {{ $("Foo").json }}',
    ),
    (
        "{{ $json.user.nmae }}",
        "$json.user.nmae: field 'nmae' not found (did you mean 'name'? available: name, age, tags)"
        " at column 15 in {{ $json.user.nmae }}",
    ),
    (
        "{{ $json.user['zzz'] }}",
        "$json.user['zzz']: field 'zzz' not found (available: name, age, tags) at column 15 in {{ $json.user['zzz'] }}",
    ),
    (
        "{{ $json.zzz }}",
        "$json.zzz: field 'zzz' not found (available: user, items, empty, text, flag, off, none, ratio,"
        " odd key, it's, ]}) at column 10 in {{ $json.zzz }}",
    ),
    (
        "{{ $json.items[3] }}",
        "$json.items[3]: index 3 is out of range — $json.items has 3 items (valid: 0 to 2, or -1 to -3)"
        " at column 16 in {{ $json.items[3] }}",
    ),
    (
        "{{ $json.items[-4].id }}",
        "$json.items[-4]: index -4 is out of range — $json.items has 3 items (valid: 0 to 2, or -1 to -3)"
        " at column 16 in {{ $json.items[-4].id }}",
    ),
    (
        "{{ $json.empty[0] }}",
        "$json.empty[0]: index 0 is out of range — $json.empty is an empty list at column 16 in {{ $json.empty[0] }}",
    ),
    (
        "{{ $json.user[0] }}",
        "$json.user[0]: cannot take item [0] — $json.user is an object, not a list at column 15 in {{ $json.user[0] }}",
    ),
    (
        "{{ $json.text[0] }}",
        '$json.text[0]: cannot take item [0] — $json.text is a text ("hello"), not a list'
        " at column 15 in {{ $json.text[0] }}",
    ),
    (
        "{{ $json.items.id }}",
        "$json.items.id: cannot read field 'id' — $json.items is a list of 3 items, not an object"
        " (pick one item first, e.g. $json.items[0]) at column 16 in {{ $json.items.id }}",
    ),
    (
        "{{ $json.items['id'] }}",
        "$json.items['id']: cannot read field 'id' — $json.items is a list of 3 items, not an object"
        " (pick one item first, e.g. $json.items[0]) at column 16 in {{ $json.items['id'] }}",
    ),
    (
        "{{ $json.empty.x }}",
        "$json.empty.x: cannot read field 'x' — $json.empty is an empty list, not an object"
        " at column 16 in {{ $json.empty.x }}",
    ),
    (
        "{{ $json.user.name.first }}",
        "$json.user.name.first: cannot read field 'first' — $json.user.name is a text (\"Ada\"), not an object"
        " at column 20 in {{ $json.user.name.first }}",
    ),
    (
        "{{ $json.none.x }}",
        "$json.none.x: cannot read field 'x' — $json.none is empty (null), not an object at column 15 in {{ $json.none.x }}",
    ),
    (
        "{{ $json.flag.x }}",
        "$json.flag.x: cannot read field 'x' — $json.flag is a boolean (true), not an object"
        " at column 15 in {{ $json.flag.x }}",
    ),
    (
        "{{ $json.user.age.x }}",
        "$json.user.age.x: cannot read field 'x' — $json.user.age is a number (36), not an object"
        " at column 19 in {{ $json.user.age.x }}",
    ),
    (
        "{{ $('Lister').json.x }}",
        "$('Lister').json.x: cannot read field 'x' — $('Lister').json is a list of 3 items, not an object"
        " (pick one item first, e.g. $('Lister').json[0]) at column 21 in {{ $('Lister').json.x }}",
    ),
    (
        "{{ $('Fetch User').item.json.body.emial }}",
        "$('Fetch User').item.json.body.emial: field 'emial' not found (did you mean 'email'? available: email)"
        " at column 35 in {{ $('Fetch User').item.json.body.emial }}",
    ),
]


@pytest.mark.parametrize(("text", "expected"), EVALUATION_ERRORS, ids=[c[0] for c in EVALUATION_ERRORS])
def test_evaluation_errors(text: str, expected: str) -> None:
    assert check_syntax(text) == []
    with pytest.raises(ExpressionError) as caught:
        render(text, SCOPE)
    assert str(caught.value) == expected
    with pytest.raises(ExpressionError) as caught:
        render(f"in text: {text}", SCOPE, parameter="prompt")
    assert str(caught.value).startswith("parameter 'prompt': " + expected.split(" at column ")[0])


def test_missing_trigger_output() -> None:
    with pytest.raises(ExpressionError) as caught:
        render("{{ $trigger.json.message }}", FakeScope(trigger=None), parameter="text")
    assert str(caught.value) == (
        "parameter 'text': $trigger.json — this run has no trigger output at column 4 in {{ $trigger.json.message }}"
    )


def test_missing_field_with_empty_object_and_long_key_lists() -> None:
    with pytest.raises(ExpressionError, match=r"field 'x' not found \(the object is empty\)"):
        render("{{ $json.x }}", FakeScope(direct={}))
    wide = {f"k{i:02}": i for i in range(25)}
    with pytest.raises(ExpressionError, match=r"available: k00, k01, .*, k19, … \(5 more\)\)"):
        render("{{ $json.zzz }}", FakeScope(direct=wide))


def test_no_direct_input_reads_as_null() -> None:
    assert render("{{ $json }}", FakeScope(direct=None)) is None
    with pytest.raises(ExpressionError, match=r"\$json is empty \(null\), not an object"):
        render("{{ $json.x }}", FakeScope(direct=None))


def test_a_present_key_holding_null_is_not_missing() -> None:
    assert render("{{ $json.none }}", SCOPE) is None


def test_expression_error_is_a_value_error_that_pickles() -> None:
    error = ExpressionError("boom", expression="{{ x }}", position=4, parameter="url", line=2)
    assert isinstance(error, ValueError)
    copy = pickle.loads(pickle.dumps(error))
    assert (str(copy), copy.position, copy.line, copy.parameter) == (str(error), 4, 2, "url")
    placed = pickle.loads(pickle.dumps(ExpressionError("boom", parameter="fields", where="row 2 value")))
    assert (str(placed), placed.where) == ("parameter 'fields': row 2 value: boom", "row 2 value")
    assert str(ExpressionError("plain")) == "plain"


# --- the kernel stays small ---------------------------------------------------------------------


def test_module_imports_only_the_standard_library() -> None:
    tree = ast.parse(Path(expressions.__file__).read_text())
    imported = {
        (node.module if isinstance(node, ast.ImportFrom) else alias.name).split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
    }
    assert imported <= {"__future__", "collections", "dataclasses", "difflib", "functools", "json", "typing"}


def test_never_uses_python_eval() -> None:
    source = Path(expressions.__file__).read_text()
    assert "eval(" not in source.replace("_evaluate(", "")
    assert "exec(" not in source


# --- bounds: digits, cache, hints ------------------------------------------------------------


@pytest.mark.parametrize("index, shown", [("²", "'²'"), ("①", "'①'"), ("٣", "'٣'")])
def test_only_ascii_digits_make_an_index(index: str, shown: str) -> None:
    text = f"{{{{ $json.items[{index}] }}}}"
    [error] = check_syntax(text)
    assert str(error) == (f"expected a quoted key or a whole number inside [ ], found {shown} at column 16 in {text}")
    with pytest.raises(ExpressionError):
        render(text, SCOPE)


def test_a_number_too_long_for_an_index_is_a_syntax_error_not_a_crash() -> None:
    text = "{{ $json.items[" + "9" * 5000 + "] }}"
    [error] = check_syntax(text)
    assert error.message == "the number is too long (an index has at most 18 digits)" and error.position == 16
    assert render("{{ $json.user.tags[" + "0" * 18 + "] }}", SCOPE) == render("{{ $json.user.tags[0] }}", SCOPE)


def test_the_parse_cache_is_bounded_in_characters() -> None:
    import tracemalloc

    expressions._parse_short.cache_clear()
    expressions._parse_long.cache_clear()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for i in range(300):  # 300 distinct 100 KB prompts: 30 MB of text
        render("{{ $json.user.name }} " + "x" * 100_000 + str(i), SCOPE)
    grown = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert grown < 8_000_000, grown
    assert expressions._parse_long.cache_info().currsize == 16
    huge = "{{ $json.user.name }}" + "y" * (2 << 20)
    assert render(huge, SCOPE) == "Ada" + "y" * (2 << 20)
    assert expressions._parse_long.cache_info().currsize == 16  # too long to keep


def test_a_did_you_mean_hint_stays_cheap_on_long_keys_and_wide_objects() -> None:
    import time

    wide = {"email": 1} | {"a" * 500 + str(i): i for i in range(8000)}  # 4 MB of similar long names

    class Wide(FakeScope):
        def direct_input(self):
            return wide

    started = time.monotonic()
    with pytest.raises(ExpressionError, match="field 'emial' not found \\(did you mean 'email'\\?"):
        render("{{ $json.emial }}", Wide())
    with pytest.raises(ExpressionError, match="not found \\(available: email, aaaa"):
        render("{{ $json." + "a" * 500 + "x }}", Wide())  # difflib alone spends seconds on this one
    assert time.monotonic() - started < 1


def test_a_text_of_expressions_stops_at_its_limit_naming_the_parameter(monkeypatch) -> None:
    """Each expression copies its value: a short template repeating one over a large input asked for gigabytes."""
    monkeypatch.setattr(expressions, "MAX_RENDERED_CHARS", 1_000, raising=False)
    scope = FakeScope(direct={"a": "x" * 300, "big": "y" * 5_000})
    assert render("{{ $json.a }}-" * 3, scope, parameter="p") == ("x" * 300 + "-") * 3
    assert render("{{ $json.big }}", scope, parameter="p") == "y" * 5_000  # a lone expression is its value, no copy
    with pytest.raises(ExpressionError, match=r"^parameter 'p': the text its expressions make is over 1,000 "
                                              r"characters; pass a large value as a lone expression, or on a wire$"):
        render("{{ $json.a }}" * 4, scope, parameter="p")
