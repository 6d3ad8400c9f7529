"""What the database keeps: runs pruned by age and number per graph, schedule leases, file references found.

On SQLite and on the real PostgreSQL alike.
"""

from __future__ import annotations

import json

import pytest
from sqlalchemy import insert, select

from nodeflow_app.store.chats import ChatStore
from nodeflow_app.store.graphs import GraphStore
from nodeflow_app.store.pins import PinStore
from nodeflow_app.store.retention import (
    DAY, FIRES, NODES, REQUESTS, RUNS, Retention, RetentionError, _delete_runs, prune_fires, prune_runs,
    referenced_file_ids,
)

from tests.store.test_stores_on_both import engine  # noqa: F401 - the fixture: SQLite, then the real PostgreSQL

NOW = 1_800_000_000.0
KEEP_ALL = Retention(0, 0)


def add_run(engine, run_id: str, status: str, days_ago: float, *, graph: str = "g1", parent: str | None = None,
            finished: bool = True, outputs: object = None, now: float = NOW) -> None:
    started = now - days_ago * DAY
    with engine.begin() as conn:
        conn.execute(insert(RUNS).values(id=run_id, graph_id=graph, graph_json="{}", status=status,
                                         started_at=started, finished_at=started + 1 if finished else None,
                                         parent_run_id=parent))
        conn.execute(insert(NODES).values(run_id=run_id, node_id="n1", node_type="t", node_name="N", status=status,
                                          outputs_json=json.dumps(outputs) if outputs is not None else None))
        conn.execute(insert(REQUESTS).values(run_id=run_id, kind="stop", created_at=started))


def run_ids(engine) -> set[str]:
    with engine.connect() as conn:
        return set(conn.execute(select(RUNS.c.id)).scalars())


def node_run_ids(engine) -> set[str]:
    with engine.connect() as conn:
        return set(conn.execute(select(NODES.c.run_id)).scalars()) | set(
            conn.execute(select(REQUESTS.c.run_id)).scalars())


def test_finished_runs_past_the_age_go_with_their_nodes_and_requests_and_runs_still_going_stay(engine):
    add_run(engine, "old-done", "completed", 40)
    add_run(engine, "old-failed", "failed", 31)
    add_run(engine, "old-stopped", "cancelled", 45)
    add_run(engine, "old-interrupted", "interrupted", 35, finished=False)  # no finished_at: its start counts
    add_run(engine, "old-running", "running", 40, finished=False)
    add_run(engine, "old-paused", "paused", 90, finished=False)  # waits for an answer, however long
    add_run(engine, "young", "completed", 29)
    add_run(engine, "child-of-paused", "completed", 40, graph="g2", parent="old-paused")
    add_run(engine, "finished-parent", "completed", 50)
    add_run(engine, "child-of-finished", "completed", 40, graph="g2", parent="finished-parent")

    assert prune_runs(engine, Retention(30, 0), NOW) == 6

    kept = {"old-running", "old-paused", "young", "child-of-paused"}
    assert run_ids(engine) == kept
    assert node_run_ids(engine) == kept
    assert prune_runs(engine, Retention(30, 0), NOW) == 0


def test_an_interrupted_run_whose_node_waits_for_an_answer_is_never_pruned(engine):
    """Its process died while one branch ran and another waited: the answer can still be given (chat card,
    API resume), so it counts as going, by age and by number."""
    add_run(engine, "waiting", "interrupted", 90, finished=False)
    with engine.begin() as conn:
        conn.execute(NODES.update().where(NODES.c.run_id == "waiting").values(status="paused"))
    add_run(engine, "child-of-waiting", "completed", 80, graph="g2", parent="waiting")
    for day in range(3):
        add_run(engine, f"newer-{day}", "completed", 40 + day)
    add_run(engine, "g2-newest", "completed", 2, graph="g2")

    assert prune_runs(engine, Retention(0, 1), NOW) == 2  # by number: g1 keeps newer-0, g2 its newest
    assert run_ids(engine) == {"waiting", "newer-0", "child-of-waiting", "g2-newest"}
    assert prune_runs(engine, Retention(30, 0), NOW) == 1  # by age
    assert run_ids(engine) == {"waiting", "child-of-waiting", "g2-newest"}


def test_a_run_that_finished_within_the_last_day_is_not_pruned_by_number(engine):
    """A caller may still be polling for its result (the API), however long ago it started."""
    add_run(engine, "long", "completed", 2)
    with engine.begin() as conn:
        conn.execute(RUNS.update().where(RUNS.c.id == "long").values(finished_at=NOW - 60))
    for hour in range(1, 4):
        add_run(engine, f"short-{hour}", "completed", hour / 24)

    assert prune_runs(engine, Retention(0, 2), NOW) == 0
    assert prune_runs(engine, Retention(0, 2), NOW + 2 * DAY) == 2
    assert run_ids(engine) == {"short-1", "short-2"}


def test_a_run_taken_over_between_the_look_and_the_delete_stays_whole(engine):
    """The delete checks each run again: one resumed meanwhile keeps its row and its nodes' records."""
    add_run(engine, "old", "completed", 40)
    add_run(engine, "resumed", "running", 40, finished=False)  # was interrupted when the ids were read

    assert _delete_runs(engine, select(RUNS.c.id)) == 1

    assert run_ids(engine) == node_run_ids(engine) == {"resumed"}


def test_a_graph_keeps_its_newest_finished_runs_up_to_the_number(engine):
    for day in range(5):
        add_run(engine, f"g1-{day}", "completed" if day % 2 else "failed", day + 2)
    add_run(engine, "g1-paused", "paused", 10, finished=False)
    add_run(engine, "g2-0", "completed", 9, graph="g2")
    add_run(engine, "g2-1", "completed", 8, graph="g2")

    assert prune_runs(engine, Retention(0, 2), NOW) == 3

    assert run_ids(engine) == {"g1-0", "g1-1", "g1-paused", "g2-0", "g2-1"}


def test_many_runs_are_deleted_in_batches_until_none_is_left(engine, monkeypatch):
    monkeypatch.setattr("nodeflow_app.store.retention.BATCH", 3)
    for number in range(8):
        add_run(engine, f"r{number}", "completed", 40 + number)
    add_run(engine, "young", "completed", 1)

    assert prune_runs(engine, Retention(30, 0), NOW) == 8
    assert run_ids(engine) == {"young"}


def test_zero_keeps_everything(engine):
    add_run(engine, "ancient", "completed", 4000)
    add_run(engine, "also", "completed", 3000)

    assert prune_runs(engine, KEEP_ALL, NOW) == 0
    assert run_ids(engine) == {"ancient", "also"}


def test_schedule_leases_older_than_a_day_go_except_each_schedules_latest(engine):
    with engine.begin() as conn:
        for due in (1, 2, 3):
            conn.execute(insert(FIRES).values(graph_id="g1", node_id="s", due_at=NOW - 5 * DAY + due,
                                              fired_at=NOW - 5 * DAY + due, owner="p"))
        conn.execute(insert(FIRES).values(graph_id="g1", node_id="t", due_at=NOW - 9 * DAY, fired_at=NOW - 9 * DAY,
                                          owner="p"))
        for due in (1, 2):
            conn.execute(insert(FIRES).values(graph_id="g2", node_id="s", due_at=NOW - 60 + due,
                                              fired_at=NOW - 60 + due, owner="p"))

    assert prune_fires(engine, NOW - DAY) == 2

    with engine.connect() as conn:
        left = sorted((r.graph_id, r.node_id, r.due_at - NOW) for r in conn.execute(select(FIRES)))
    assert left == [("g1", "s", -5 * DAY + 3), ("g1", "t", -9 * DAY), ("g2", "s", -59), ("g2", "s", -58)]


def test_file_references_are_found_wherever_records_keep_them(engine):
    ids = [f"{n:x}" * 64 for n in range(1, 7)]
    reference = {"file_id": ids[0], "name": "a.pdf", "content_type": "application/pdf", "size": 3}
    add_run(engine, "r1", "completed", 1, outputs={"response": {"body": reference}})
    graphs = GraphStore(engine)
    graph = graphs.create("With a file", {"nodes": [{"id": "h", "type": "http_request", "name": "Fetch", "position": {"x": 0, "y": 0},
                                                     "data": {"note": {"file_id": ids[1]}}}], "edges": []})
    PinStore(engine).pin(graph.id, "h", {"out": json.dumps({"file_id": ids[2]}), "bare": ids[5]})  # JSON text
    chats = ChatStore(engine)
    chat = chats.create_chat(graph.id, "c")
    chats.add_message(chat.id, "assistant", [{"type": "file", "file_id": ids[3]}], parent_id=None)
    add_run(engine, "r2", "completed", 1, outputs={"digest": ids[4]})  # a hash, but no file reference

    found = referenced_file_ids(engine)

    assert set(ids[:4]) | {ids[5]} <= found  # a bare id counts outside the run records' big texts
    assert ids[4] not in found


def test_settings_come_from_the_environment_and_a_bad_one_is_named(monkeypatch):
    monkeypatch.delenv("NODEFLOW_RUNS_MAX_AGE_DAYS", raising=False)
    monkeypatch.delenv("NODEFLOW_RUNS_MAX_PER_GRAPH", raising=False)
    assert Retention.from_environment() == Retention(30, 10_000)
    monkeypatch.setenv("NODEFLOW_RUNS_MAX_AGE_DAYS", "0.5")
    monkeypatch.setenv("NODEFLOW_RUNS_MAX_PER_GRAPH", "0")
    assert Retention.from_environment() == Retention(0.5, 0)
    for name, value in (("NODEFLOW_RUNS_MAX_AGE_DAYS", "two weeks"), ("NODEFLOW_RUNS_MAX_AGE_DAYS", "-1"),
                        ("NODEFLOW_RUNS_MAX_AGE_DAYS", "nan"), ("NODEFLOW_RUNS_MAX_PER_GRAPH", "1.5")):
        monkeypatch.setenv("NODEFLOW_RUNS_MAX_AGE_DAYS", "30")
        monkeypatch.setenv("NODEFLOW_RUNS_MAX_PER_GRAPH", "10")
        monkeypatch.setenv(name, value)
        with pytest.raises(RetentionError, match=f"{name} must be a number .*{value!r}"):
            Retention.from_environment()
