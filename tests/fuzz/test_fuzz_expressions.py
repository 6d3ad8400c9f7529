"""Fuzzing the expression parser and renderer: any text parses to a template or syntax errors, renders to a
value or an ExpressionError, never anything else (no ValueError on odd digits, no RecursionError)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from nodeflow_app.runtime.expressions import ExpressionError, check_syntax, referenced_nodes, render, resolve

from tests.fuzz.strategies import fuzz, json_values, text

PIECES = ["{{", "}}", " ", "$json", "input", "$trigger", ".json", "$(", ")", "'A'", '"B"', ".item", ".", "[",
          "]", "0", "-1", "²", "①", "9" * 30, "'", '"', "\\", "x", "name", "\n", "$", "{", "}"]
templates = st.one_of(text, st.lists(st.sampled_from(PIECES) | text, max_size=25).map("".join))


class Scope:
    def __init__(self, value):
        self.value = value

    def node_output(self, name):
        if name != "A":
            raise KeyError(name)
        return self.value

    def direct_input(self):
        return self.value

    def trigger_output(self):
        return {"json": self.value}


@fuzz
@given(template=templates, value=json_values)
def test_any_text_parses_and_renders_or_says_why(template, value):
    for error in check_syntax(template, parameter="p"):
        assert isinstance(error, ExpressionError) and str(error).startswith("parameter 'p': ")
    assert isinstance(referenced_nodes(template), set)
    try:
        render(template, Scope(value), parameter="p")
        resolve({"a": [template, {"b": template}]}, Scope(value))
    except ExpressionError as error:
        assert str(error)
