"""Fuzzing the run store with poison values, on SQLite and on the real PostgreSQL: a run carrying any value
either completes with the value read back as it was, or fails with a node error naming the trigger; the
clean run written beside it in the same flushes always keeps every record."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import given

from nodeflow_app.runtime.engine import start_run
from nodeflow_app.runtime.values import value_problem
from nodeflow_app.store.db import create_all
from nodeflow_app.store.runs import RunStore

from tests.fuzz.strategies import fuzz, json_values, same
from tests.runtime import toys
from tests.store.test_runs import Backend
from tests.store.postgres import POSTGRES_URL, private_schema

#  S --> A --> B
GRAPH = toys.graph([("s", "start"), ("a", "pass"), ("b", "pass")], ["s.out -> a.in", "a.out -> b.in"])
REGISTRY = toys.registry()


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def store(request, tmp_path_factory):
    if request.param == "sqlite":
        backend = Backend(f"sqlite:///{tmp_path_factory.mktemp('fuzz') / 'runs.db'}")
        create_all(backend.engine())
        yield backend.store()
        backend.close()
        return
    with private_schema() as schema:
        backend = Backend(POSTGRES_URL, schema)
        create_all(backend.engine())
        yield backend.store()
        backend.close()


async def _both(store: RunStore, value):
    poison = start_run(GRAPH, REGISTRY, payload=value, hooks=store.hooks())
    clean = start_run(GRAPH, REGISTRY, payload={"clean": True}, hooks=store.hooks())
    await asyncio.gather(poison.run(), clean.run())
    return poison, clean


@fuzz
@given(value=json_values)
def test_any_value_is_stored_as_it_was_or_refused_naming_the_node(store, value):
    poison, clean = asyncio.run(_both(store, value))
    stored, beside = store.get_run(poison.run_id), store.get_run(clean.run_id)
    assert beside["status"] == "completed" and len(beside["nodes"]) == 3
    if value_problem({"out": value}) is None:
        assert stored["status"] == "completed"
        assert same(value, stored["nodes"][-1]["outputs"]["out"]) or isinstance(value, tuple)
    else:
        assert stored["status"] == "failed" and stored["error"].startswith("node 'S' failed: node 'S' output out")
        assert [n["node_id"] for n in stored["nodes"]] == ["s"]
