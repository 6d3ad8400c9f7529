"""value_problem: what JSON cannot hold is found wherever it sits, with its path (scalars in containers too)."""

from __future__ import annotations

import math

from nodeflow_app.runtime.values import MAX_INT_BITS, value_problem


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
