"""One bad run never harms another: 200 concurrent runs on one store, some carrying a poison value.

On SQLite and on the real PostgreSQL. Poison values are escaped (NUL, lone surrogates) or refused as a
node error naming the node (NaN, Infinity, huge numbers, deep nesting); a run whose rows the database
itself refuses is set aside with its error recorded. Every other run keeps every node record.
"""

from __future__ import annotations

import asyncio
import math

from sqlalchemy import event, text
from sqlalchemy.exc import OperationalError

from nodeflow_app.contract import NodeDefinition, NodeError, Socket
from nodeflow_app.runtime.engine import start_run
from nodeflow_app.store.runs import RunStore

from tests.runtime import toys
from tests.store.test_runs import nodes_by_id, backend, postgres, sqlite  # noqa: F401 - fixtures

DEEP: dict = {}
_level = DEEP
for _ in range(150):
    _level["a"] = {}
    _level = _level["a"]

# payload -> (run status, how the stored payload reads back, or None when the trigger refused it)
ESCAPED = {
    "nul": "a\x00b",
    "surrogate": "x\ud800y",
    "nul key": {"k\x00": 1},
    "surrogate key": {"\udcff": "stray byte from argv"},
}
REFUSED = {
    "nan": float("nan"),
    "infinity": float("inf"),
    "-infinity": [1, float("-inf")],
    "huge": 10 ** 5000,
    "deep": DEEP,
}


async def _shout(data, inputs, ctx):
    raise NodeError("bad \x00 and \ud800 in an error message")


SHOUT = (NodeDefinition(id="toy-shout", name="Shout", description="d", category="t", inputs=(Socket(id="in"),),
                        outputs=(Socket(id="out"),)), toys.Toy("toy-shout", _shout))


def chain(last: str = "pass", name: str | None = None) -> dict:
    #  S --> A --> B --> C
    graph = toys.graph([("s", "start"), ("a", "slow", {"delay": 0.01}), ("b", "pass"), ("c", last)],
                       ["s.out -> a.in", "a.out -> b.in", "b.out -> c.in"])
    graph["nodes"][3]["type"] = f"toy-{last}"
    if name:
        graph["nodes"][2]["name"] = name
    return graph


def refuse_node_named(backend, name: str) -> None:
    """A database trigger that refuses node rows named `name`: the database itself rejects one run's rows."""
    with backend.engine().begin() as conn:
        if backend.schema is None:
            conn.execute(text(f"CREATE TRIGGER refuse BEFORE INSERT ON node_run WHEN NEW.node_name = '{name}' "
                              "BEGIN SELECT RAISE(ABORT, 'this row is refused'); END"))
            return
        schema = backend.schema
        conn.execute(text(f'CREATE FUNCTION "{schema}".refuse() RETURNS trigger AS $$ BEGIN '
                          f"IF NEW.node_name = '{name}' THEN RAISE EXCEPTION 'this row is refused'; END IF; "
                          "RETURN NEW; END $$ LANGUAGE plpgsql"))
        conn.execute(text(f'CREATE TRIGGER refuse BEFORE INSERT ON "{schema}".node_run '
                          f'FOR EACH ROW EXECUTE FUNCTION "{schema}".refuse()'))


async def test_200_concurrent_runs_one_bad_run_never_harms_another(backend):
    refuse_node_named(backend, "REFUSE ME")
    store = backend.store()
    registry = toys.registry(SHOUT)
    plans = [("poison " + label, chain(), value) for label, value in {**ESCAPED, **REFUSED}.items()]
    plans += [("bad error text", chain("shout"), 1), ("refused by the database", chain(name="REFUSE ME"), 2)]
    plans += [(f"clean {i}", chain(), {"i": i}) for i in range(200 - len(plans))]
    runs = [start_run(graph, registry, payload=payload, hooks=store.hooks()) for _, graph, payload in plans]
    await asyncio.gather(*(run.run() for run in runs))
    store.close()

    reader = backend.store()
    by_label = {label: (run, reader.get_run(run.run_id)) for (label, _, _), run in zip(plans, runs)}
    for label, (run, stored) in by_label.items():
        if label.startswith("clean"):
            assert (run.status, stored["status"]) == ("completed", "completed"), label
            nodes = nodes_by_id(stored)
            assert sorted(nodes) == ["a", "b", "c", "s"] and {n["status"] for n in nodes.values()} == {"completed"}
            assert nodes["c"]["outputs"] == {"out": run.payload} and nodes["b"]["inputs"] == {"in": run.payload}

    for label, value in ESCAPED.items():  # stored escaped, read back as the very same value
        run, stored = by_label["poison " + label]
        assert stored["status"] == "completed" and stored["payload"] == value, label
        assert nodes_by_id(stored)["c"]["outputs"] == {"out": value}, label

    for label, value in REFUSED.items():  # the trigger's output is refused: a node error naming it
        run, stored = by_label["poison " + label]
        assert stored["status"] == "failed", label
        assert stored["error"].startswith("node 'S' failed: node 'S' output out"), stored["error"]
        assert nodes_by_id(stored)["s"]["status"] == "failed" and "a" not in nodes_by_id(stored)
    assert "nan is not a number JSON can hold" in by_label["poison nan"][1]["error"]
    assert "out[1]: -inf" in by_label["poison -infinity"][1]["error"]
    assert "nested deeper than 100 levels" in by_label["poison deep"][1]["error"]
    assert "whole number of 16,610 bits is too large" in by_label["poison huge"][1]["error"]
    huge = by_label["poison huge"][1]["payload"]
    assert huge == "<a whole number of 16610 bits>"  # the payload itself degrades, never fails the write
    assert math.isnan(by_label["poison nan"][1]["payload"])

    run, stored = by_label["bad error text"]
    assert stored["status"] == "failed" and nodes_by_id(stored)["c"]["error"] == r"bad \x00 and \ud800 in an error message"

    run, stored = by_label["refused by the database"]
    assert run.status == "completed"  # the run itself was fine; only its records could not be kept
    assert stored["status"] == "failed" and "this row is refused" in stored["error"], stored["error"]
    assert stored["error"].startswith("the run's records could not be stored")
    assert "b" not in nodes_by_id(stored)


async def test_a_write_that_fails_for_a_moment_is_written_by_the_next_flush(sqlite):  # noqa: F811
    engine = sqlite.engine()
    failures = []

    def flaky(conn, cursor, statement, parameters, context, executemany):
        if statement.lstrip().upper().startswith("INSERT INTO NODE_RUN") and len(failures) < 3:
            failures.append(statement)
            raise OperationalError(statement, parameters, Exception("database is locked"))

    event.listen(engine, "before_cursor_execute", flaky)
    store = RunStore(engine)
    run = await start_run(chain(), toys.registry(), payload={"v": 1}, hooks=store.hooks()).run()
    for _ in range(3):  # the database stays locked for three attempts (each flush is one)
        store.flush()
    store.close()
    assert len(failures) == 3, "the injected failure never happened"
    stored = sqlite.store().get_run(run.run_id)
    assert stored["status"] == "completed"
    assert {k: n["status"] for k, n in nodes_by_id(stored).items()} == dict.fromkeys("sabc", "completed")


async def test_a_run_set_aside_stays_aside_and_others_keep_writing(sqlite):  # noqa: F811
    refuse_node_named(sqlite, "REFUSE ME")
    store = sqlite.store()
    bad = start_run(chain(name="REFUSE ME"), toys.registry(), payload=1, hooks=store.hooks())
    good = start_run(chain(), toys.registry(), payload=2, hooks=store.hooks())
    await asyncio.gather(bad.run(), good.run())
    later = await start_run(chain(), toys.registry(), payload=3, hooks=store.hooks()).run()
    store.close()
    reader = sqlite.store()
    assert reader.get_run(bad.run_id)["status"] == "failed"  # never overwritten by its later "completed"
    for run in (good, later):
        stored = reader.get_run(run.run_id)
        assert stored["status"] == "completed" and len(stored["nodes"]) == 4
