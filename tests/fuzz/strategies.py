"""Shared hypothesis settings and strategies for the fuzz tests (tests/fuzz).

Each test runs FUZZ_EXAMPLES examples: a few dozen in the normal suite (a few seconds each), as many as
NODEFLOW_FUZZ_EXAMPLES says for a full run (`NODEFLOW_FUZZ_EXAMPLES=10000 pytest tests/fuzz`).
"""

from __future__ import annotations

import math
import os

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

FUZZ_EXAMPLES = int(os.environ.get("NODEFLOW_FUZZ_EXAMPLES", "60"))

fuzz = settings(max_examples=FUZZ_EXAMPLES, deadline=None, database=None, derandomize=False,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.filter_too_much])

# Text with what breaks storage and parsers: NUL, lone surrogates, Unicode digits, braces, quotes.
POISON_CHARS = "\x00\ud800\udfff\udcff²①٣{}$()[]'\"\\.\n"
text = st.text(alphabet=st.one_of(st.characters(codec=None), st.sampled_from(POISON_CHARS)), max_size=40)
keys = st.one_of(st.sampled_from(["a", "json", "name", "", "\x00", "\ud800", "0"]), text)

class Huge(int):
    """A whole number too long for str(); shown by its size, so hypothesis can print a failing example."""

    def __repr__(self) -> str:
        return f"Huge(<{self.bit_length()} bits>)"


scalars = st.one_of(
    st.none(), st.booleans(), text,
    st.integers(min_value=-(10 ** 30), max_value=10 ** 30),
    st.integers(4400, 6000).map(lambda digits: Huge(10 ** digits)),  # over Python's 4,300-digit str() limit
    st.floats(allow_nan=True, allow_infinity=True),
)


def nested(depth: int) -> dict:
    value: dict = {}
    for _ in range(depth):
        value = {"a": value}
    return value


# JSON-like values, sometimes nested deeper than any limit.
json_values = st.one_of(
    st.recursive(scalars, lambda children: st.one_of(st.lists(children, max_size=4),
                                                     st.dictionaries(keys, children, max_size=4)), max_leaves=12),
    st.integers(min_value=90, max_value=400).map(nested),
)


def same(a: object, b: object) -> bool:
    """Equality where NaN equals NaN (what a round trip must preserve)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b
