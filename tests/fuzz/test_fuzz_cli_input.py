"""Fuzzing the CLI's input parsing: any file content or argument gives a value or exit 2 with one line,
never a traceback."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from nodeflow_app.cli import InputError, main, parse_payload

from tests.fuzz.strategies import fuzz, json_values, text

deep_texts = st.integers(1, 3000).map(lambda n: "[" * n + "]" * n)


def safe_dumps(value) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=True)
    except (ValueError, RecursionError):
        return "[" * 5000


@fuzz
@given(argument=text | json_values.map(safe_dumps) | deep_texts)
def test_a_payload_argument_is_a_value_or_a_clear_input_error(argument):
    try:
        value = parse_payload(argument, "--input")
    except InputError as error:
        assert str(error).startswith("--input") and "\n" not in str(error)
    else:
        json.dumps(value, allow_nan=False).encode("utf-8")


@fuzz
@given(content=st.binary(max_size=300) | json_values.map(lambda v: safe_dumps(v).encode("utf-8", "surrogatepass"))
       | deep_texts.map(str.encode))
def test_validate_any_file_exits_0_or_2_with_one_line(tmp_path_factory, content):
    path = tmp_path_factory.mktemp("fuzz") / "graph.json"
    path.write_bytes(content)
    assert main(["validate", str(path)]) in (0, 2)
