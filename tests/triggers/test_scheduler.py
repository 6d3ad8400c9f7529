"""The scheduler: due times from cron (in a time zone) and intervals, missed runs skipped or run once, only
active graphs, and each due time fired exactly once by two processes racing on SQLite and on PostgreSQL."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import text
from sqlalchemy.exc import OperationalError

from nodeflow_app.runs.launcher import RunLauncher
from nodeflow_app.store.graphs import GraphStore
from nodeflow_app.store.triggers import TriggerStore
from nodeflow_app.triggers.activation import Activation, ActivationRefused
from nodeflow_app.triggers.scheduler import Scheduler
from nodeflow_app.triggers.schedules import describe_next, parse
from tests.llm.graphs import graph
from tests.store.postgres import POSTGRES_URL, private_schema

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def timed(**schedule) -> dict:
    """Schedule -> Edit Fields."""
    return graph([("clock", "schedule-trigger", schedule), ("note", "edit-fields", {"fields": []})],
                 ["clock.output -> note.input"])


class Clock:
    def __init__(self, now: float):
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def world(tmp_path):
    launcher = RunLauncher(f"sqlite:///{tmp_path / 'db.sqlite'}")
    graphs, triggers = GraphStore(launcher.engine), TriggerStore(launcher.engine)
    yield launcher, graphs, triggers, Activation(launcher, triggers, graphs)
    launcher.close()


def test_cron_due_times_follow_the_time_zone():
    spec = parse({"mode": "cron", "cron": "0 9 * * *", "timezone": "Europe/Paris"})
    winter = datetime(2026, 1, 5, 12, tzinfo=ZoneInfo("UTC")).timestamp()
    [first] = spec.next_times(winter, 1)
    assert datetime.fromtimestamp(first, ZoneInfo("UTC")).hour == 8  # 9:00 in Paris is 8:00 UTC in winter
    assert spec.payload(first) == {"scheduled_at": "2026-01-06T09:00:00+01:00", "timezone": "Europe/Paris"}


def local_times(spec, start: datetime, end: datetime) -> list[str]:
    """The due times in (start, end] as wall times in the schedule's zone, with their offsets."""
    return [datetime.fromtimestamp(t, spec.zone).isoformat() for t in spec.due_between(start.timestamp(),
                                                                                         end.timestamp())]


@pytest.mark.parametrize("cron, zone, day, expected", [
    ("30 1 * * *", "America/New_York", (2026, 11, 1), ["01:30:00-04:00"]),
    ("0 2 * * *", "Europe/Paris", (2026, 10, 25), ["02:00:00+02:00"]),
    ("30 2 * * *", "Europe/Paris", (2026, 10, 25), ["02:30:00+02:00"]),
    ("15 1-3 * * *", "Europe/Paris", (2026, 10, 25), ["01:15:00+02:00", "02:15:00+02:00", "03:15:00+01:00"])])
def test_when_clocks_go_back_a_job_at_a_fixed_hour_runs_once(cron, zone, day, expected):
    """The repeated hour's wall times come twice and croniter yields both; cron (vixie, cronie) runs a job at
    a fixed hour once, in the first of them: a nightly job ran twice that night."""
    spec = parse({"mode": "cron", "cron": cron, "timezone": zone})
    tz = ZoneInfo(zone)
    date = "%04d-%02d-%02dT" % day
    assert local_times(spec, datetime(*day, 0, 0, tzinfo=tz), datetime(*day, 23, 0, tzinfo=tz)) == [
        date + time for time in expected]


@pytest.mark.parametrize("cron, expected", [
    ("0 * * * *", ["02:00:00+02:00", "02:00:00+01:00", "03:00:00+01:00"]),
    ("0 */1 * * *", ["02:00:00+02:00", "02:00:00+01:00", "03:00:00+01:00"]),
    ("*/30 * * * *", ["02:00:00+02:00", "02:30:00+02:00", "02:00:00+01:00", "02:30:00+01:00", "03:00:00+01:00"]),
    ("*/30 2 * * *", ["02:00:00+02:00", "02:30:00+02:00", "02:00:00+01:00", "02:30:00+01:00"])])
def test_when_clocks_go_back_an_hourly_job_runs_in_both_hours(cron, expected):
    """Its hour or minute field is `*` (or its hour a step): like cron, it keeps running in real time, both
    passes of the repeated hour included."""
    spec = parse({"mode": "cron", "cron": cron, "timezone": "Europe/Paris"})
    utc = ZoneInfo("UTC")
    # 00:00 UTC on 2026-10-25 is 02:00 CEST; an hour later it is 02:00 again (CET)
    assert local_times(spec, datetime(2026, 10, 24, 23, 59, tzinfo=utc), datetime(2026, 10, 25, 2, 0, tzinfo=utc)) == [
        "2026-10-25T" + time for time in expected]


def test_when_clocks_go_forward_a_skipped_time_runs_once_after_the_gap():
    """02:30 does not exist on 2026-03-29 in Paris (02:00 CET becomes 03:00 CEST): the job runs at 03:00."""
    spec = parse({"mode": "cron", "cron": "30 2 * * *", "timezone": "Europe/Paris"})
    paris = ZoneInfo("Europe/Paris")
    assert local_times(spec, datetime(2026, 3, 28, 12, tzinfo=paris), datetime(2026, 3, 30, 12, tzinfo=paris)) == [
        "2026-03-29T03:00:00+02:00", "2026-03-30T02:30:00+02:00"]


def test_the_next_three_times_or_why_not():
    now = datetime(2026, 1, 5, 8, 7, tzinfo=ZoneInfo("UTC")).timestamp()
    assert describe_next({"mode": "interval", "every": 15, "unit": "minutes"}, now) == [
        "Mon 2026-01-05 08:15:00 UTC", "Mon 2026-01-05 08:30:00 UTC", "Mon 2026-01-05 08:45:00 UTC"]
    assert "five fields" in describe_next({"mode": "cron", "cron": "0 9 * *"}, now)
    assert "unknown time zone" in describe_next({"cron": "0 9 * * *", "timezone": "Mars/Base"}, now)


def test_activation_refuses_a_bad_schedule_and_a_graph_without_live_triggers(world):
    _, graphs, _, activation = world
    with pytest.raises(ActivationRefused, match="five fields"):
        activation.activate(graphs.create("Bad", timed(cron="nope")).id)
    manual = graph([("m", "manual-trigger", {})], [])
    with pytest.raises(ActivationRefused, match="add a Webhook or Schedule trigger"):
        activation.activate(graphs.create("Manual", manual).id)


@pytest.mark.parametrize("cron", ["0 0 31 4 *", "0 0 30 2 *", "0 0 31 2,4 *"])
def test_a_cron_that_never_comes_due_is_refused_and_the_inspector_says_why(world, cron):
    """April 31st is valid cron syntax but no date matches it: croniter raises when asked for the next time,
    which broke the inspector and, once active, the scheduler's tick."""
    _, graphs, _, activation = world
    with pytest.raises(ValueError, match="never comes due"):
        parse({"mode": "cron", "cron": cron})
    with pytest.raises(ActivationRefused, match="never comes due"):
        activation.activate(graphs.create("Never", timed(mode="cron", cron=cron)).id)
    now = datetime(2026, 1, 5, 8, 7, tzinfo=ZoneInfo("UTC")).timestamp()
    assert "never comes due" in describe_next({"mode": "cron", "cron": cron}, now)
    assert describe_next({"mode": "cron", "cron": "0 0 29 2 *"}, now) == [  # rare, but it comes
        "Tue 2028-02-29 00:00:00 UTC", "Sun 2032-02-29 00:00:00 UTC", "Fri 2036-02-29 00:00:00 UTC"]


@pytest.mark.parametrize("cron, fine", [("0 R * * *", False), ("R 6 * * MON-FRI", False), ("0 9 * * FRI", True),
                                        ("0 0 1 MAR,APR *", True)])
def test_a_cron_with_a_random_field_is_refused(cron, fine):
    """croniter reads a lone R as a random value drawn again for every next time: each process and each tick
    would pick another hour. Month and day names with an R in them are fine."""
    if fine:
        assert parse({"mode": "cron", "cron": cron})
    else:
        with pytest.raises(ValueError, match="R \\(a random value\\) is not supported"):
            parse({"mode": "cron", "cron": cron})


async def test_a_never_due_cron_made_live_before_it_was_refused_does_not_stop_other_schedules(world):
    """A graph activated before activation refused such crons is still live: it just does not fire."""
    launcher, graphs, triggers, activation = world
    never = graphs.create("Never", timed(mode="cron", cron="0 0 31 4 *")).id
    triggers.activate(never, 1, {})  # as activation did before it checked
    good = graphs.create("Every 10 s", timed(mode="interval", every=10, unit="seconds")).id
    activation.activate(good)
    clock = Clock(1_000_000_005.0)
    scheduler = Scheduler(launcher, triggers, graphs, clock=clock)
    for clock.now in (1_000_000_005.0, 1_000_000_011.0, 1_000_000_021.0):
        await scheduler.tick_once()
    assert [f["due_at"] for f in triggers.fires(good)] == [1_000_000_010, 1_000_000_020]
    assert triggers.fires(never) == []


@pytest.mark.parametrize("failing", ["get_version", "last_fired"])
async def test_an_unexpected_error_in_one_schedule_is_logged_and_the_others_still_fire(world, monkeypatch, caplog,
                                                                                      failing):
    """One tick handles every active graph of every workspace: an error escaping one schedule (reading its
    graph's live version, or its last fire) used to end the tick, so the schedules after it never fired."""
    launcher, graphs, triggers, activation = world
    broken = graphs.create("Broken", timed(mode="interval", every=10, unit="seconds", missed="run_once")).id
    good = graphs.create("Every 10 s", timed(mode="interval", every=10, unit="seconds")).id
    for graph_id in (broken, good):
        activation.activate(graph_id)
    listed = triggers.active_graphs
    monkeypatch.setattr(triggers, "active_graphs", lambda: sorted(listed(), key=lambda g: g.graph_id != broken))
    store = graphs if failing == "get_version" else triggers
    real = getattr(store, failing)

    def fails_for_broken(graph_id, *args):
        if graph_id == broken:
            raise RuntimeError("something nobody expected")
        return real(graph_id, *args)

    monkeypatch.setattr(store, failing, fails_for_broken)
    clock = Clock(1_000_000_005.0)
    scheduler = Scheduler(launcher, triggers, graphs, clock=clock)
    for clock.now in (1_000_000_005.0, 1_000_000_011.0, 1_000_000_021.0):
        await scheduler.tick_once()
    assert [f["due_at"] for f in triggers.fires(good)] == [1_000_000_010, 1_000_000_020]
    assert "something nobody expected" in caplog.text


async def test_fires_each_due_time_of_an_active_graph_and_stops_when_inactive(world):
    launcher, graphs, triggers, activation = world
    graph_id = graphs.create("Every 10 s", timed(mode="interval", every=10, unit="seconds")).id
    activation.activate(graph_id)
    clock = Clock(1_000_000_005.0)
    scheduler = Scheduler(launcher, triggers, graphs, clock=clock)
    assert await scheduler.tick_once() == []
    clock.now = 1_000_000_031.0  # three due times passed: :10, :20, :30
    assert len(await scheduler.tick_once()) == 3
    assert [f["due_at"] for f in triggers.fires(graph_id)] == [1_000_000_010, 1_000_000_020, 1_000_000_030]
    activation.deactivate(graph_id)
    clock.now = 1_000_000_061.0
    assert await scheduler.tick_once() == []


async def test_a_schedule_runs_the_active_version_not_later_saves(world):
    launcher, graphs, triggers, activation = world
    live = graph([("clock", "schedule-trigger", {"mode": "interval", "every": 10, "unit": "seconds"}),
                  ("note", "edit-fields", {"include_input": False, "fields": [{"name": "said", "value": "live"}]})],
                 ["clock.output -> note.input"])
    graph_id = graphs.create("Every 10 s", live).id
    activation.activate(graph_id)
    live["nodes"][1]["data"]["fields"][0]["value"] = "draft"
    graphs.save(graph_id, live)  # saved afterwards, not activated: the schedule keeps running version 1
    clock = Clock(1_000_000_005.0)
    scheduler = Scheduler(launcher, triggers, graphs, clock=clock)
    await scheduler.tick_once()
    clock.now = 1_000_000_011.0
    [run_id] = await scheduler.tick_once()
    for _ in range(100):
        run = launcher.store.get_run(run_id)
        if run["status"] == "completed":
            break
        await asyncio.sleep(0.05)
    assert (run["status"], run["graph_version"], run["started_by"]) == ("completed", 1, "schedule")
    note = next(n for n in run["nodes"] if n["node_id"] == "note")
    assert note["outputs"]["output"] == {"said": "live"}
    assert graphs.version_of(graph_id) == 2


async def test_a_nightly_schedule_fires_once_on_the_night_clocks_go_back(world):
    """'30 1 * * *' in New York: 01:30 comes twice on 2026-11-01 (EDT, then EST); the scheduler fires once."""
    launcher, graphs, triggers, activation = world
    graph_id = graphs.create("Nightly", timed(mode="cron", cron="30 1 * * *", timezone="America/New_York")).id
    activation.activate(graph_id)
    utc = ZoneInfo("UTC")
    clock = Clock(datetime(2026, 11, 1, 4, 0, tzinfo=utc).timestamp())  # 00:00 EDT
    scheduler = Scheduler(launcher, triggers, graphs, clock=clock)
    started = await scheduler.tick_once()
    while clock.now < datetime(2026, 11, 1, 12, 0, tzinfo=utc).timestamp():  # until 07:00 EST, a minute a tick
        clock.now += 60
        started += await scheduler.tick_once()
    assert [datetime.fromtimestamp(f["due_at"], ZoneInfo("America/New_York")).isoformat()
            for f in triggers.fires(graph_id)] == ["2026-11-01T01:30:00-04:00"]
    assert len(started) == 1


async def test_a_due_time_whose_lease_could_not_be_written_fires_on_the_next_tick(world, monkeypatch):
    """The cursor moved past a due time before its lease row was written: one failed insert (SQLite's
    "database is locked" under load, a PostgreSQL failover) lost that run for good."""
    launcher, graphs, triggers, activation = world
    graph_id = graphs.create("Every 10 s", timed(mode="interval", every=10, unit="seconds")).id
    activation.activate(graph_id)
    clock = Clock(1_000_000_005.0)
    scheduler = Scheduler(launcher, triggers, graphs, clock=clock)
    await scheduler.tick_once()
    claim, calls = triggers.claim_fire, []

    def fails_once(*args):
        calls.append(args)
        if len(calls) == 1:
            raise OperationalError("INSERT INTO schedule_fire", {}, Exception("database is locked"))
        return claim(*args)

    monkeypatch.setattr(triggers, "claim_fire", fails_once)
    clock.now = 1_000_000_011.0  # :10 is due, its claim fails
    assert await scheduler.tick_once() == []
    clock.now = 1_000_000_012.0
    assert len(await scheduler.tick_once()) == 1
    clock.now = 1_000_000_013.0
    assert await scheduler.tick_once() == []  # once
    assert [f["due_at"] for f in triggers.fires(graph_id)] == [1_000_000_010]


@pytest.mark.parametrize("missed, fired", [("skip", 0), ("run_once", 1)])
async def test_runs_missed_while_down_are_skipped_or_run_once(world, missed, fired):
    launcher, graphs, triggers, activation = world
    graph_id = graphs.create("Minutely", timed(mode="interval", every=1, unit="minutes", missed=missed)).id
    activation.activate(graph_id)
    # A fresh process comes up about an hour later, 30 s into a minute (never within the look-back of "skip"
    # from a due time): ~60 due times were missed.
    up_at = (int(time.time()) // 60) * 60 + 3600 + 30
    scheduler = Scheduler(launcher, triggers, graphs, clock=Clock(up_at))
    assert len(await scheduler.tick_once()) == fired
    if fired:
        assert triggers.fires(graph_id)[0]["due_at"] == up_at - 30


def _race(url: str, seconds: float = 3.5) -> list[str]:
    """Two scheduler processes on `url` at once; the run ids each started."""
    env = {**os.environ, "PYTHONPATH": ROOT}
    children = [subprocess.Popen([sys.executable, "-m", "tests.triggers.scheduler_child", url, str(seconds)],
                                 cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True) for _ in range(2)]
    outputs = [child.communicate(timeout=60)[0] for child in children]
    assert all(child.returncode == 0 for child in children)
    return [line.split() for line in outputs]


def _check_exactly_once(launcher, graphs, triggers, activation, url):
    graph_id = graphs.create("Every second", timed(mode="interval", every=1, unit="seconds")).id
    activation.activate(graph_id)
    started = _race(url)
    fires = triggers.fires(graph_id)
    dues = [f["due_at"] for f in fires]
    assert len(dues) == len(set(dues)) >= 3  # each due time once
    assert dues == [dues[0] + i for i in range(len(dues))]  # and none skipped
    print("runs started per process:", [len(s) for s in started])
    all_started = started[0] + started[1]
    assert sorted(all_started) == sorted(f["run_id"] for f in fires)  # one run per due time
    launcher.store.flush()
    runs = launcher.store.list_runs(graph_id, limit=100)
    assert len(runs) == len(dues) and {r["started_by"] for r in runs} == {"schedule"}


def test_two_processes_fire_each_due_time_once_on_sqlite(tmp_path):
    url = f"sqlite:///{tmp_path / 'race.sqlite'}"
    launcher = RunLauncher(url)
    try:
        graphs, triggers = GraphStore(launcher.engine), TriggerStore(launcher.engine)
        _check_exactly_once(launcher, graphs, triggers, Activation(launcher, triggers, graphs), url)
    finally:
        launcher.close()


def test_two_processes_fire_each_due_time_once_on_postgresql():
    with private_schema() as schema:
        url = f"{POSTGRES_URL}?options=-csearch_path%3D{schema}"
        launcher = RunLauncher(url)
        try:
            with launcher.engine.connect() as conn:
                assert conn.execute(text("select current_schema()")).scalar() == schema
            graphs, triggers = GraphStore(launcher.engine), TriggerStore(launcher.engine)
            _check_exactly_once(launcher, graphs, triggers, Activation(launcher, triggers, graphs), url)
        finally:
            launcher.close()
