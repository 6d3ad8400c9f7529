"""Fuzzing the normalizer: any JSON-like input gets a graph or issues, never an exception; a graph it
accepts holds nothing JSON or the database cannot (it dumps, and normalizes again to itself)."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from nodeflow_app.runtime.graph import normalize
from nodeflow_app.runtime.values import value_problem
from nodes._registry import default_registry

from tests.fuzz.strategies import fuzz, json_values, keys, text

REGISTRY = default_registry()
TYPES = [d.id for d in REGISTRY.definitions()]
HANDLES = ["input", "output", "true", "false", "tools", "tools-out", "model", "error", "else", "condition-0"]

ids = st.sampled_from(["a", "b", "c", "t"]) | text
node = st.fixed_dictionaries(
    {"id": ids, "type": st.sampled_from(TYPES) | text},
    optional={"name": st.sampled_from(["A", "B", "Start"]) | text, "version": st.integers(-2, 3) | json_values,
              "data": st.dictionaries(keys | st.sampled_from(["payload", "field", "operator", "value", "fields"]),
                                      json_values, max_size=3) | json_values,
              "position": st.fixed_dictionaries({"x": json_values, "y": st.floats()}),
              "settings": st.fixed_dictionaries({}, optional={"timeout": json_values, "error_mode": text,
                                                              "retry": st.dictionaries(keys, json_values)}),
              "parentId": ids | st.none()})
edge = st.fixed_dictionaries(
    {"id": ids, "source": ids, "target": ids, "sourceHandle": st.sampled_from(HANDLES) | text,
     "targetHandle": st.sampled_from(HANDLES) | text,
     "data": st.fixed_dictionaries({"channel": st.sampled_from(["flow", "link"]) | text})})
graphs = st.fixed_dictionaries(
    {"nodes": st.lists(node, max_size=6), "edges": st.lists(edge, max_size=6)},
    optional={"id": text, "name": text, "version": json_values, "viewport": st.dictionaries(keys, json_values)},
) | json_values


@fuzz
@given(raw=graphs, trigger=st.none() | ids)
def test_the_normalizer_never_raises_and_what_it_accepts_can_be_stored(raw, trigger):
    graph, issues = normalize(raw, REGISTRY, trigger=trigger)
    assert all(issue.message for issue in issues)
    if graph is not None and not issues:
        dumped = graph.model_dump(mode="json")
        assert value_problem(dumped, strict_text=True) is None
        text = json.dumps(dumped, allow_nan=False)
        text.encode("utf-8")
        again, again_issues = normalize(json.loads(text), REGISTRY)
        assert again_issues == [] and again.model_dump(mode="json") == dumped
