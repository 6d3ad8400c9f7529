"""The run store: runs written as they happen (batched), paused runs resumed by another process, crashes marked."""

from __future__ import annotations

import ast
import asyncio
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import event, func, text
from sqlalchemy import select as query

from nodeflow_app.runtime.engine import start_run
from nodeflow_app.store.db import create_all, make_engine
from nodeflow_app.store.run_control import STALE_AFTER, RunBusy, RunControl
from nodeflow_app.store.runs import NODES, RUNS, RunNotFound, RunStore
from nodeflow_app.contract import NodeDefinition, Socket

from tests.runtime import toys
from tests.store.postgres import POSTGRES_URL, private_schema
from tests.store.writes import recorded_writes

ROOT = Path(__file__).resolve().parents[2]


class Backend:
    """A database for one test: `url` (+ `schema` on PostgreSQL) and fresh stores on it, as a new process would open."""

    def __init__(self, url: str, schema: str | None = None):
        self.url, self.schema = url, schema
        self._engines = []

    def engine(self):
        engine = make_engine(self.url)
        self._engines.append(engine)
        return engine.execution_options(schema_translate_map={None: self.schema}) if self.schema else engine

    def store(self, **options) -> RunStore:
        return RunStore(self.engine(), **options)

    def child(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "tests.store._child", args[0], self.url, *args[1:],
                *([self.schema] if self.schema else [])]

    def close(self) -> None:
        for engine in self._engines:
            engine.dispose()


@pytest.fixture
def sqlite(tmp_path):
    backend = Backend(f"sqlite:///{tmp_path / 'nodeflow.db'}")
    create_all(backend.engine())
    yield backend
    backend.close()


@pytest.fixture
def postgres():
    """A private schema in the shared `test` database, dropped afterwards (nobody else's tables are touched)."""
    with private_schema() as schema:
        backend = Backend(POSTGRES_URL, schema)
        create_all(backend.engine())
        yield backend
        backend.close()


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request):
    return request.getfixturevalue("sqlite" if request.param == "sqlite" else "postgres")


def child_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def nodes_by_id(run: dict) -> dict[str, dict]:
    return {n["node_id"]: n for n in run["nodes"]}


def test_rows_reach_the_driver_compiled_once_each_value_converted_by_its_columns_type(backend):
    """A flush's upserts skip SQLAlchemy's per-write statement lookup and parameter rebuild (issue 17: ~5% of a webhook
    call's CPU): their SQL goes to the driver as compiled once, each value converted by its column's type as before
    (whole numbers in float columns read back as floats, `cached` as a boolean), in the engine's schema."""
    store = backend.store()
    compiled_per_write: list[bool] = []

    def seen(conn, cursor, statement, parameters, context, executemany):
        if statement.startswith("INSERT"):
            compiled_per_write.append(context.compiled is not None)

    event.listen(store.engine, "before_cursor_execute", seen)
    run = {"id": "r1", "graph_id": "g", "graph_version": 2, "graph_json": "{}", "trigger_id": "s", "payload_json": None,
           "status": "completed", "error": None, "started_at": 5, "finished_at": 6, "duration_ms": 1000,
           "started_by": "test", "started_by_user": None, "context_json": None, "owner": store.owner,
           "parent_run_id": None, "parent_node_id": None}
    node = {"run_id": "r1", "node_id": "s", "node_type": "start", "node_name": "S", "status": "completed",
            "inputs_json": None, "input_refs_json": None, "outputs_json": '{"out": 1}', "error": None, "duration_ms": 2,
            "sequence": 1, "cached": True, "updated_at": 7, "checkpoint_json": None, "wait_json": None,
            "resume_at": None}
    with store.engine.begin() as conn:
        store._upsert_runs(conn, [run])
        store._upsert_nodes(conn, [node, {**node, "node_id": "a", "cached": False, "duration_ms": None}])
    assert compiled_per_write == [False, False]
    with store.engine.connect() as conn:
        stored = conn.execute(query(RUNS.c.started_at, RUNS.c.duration_ms, RUNS.c.heartbeat_at)).one()
        nodes = conn.execute(query(NODES.c.node_id, NODES.c.cached, NODES.c.duration_ms, NODES.c.updated_at)
                             .order_by(NODES.c.node_id)).all()
    assert [type(v) for v in stored] == [float, float, float] and stored[:2] == (5.0, 1000.0)
    assert [tuple(n) for n in nodes] == [("a", False, None, 7.0), ("s", True, 2.0, 7.0)]
    assert type(nodes[1][2]) is float and type(nodes[1][3]) is float
    with pytest.raises(TypeError, match="Not a boolean value"), store.engine.begin() as conn:
        store._upsert_nodes(conn, [{**node, "cached": "yes"}])  # refused before the database sees it, as before


#  S --> A --> G --yes--> Y
#               \--no---> N
async def test_run_and_every_node_are_written(backend):
    store = backend.store()
    graph = toys.graph([("s", "start"), ("a", "pass"), ("g", "gate", {"open": False}), ("y", "pass"), ("n", "pass")],
                       ["s.out -> a.in", "a.out -> g.in", "g.yes -> y.in", "g.no -> n.in"])
    run = await start_run(graph, toys.registry(), payload={"v": 1}, hooks=store.hooks(),
                          context={"conversation": "c1", "started_by": "test"}).run()
    assert run.status == "completed"

    stored = backend.store().get_run(run.run_id)  # a fresh engine: only what reached the disk
    assert stored["status"] == "completed" and stored["error"] is None
    assert (stored["graph_id"], stored["trigger_id"], stored["payload"]) == ("g", "s", {"v": 1})
    assert stored["context"] == {"conversation": "c1", "started_by": "test"} and stored["started_by"] == "test"
    assert stored["owner"] == store.owner  # and its first heartbeat, in the database's clock (this machine's here)
    assert stored["started_at"] - 1 < stored["heartbeat_at"] < time.time() + 1
    assert [n["id"] for n in stored["graph"]["nodes"]] == ["s", "a", "g", "y", "n"]
    assert stored["duration_ms"] >= 0 and stored["finished_at"] >= stored["started_at"]
    nodes = nodes_by_id(stored)
    assert {k: n["status"] for k, n in nodes.items()} == {
        "s": "completed", "a": "completed", "g": "completed", "y": "skipped", "n": "completed"}
    assert nodes["a"]["inputs"] == {"in": {"v": 1}} and nodes["a"]["outputs"] == {"out": {"v": 1}}
    assert nodes["g"]["outputs"] == {"no": {"v": 1}} and nodes["n"]["outputs"] == {"out": {"v": 1}}
    assert all(nodes[k]["duration_ms"] >= 0 for k in "sagn")
    assert (nodes["a"]["node_type"], nodes["a"]["node_name"]) == ("toy-pass", "A")
    assert [n["node_id"] for n in stored["nodes"]][:3] == ["s", "a", "g"]  # in order of occurrence

    listed = store.list_runs(graph_id="g")
    assert [r["id"] for r in listed] == [run.run_id] and "graph_json" not in listed[0]
    assert listed[0]["trigger_name"] == nodes["s"]["node_name"]
    assert store.list_runs(graph_id="other") == []
    assert store.last_payload("g", "s") == (True, {"v": 1}) and store.last_payload("g", "a") == (False, None)


#  S --> BOOM
async def test_failed_run_keeps_the_node_error(backend):
    store = backend.store()
    graph = toys.graph([("s", "start"), ("b", "boom", {"label": "disk full"})], ["s.out -> b.in"])
    run = await start_run(graph, toys.registry(), payload=1, hooks=store.hooks()).run()
    stored = backend.store().get_run(run.run_id)
    assert stored["status"] == "failed" and "disk full" in stored["error"]
    assert nodes_by_id(stored)["b"]["status"] == "failed" and nodes_by_id(stored)["b"]["error"] == "boom: disk full"


#  S --> A --> B --> C --> D   (one 200 KB value travels the whole chain)
async def test_an_output_is_stored_once_not_copied_into_every_input(backend):
    store = backend.store()
    big = "x" * 200_000
    graph = toys.graph([("s", "start"), ("a", "pass"), ("b", "pass"), ("c", "pass"), ("d", "pass")],
                       ["s.out -> a.in", "a.out -> b.in", "b.out -> c.in", "c.out -> d.in"])
    run = await start_run(graph, toys.registry(), payload=big, hooks=store.hooks()).run()
    with backend.engine().connect() as conn:
        inputs, outputs = conn.execute(query(func.sum(func.length(func.coalesce(NODES.c.inputs_json, ""))),
                                              func.sum(func.length(NODES.c.outputs_json)))).one()
    assert inputs < 1_000 and 5 * 200_000 <= outputs < 5 * 201_000
    stored = backend.store().get_run(run.run_id)
    assert all(n["inputs"] == {"in": big} for n in stored["nodes"] if n["node_id"] != "s")


async def test_values_json_cannot_hold_degrade_to_strings(backend):
    class Odd:
        def __str__(self):
            return "<odd>"

    async def odd(data, inputs, ctx):
        return {"out": {"obj": Odd(), (1, 2): "tuple key"}}

    extra = (NodeDefinition(id="toy-odd", name="Odd", description="d", category="t", inputs=(Socket(id="in"),),
                            outputs=(Socket(id="out"),)), toys.Toy("toy-odd", odd))
    graph = toys.graph([("s", "start"), ("o", "odd")], ["s.out -> o.in"])
    graph["nodes"][1]["type"] = "toy-odd"
    store = backend.store()
    run = await start_run(graph, toys.registry(extra), payload=1, hooks=store.hooks()).run()
    assert run.status == "completed"
    outputs = nodes_by_id(backend.store().get_run(run.run_id))["o"]["outputs"]
    assert outputs == {"out": {"obj": "<odd>", "(1, 2)": "tuple key"}}


#  S --> ASK --yes--> Y
#            \--no--> N
async def test_paused_run_is_resumed_and_finished_by_another_process(backend):
    store = backend.store()
    graph = toys.graph([("s", "start"), ("ask", "ask"), ("y", "pass"), ("n", "pass")],
                       ["s.out -> ask.in", "ask.yes -> y.in", "ask.no -> n.in"])
    run = await start_run(graph, toys.registry(), payload={"q": 42}, hooks=store.hooks()).run()
    assert run.status == "paused"

    paused = backend.store().get_run(run.run_id)  # on disk before the run returned, no flush needed
    assert paused["status"] == "paused" and paused["finished_at"] is None
    ask = nodes_by_id(paused)["ask"]
    assert ask["status"] == "paused" and ask["wait"] == {"prompt": "yes or no?", "options": ["yes", "no"], "detail": {}}

    done = subprocess.run(backend.child("resume", run.run_id, "ask", "yes"), cwd=ROOT, env=child_env(),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["interrupted"] == [] and report["status"] == "completed"
    assert report["events"][0] == "resumed"

    finished = store.get_run(run.run_id)
    assert finished["status"] == "completed" and finished["duration_ms"] > 0
    nodes = nodes_by_id(finished)
    assert nodes["ask"]["status"] == "completed" and nodes["ask"]["outputs"] == {"yes": {"q": 42}}
    assert nodes["ask"]["inputs"] == {"in": {"q": 42}} and nodes["ask"]["wait"] is None
    assert nodes["y"]["status"] == "completed" and nodes["y"]["outputs"] == {"out": {"q": 42}}
    assert nodes["n"]["status"] == "skipped"
    assert store.list_runs()[0]["status"] == "completed"


async def test_a_run_whose_process_was_killed_is_marked_interrupted(backend):
    store = backend.store()
    ask = toys.graph([("s", "start"), ("ask", "ask")], ["s.out -> ask.in"])
    paused = await start_run(ask, toys.registry(), payload=1, hooks=store.hooks()).run()

    child = subprocess.Popen(backend.child("hang"), cwd=ROOT, env=child_env(), stdout=subprocess.PIPE, text=True)
    try:
        assert select.select([child.stdout], [], [], 60)[0], "the child never started its slow node"
        run_id = child.stdout.readline().strip()
        deadline = time.monotonic() + 10
        while (nodes_by_id(store.get_run(run_id)).get("slow") or {}).get("status") != "running":
            assert time.monotonic() < deadline, "the node in flight never reached the database"
            time.sleep(0.05)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
        child.stdout.close()

    assert store.get_run(run_id)["status"] == "running"  # nobody could say otherwise: the process just died
    assert store.mark_interrupted() == [run_id]
    stored = store.get_run(run_id)
    assert stored["status"] == "interrupted" and stored["finished_at"] is not None
    nodes = nodes_by_id(stored)
    assert nodes["s"]["status"] == "completed" and nodes["s"]["outputs"] == {"out": {"hello": "world"}}
    assert nodes["slow"]["status"] == "interrupted" and nodes["slow"]["inputs"] == {"in": {"hello": "world"}}
    assert "p" not in nodes
    assert store.get_run(paused.run_id)["status"] == "paused"
    assert store.mark_interrupted() == []


#  S --> N0 --> N1 --> ... --> N199
async def test_writes_are_batched_into_few_transactions(backend):
    engine = backend.engine()
    commits = []
    event.listen(engine, "commit", lambda conn: commits.append(1))
    store = RunStore(engine)
    graph = toys.graph([("s", "start")] + [(f"n{i}", "pass") for i in range(200)],
                       ["s.out -> n0.in"] + [f"n{i}.out -> n{i + 1}.in" for i in range(199)])
    run = await start_run(graph, toys.registry(), payload=1, hooks=store.hooks()).run()
    assert run.status == "completed"
    assert 2 <= len(commits) <= 20, len(commits)  # the start, the end, and one per flush interval
    stored = backend.store().get_run(run.run_id)
    assert len(stored["nodes"]) == 201 and {n["status"] for n in stored["nodes"]} == {"completed"}


#  S --> A, 20 runs at once in one event loop
async def test_runs_of_one_loop_share_commits_and_each_is_on_record_when_its_stream_ends(backend):
    engine = backend.engine()
    commits = []
    event.listen(engine, "commit", lambda conn: commits.append(1))
    store = RunStore(engine)
    reader = backend.engine()  # reads the database only: no store that could flush first
    graph = toys.graph([("s", "start"), ("a", "pass")], ["s.out -> a.in"])

    async def one(payload: int) -> tuple[str, str | None]:
        run = start_run(graph, toys.registry(), payload=payload, hooks=store.hooks())
        async for event_ in run.events():
            if event_.event_type == "started" and event_.node_id == "s":  # on record before its first node
                with reader.connect() as conn:
                    assert conn.execute(query(RUNS.c.status).where(RUNS.c.id == run.run_id)).scalar() == "running"
        with reader.connect() as conn:  # and its end before its consumer sees it
            return run.status, conn.execute(query(RUNS.c.status).where(RUNS.c.id == run.run_id)).scalar()

    assert await asyncio.gather(*(one(i) for i in range(20))) == [("completed", "completed")] * 20
    assert len(commits) < 20, len(commits)  # two status changes per run, many runs per transaction


def test_unknown_run():
    store = RunStore("sqlite://")
    create_all(store.engine)
    assert store.get_run("nope") is None
    assert not hasattr(store, "load_run")  # the store returns records; the launcher restores runs


def test_store_never_imports_reflex():
    for path in (ROOT / "nodeflow_app" / "store").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            assert not any(name.split(".")[0] == "reflex" for name in names), path


#  S --> N0 --> N1 --> ... --> N199 (one flush per interval while it runs)
async def test_a_busy_store_writes_through_one_connection_and_gives_it_back_when_idle(backend):
    engine = backend.engine()
    checkouts, commits = [], []
    event.listen(engine.pool if hasattr(engine, "pool") else engine, "checkout", lambda *a: checkouts.append(1))
    event.listen(engine, "commit", lambda conn: commits.append(1))
    store = RunStore(engine, flush_interval=0.001)
    graph = toys.graph([("s", "start")] + [(f"n{i}", "slow", {"delay": 0.002}) for i in range(40)],
                       ["s.out -> n0.in"] + [f"n{i}.out -> n{i + 1}.in" for i in range(39)])
    run = await start_run(graph, toys.registry(), payload=1, hooks=store.hooks()).run()
    assert run.status == "completed"
    assert len(commits) >= 10, len(commits)  # many flushes ...
    assert len(checkouts) <= 2, len(checkouts)  # ... one connection (no pool checkout, no pre-ping, per flush)
    store.flush()  # nothing left to write: the connection goes back to the pool
    assert engine.pool.checkedout() == 0
    assert backend.store().get_run(run.run_id)["status"] == "completed"


#  S --> N0 --> ... --> N39, the server dropping the store's write connection while it runs
async def test_on_postgresql_a_write_connection_the_server_dropped_is_replaced_and_nothing_is_lost(postgres, caplog):
    engine = postgres.engine()
    pids = []  # server processes of the store's connections
    event.listen(engine, "connect", lambda dbapi_conn, _record: pids.append(dbapi_conn.info.backend_pid))
    store = RunStore(engine, flush_interval=0.001)
    graph = toys.graph([("s", "start")] + [(f"n{i}", "slow", {"delay": 0.005}) for i in range(40)],
                       ["s.out -> n0.in"] + [f"n{i}.out -> n{i + 1}.in" for i in range(39)])
    run = start_run(graph, toys.registry(), payload=1, hooks=store.hooks())
    admin = make_engine(POSTGRES_URL)

    async def drop_the_write_connection() -> bool:
        while not pids:
            await asyncio.sleep(0.005)
        await asyncio.sleep(0.05)  # a few flushes have gone through it
        with admin.begin() as conn:
            return conn.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pids[0]}).scalar()

    dropped, _ = await asyncio.gather(drop_the_write_connection(), run.run())
    store.close()
    admin.dispose()
    assert dropped and run.status == "completed"
    assert "could not write run state, will retry" in caplog.text  # a flush met the dropped connection
    assert len(pids) >= 2, pids  # and a new connection took over
    stored = postgres.store().get_run(run.run_id)
    assert stored["status"] == "completed" and len(stored["nodes"]) == 41
    assert {n["status"] for n in stored["nodes"]} == {"completed"}


#  S --> A, 20 runs at once whose callers wait for their end
async def test_a_deferred_start_writes_a_short_run_once_with_its_end(backend):
    store = RunStore(backend.engine(), flush_interval=10.0)  # no run here outlives it
    writes = recorded_writes(store)
    reader = backend.engine()
    graph = toys.graph([("s", "start"), ("a", "pass")], ["s.out -> a.in"])

    async def one(payload: int) -> tuple[str, str | None]:
        run = start_run(graph, toys.registry(), payload=payload, hooks=store.hooks(defer_start=True))
        async for event_ in run.events():
            if event_.event_type == "started" and event_.node_id == "s":  # not on record on its own
                with reader.connect() as conn:
                    assert conn.execute(query(RUNS.c.status).where(RUNS.c.id == run.run_id)).scalar() is None
        with reader.connect() as conn:  # its end is, before its consumer sees it
            return run.status, conn.execute(query(RUNS.c.status).where(RUNS.c.id == run.run_id)).scalar()

    assert await asyncio.gather(*(one(i) for i in range(20))) == [("completed", "completed")] * 20
    # One run row each, never `running` first, never updated; its nodes written once, when done.
    assert sorted(writes) == [("node", "completed")] * 40 + [("run", "completed")] * 20
    stored = backend.store().get_run(store.list_runs(limit=1)[0]["id"])
    assert [(n["node_id"], n["status"]) for n in stored["nodes"]] == [("s", "completed"), ("a", "completed")]


def slow_deferred_run(store: RunStore, delay: float):
    """S --> Slow (`delay` s), started with a deferred start and driven in a task: (run, task)."""
    graph = toys.graph([("s", "start"), ("slow", "slow", {"delay": delay})], ["s.out -> slow.in"])
    run = start_run(graph, toys.registry(), payload=1, hooks=store.hooks(defer_start=True))
    return run, asyncio.ensure_future(run.run())


async def test_a_deferred_run_that_outlives_the_interval_is_on_record_while_it_runs(backend):
    store = RunStore(backend.engine(), flush_interval=0.02)
    run, driving = slow_deferred_run(store, 1.5)
    await asyncio.sleep(0.25)
    seen = backend.store().get_run(run.run_id)  # another store: it reads the database only
    assert seen["status"] == "running" and nodes_by_id(seen)["slow"]["status"] == "running"
    await driving
    assert backend.store().get_run(run.run_id)["status"] == "completed"


async def test_a_reader_of_the_store_sees_a_deferred_run_at_once(backend):
    store = RunStore(backend.engine(), flush_interval=10.0)
    run, driving = slow_deferred_run(store, 1.5)
    await asyncio.sleep(0.05)
    assert store.get_run(run.run_id)["status"] == "running"  # its own reads write what it holds first
    await driving
    assert backend.store().get_run(run.run_id)["status"] == "completed"


def slowed_in(thread: list[threading.Thread], engine, seconds: float) -> threading.Event:
    """The first statement `thread[0]` sends through `engine` takes `seconds` longer; the event is set as it starts."""
    writing = threading.Event()

    def slow(*_args):
        if thread and threading.current_thread() is thread[0] and not writing.is_set():
            writing.set()
            time.sleep(seconds)

    event.listen(engine, "before_cursor_execute", slow)
    return writing


#  S --> W1 (0.3 s) --> W2 (0.3 s), while a page reads the store from a thread and its flush's write takes 1 s
async def test_a_readers_slow_write_never_holds_up_the_runs_on_the_loop(backend):
    engine = backend.engine()
    store = RunStore(engine, flush_interval=10.0)  # the loop flushes on status changes only
    graph = toys.graph([("s", "start"), ("w1", "slow", {"delay": 0.3}), ("w2", "slow", {"delay": 0.3})],
                       ["s.out -> w1.in", "w1.out -> w2.in"])
    run = start_run(graph, toys.registry(), payload=1, hooks=store.hooks())
    driving = asyncio.ensure_future(run.run())
    await asyncio.sleep(0.1)  # on record; S's events and W1's start queued
    reader: list[threading.Thread] = [threading.Thread(target=store.flush)]
    writing = slowed_in(reader, engine, 1.0)
    reader[0].start()
    longest = 0.0  # the loop's longest pause meanwhile: W1 ends, W2 starts and ends, the run ends
    while reader[0].is_alive():
        before = time.monotonic()
        await asyncio.sleep(0.005)
        longest = max(longest, time.monotonic() - before)
    await driving
    assert writing.is_set() and longest < 0.2, longest
    stored = backend.store().get_run(run.run_id)
    assert stored["status"] == "completed" and [n["status"] for n in stored["nodes"]] == ["completed"] * 3


async def test_a_run_settles_only_once_the_readers_flush_that_took_its_status_is_written(backend):
    store = RunStore(backend.engine(), flush_interval=10.0)
    run = await start_run(toys.graph([("s", "start")], []), toys.registry(), payload=1).run()  # not written
    hooks = store.hooks()
    reader: list[threading.Thread] = [threading.Thread(target=store.flush)]
    writing = slowed_in(reader, store.engine, 0.5)
    hooks.on_run(run)  # queued: the loop's own flush waits for the end of this pass
    reader[0].start()
    assert writing.wait(10)  # the reader took it and is writing it
    await hooks.settle(run)
    with backend.engine().connect() as conn:
        assert conn.execute(query(RUNS.c.status).where(RUNS.c.id == run.run_id)).scalar() == "completed"
    reader[0].join()



#  S --> SLOW (0.3 s) --> ASK, started and later claimed by a host whose clock is 60 s behind; another host, whose
#  clock is 60 s ahead, looks for runs to take over meanwhile
async def test_hosts_whose_clocks_differ_agree_on_which_runs_are_live(backend, monkeypatch):
    engine = backend.engine()
    owner, other = RunControl(engine, "owner-host:1:x"), RunControl(engine, "other-host:2:y")
    real = time.time

    def clock(skew: float) -> None:
        monkeypatch.setattr(time, "time", lambda: real() + skew)

    clock(-60)
    graph = toys.graph([("s", "start"), ("slow", "slow", {"delay": 0.3}), ("ask", "ask")],
                       ["s.out -> slow.in", "slow.out -> ask.in"])
    run = start_run(graph, toys.registry(), payload=1, hooks=RunStore(engine, owner=owner.owner).hooks())
    driving = asyncio.ensure_future(run.run())
    await asyncio.sleep(0.1)  # on record: its insert is its first heartbeat
    clock(+60)
    assert other.recover() == []  # not taken over: to the database, that heartbeat is a moment old
    clock(-60)
    await driving
    assert run.status == "paused"
    owner.claim(run.run_id)  # the owner drives it again ...
    owner.heartbeat([run.run_id])  # ... and beats for it
    clock(+60)
    assert other.recover() == []
    assert other.owner_of(run.run_id) == ("running", owner.owner, True)
    with pytest.raises(RunBusy, match="already running"):
        other.claim(run.run_id)
    with engine.begin() as conn:  # the owner stops beating: STALE_AFTER later ...
        conn.execute(RUNS.update().values(heartbeat_at=RUNS.c.heartbeat_at - STALE_AFTER - 1))
    assert other.owner_of(run.run_id)[2] is False
    assert other.recover() == [run.run_id]  # ... the run is taken over, as before
