"""Run lifecycle across processes: stop and answer reach a run executing in another process, a run killed
with kill -9 resumes and finishes every reachable node, a run that is already running cannot be resumed.

The other process is a real `nodeflow` CLI (a subprocess) on the same SQLite database.

    Manual --> OK? (approval) --approve--> Done
          \\--> Wait (a few seconds) --> After
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nodeflow_app.runs.launcher import RunBusy, RunLauncher
from nodeflow_app.runs.service import approval_payload
from nodeflow_app.store.run_control import owner_gone
from tests.llm.graphs import graph
from tests.redis_server import redis_database

ROOT = Path(__file__).resolve().parents[2]


def fields(**values) -> dict:
    return {"fields": [{"name": k, "value": v} for k, v in values.items()]}


def approval_and_wait(seconds: float) -> dict:
    return graph([("manual", "manual-trigger", {"payload": {"order": 7}}), ("ok", "approval", {"prompt": "Ship?"}),
                  ("done", "edit-fields", fields(shipped=True)), ("wait", "wait", {"amount": seconds}),
                  ("after", "edit-fields", fields(waited=True))],
                 ["manual.output -> ok.input", "ok.approve -> done.input", "manual.output -> wait.input",
                  "wait.output -> after.input"])


@pytest.fixture
def db(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'nodeflow.db'}"
    monkeypatch.setenv("REFLEX_DB_URL", url)
    return url


@pytest.fixture
def launcher(db):
    launcher = RunLauncher(db)
    yield launcher
    launcher.close()


def cli(*args: str, **env_vars: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT), **env_vars}
    return subprocess.Popen([sys.executable, "-m", "nodeflow_app.cli", *args, "--json"], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def write_graph(tmp_path: Path, raw: dict) -> str:
    path = tmp_path / "graph.json"
    path.write_text(json.dumps(raw))
    return str(path)


def wait_for(launcher: RunLauncher, run_id: str, check, what: str, timeout: float = 30) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        stored = launcher.store.get_run(run_id)
        if stored is not None and check(stored):
            return stored
        assert time.monotonic() < deadline, f"never saw {what}: {stored and stored['status']}"
        time.sleep(0.05)


def statuses(stored: dict) -> dict[str, str]:
    return {n["node_id"]: n["status"] for n in stored["nodes"]}


def first_run_id(process: subprocess.Popen) -> str:
    line = process.stdout.readline()
    assert line, process.stderr.read()
    return json.loads(line)["run_id"]


def parallel_pause(launcher: RunLauncher, run_id: str) -> dict:
    """The approval waits while the Wait runs: the run is `running` in the other process."""
    return wait_for(launcher, run_id, lambda r: statuses(r).get("ok") == "paused"
                    and statuses(r).get("wait") == "running", "the approval paused beside a running Wait")


def test_a_stop_from_this_process_reaches_a_cli_run_in_another(tmp_path, launcher):
    process = cli("run", write_graph(tmp_path, approval_and_wait(60)))
    try:
        run_id = first_run_id(process)
        stored = parallel_pause(launcher, run_id)
        assert stored["started_by"] == "cli" and stored["owner"] != launcher.owner
        assert not launcher.is_live(run_id) and launcher.stop(run_id)  # recorded for its owner
        assert process.wait(timeout=20) == 1  # the CLI saw its run cancelled within a poll or two
    finally:
        process.kill()
        process.communicate()
    stored = launcher.store.get_run(run_id)
    assert stored["status"] == "cancelled" and statuses(stored)["wait"] == "cancelled"


def test_with_redis_a_stop_reaches_the_other_process_at_once(tmp_path, db):
    """The CLI polls the database only every 60 s here: only the Redis message can wake it in time."""
    redis_url = redis_database(0)
    launcher = RunLauncher(db, redis_url=redis_url)
    process = cli("run", write_graph(tmp_path, approval_and_wait(60)), REFLEX_REDIS_URL=redis_url,
                  NODEFLOW_RUN_POLL="60")
    try:
        run_id = first_run_id(process)
        parallel_pause(launcher, run_id)
        time.sleep(0.5)  # its control thread has subscribed by now (it starts with the first live run)
        started = time.monotonic()
        assert launcher.stop(run_id)
        assert process.wait(timeout=20) == 1 and time.monotonic() - started < 10
    finally:
        process.kill()
        process.communicate()
        launcher.close()
    assert launcher.store.get_run(run_id)["status"] == "cancelled"


def test_an_answer_from_this_process_reaches_a_cli_run_in_another(tmp_path, launcher):
    process = cli("run", write_graph(tmp_path, approval_and_wait(2)))
    try:
        run_id = first_run_id(process)
        parallel_pause(launcher, run_id)
        assert launcher.answer(run_id, "ok", approval_payload("approve", "fine", "test")) is None
        assert process.wait(timeout=30) == 0
    finally:
        process.kill()
        process.communicate()
    stored = launcher.store.get_run(run_id)
    assert stored["status"] == "completed"
    assert statuses(stored) == {"manual": "completed", "ok": "completed", "done": "completed",
                                "wait": "completed", "after": "completed"}


async def test_kill_9_with_an_approval_paused_and_a_wait_running_resumes_to_every_node(tmp_path, launcher):
    process = cli("run", write_graph(tmp_path, approval_and_wait(1)))
    try:
        run_id = first_run_id(process)
        parallel_pause(launcher, run_id)
    finally:
        process.send_signal(signal.SIGKILL)
        process.communicate()
    assert launcher.store.get_run(run_id)["status"] == "running"  # nobody could say otherwise
    assert launcher.recover() == [run_id]  # its owner is gone (the pid no longer exists)
    stored = launcher.store.get_run(run_id)
    assert stored["status"] == "interrupted" and statuses(stored)["wait"] == "interrupted"

    run = launcher.restore(run_id)
    events = [(e.node_id, e.event_type) async for e in run.resume("ok", approval_payload("approve", None, "t"))]
    assert ("wait", "started") in events and ("after", "completed") in events  # the Wait ran again
    assert run.status == "completed"
    stored = launcher.store.get_run(run_id)
    assert stored["status"] == "completed" and set(statuses(stored).values()) == {"completed"}


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nodeflow_app.cli", *args], cwd=ROOT, capture_output=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, text=True, timeout=60)


def test_a_killed_cli_resume_can_be_continued_and_a_running_run_cannot_be_resumed(tmp_path, launcher):
    path = write_graph(tmp_path, approval_and_wait(6))
    first = cli("run", path)
    try:
        run_id = first_run_id(first)
        parallel_pause(launcher, run_id)
    finally:
        first.send_signal(signal.SIGKILL)
        first.communicate()
    # Another CLI approves; its Wait runs again, and while it does the run cannot be resumed from elsewhere.
    resume = cli("resume", run_id, "--node", "ok", "--payload", json.dumps({"decision": "approve"}))
    try:
        wait_for(launcher, run_id, lambda r: r["status"] == "running" and statuses(r)["ok"] == "completed"
                 and statuses(r)["wait"] == "running", "the CLI resume running the Wait again")
        with pytest.raises(RunBusy, match="already running"):
            launcher.restore(run_id)  # the guard: a run executing in a live process is refused
        again = run_cli("resume", run_id, "--node", "wait", "--payload", "null")
        assert again.returncode == 2 and "already running" in again.stderr
    finally:
        resume.send_signal(signal.SIGKILL)
        resume.communicate()
    # The next CLI start marks the killed resume's run interrupted; it continues at the interrupted Wait.
    done = run_cli("resume", run_id, "--node", "wait", "--payload", "null", "--json")
    assert done.returncode == 0, done.stderr
    stored = launcher.store.get_run(run_id)
    assert stored["status"] == "completed" and set(statuses(stored).values()) == {"completed"}


async def test_a_run_live_in_this_process_cannot_be_restored_twice(launcher):
    run = launcher.start(approval_and_wait(5), started_by="test")
    task = asyncio.create_task(run.run())
    while not launcher.is_live(run.run_id):
        await asyncio.sleep(0.01)
    with pytest.raises(RunBusy, match="already running in this process"):
        launcher.restore(run.run_id)
    assert launcher.stop(run.run_id)
    await task
    assert run.status == "cancelled" and not launcher.is_live(run.run_id)


async def test_a_paused_run_is_answered_and_a_stopped_waiting_run_is_cancelled(launcher):
    run = await launcher.start(approval_and_wait(0), started_by="test").run()
    assert run.status == "paused"
    restored = launcher.answer(run.run_id, "ok", approval_payload("reject", "no", "t"))  # executing nowhere
    assert restored is not None and restored is not run
    async for _ in restored.resume("ok", approval_payload("reject", "no", "t")):
        pass
    assert restored.status == "completed" and restored.records["done"].status == "skipped"

    other = await launcher.start(approval_and_wait(0), started_by="test").run()
    assert launcher.stop(other.run_id) and launcher.store.get_run(other.run_id)["status"] == "cancelled"
    with pytest.raises(RunBusy, match="cancelled"):
        launcher.restore(other.run_id)


def test_an_owner_is_gone_when_its_process_is_or_its_heartbeat_stopped():
    import socket

    me = f"{socket.gethostname()}:{os.getpid()}:mine"  # ages: seconds since the last heartbeat
    assert not owner_gone(me, None, me) and not owner_gone(me, 1.0, me)
    assert owner_gone(me, 60.0, me)  # ours, but nothing here beats for it: claimed and never driven
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    assert owner_gone(f"{socket.gethostname()}:{dead.pid}:x", 1.0, me)  # its pid is gone
    assert owner_gone(f"{socket.gethostname()}:{os.getpid()}:earlier", 1.0, me)  # our pid, earlier life
    assert not owner_gone("other-host:1:x", 1.0, me)  # another host: its heartbeat says alive
    assert owner_gone("other-host:1:x", 60.0, me)  # ... until it stops
    assert owner_gone(None, None, me)  # written before owners existed


def two_approvals() -> dict:
    return graph([("manual", "manual-trigger", {}), ("first", "approval", {"prompt": "First?"}),
                  ("second", "approval", {"prompt": "Second?"}), ("done", "edit-fields", fields(shipped=True))],
                 ["manual.output -> first.input", "first.approve -> second.input", "second.approve -> done.input"])


async def test_an_answer_to_a_node_that_no_longer_waits_gives_the_run_back(launcher):
    """A card answered elsewhere meanwhile (its page still shows it open): the node is checked in the run's record
    while the run is claimed, refused, and the run is paused again, not left claimed with nobody to drive it."""
    run = await launcher.start(two_approvals(), started_by="test").run()
    answer = approval_payload("approve", "", "me")
    first = launcher.answer(run.run_id, "first", answer)
    async for _ in first.resume("first", answer):
        pass
    assert first.status == "paused"
    with pytest.raises(RunBusy, match="node 'first' is not waiting for input \\(paused: SECOND\\)"):
        launcher.answer(run.run_id, "first", answer)
    assert launcher.store.get_run(run.run_id)["status"] == "paused"
    second = launcher.answer(run.run_id, "second", answer)
    async for _ in second.resume("second", answer):
        pass
    assert second.status == "completed"


async def test_a_run_claimed_but_never_driven_is_taken_back_once_its_heartbeat_is_stale(launcher):
    """`restore` claims the run; a caller that fails or goes away before driving it leaves it `running` in this
    process's name. Nothing here beats for it, so, like a gone process's run, it can be stopped (or answered)
    once its heartbeat is STALE_AFTER old, instead of staying `running` for the process's whole life."""
    from sqlalchemy import update

    from nodeflow_app.store.run_control import RUNS, STALE_AFTER

    run = await launcher.start(approval_and_wait(0), started_by="test").run()
    launcher.restore(run.run_id)  # and then nobody drives it
    assert launcher.store.get_run(run.run_id)["status"] == "running"
    with launcher.engine.begin() as conn:  # STALE_AFTER later
        conn.execute(update(RUNS).where(RUNS.c.id == run.run_id).values(heartbeat_at=time.time() - STALE_AFTER - 1))
    assert launcher.stop(run.run_id) is True
    assert launcher.store.get_run(run.run_id)["status"] == "cancelled"


def approval_then_wait(seconds: float) -> dict:
    return graph([("manual", "manual-trigger", {}), ("ok", "approval", {"prompt": "Ship?"}),
                  ("slow", "wait", {"amount": seconds}), ("done", "edit-fields", fields(shipped=True))],
                 ["manual.output -> ok.input", "ok.approve -> slow.input", "slow.output -> done.input"])


async def test_a_stop_sent_to_a_runs_last_drive_does_not_cancel_the_drive_that_resumes_it(db, launcher):
    """A stop written for a run's owner that died (or paused) before taking it stays pending; whoever resumes the
    run later claims it, and the claim discards it: the approved run is not cancelled by a stop from before."""
    gone = RunLauncher(db)
    run = await gone.start(approval_then_wait(1), started_by="test").run()
    gone.close()
    launcher.control.request(run.run_id, "stop")  # sent to the drive that paused, never taken
    answer = approval_payload("approve", "", "me")
    restored = launcher.answer(run.run_id, "ok", answer)
    async for _ in restored.resume("ok", answer):  # its control thread polls every 0.25 s meanwhile
        pass
    assert restored.status == "completed", restored.error


async def test_a_stop_taken_while_the_run_pauses_in_another_process_cancels_it(tmp_path):
    """Another process's stop is a request its owner polls for. The run paused before the owner looked (a Wait
    beside the approval finished): the owner no longer drives it, yet the sender was told "stopped". The owner
    settles the requests of runs that left it: the paused run is cancelled as asked."""
    url = f"sqlite:///{tmp_path / 'nodeflow.db'}"
    owner, other = RunLauncher(url), RunLauncher(url)
    owner.owner = owner.store.owner = owner.control.owner = "other-host:4242:token"  # alive by its heartbeat only
    owner.poll = 5.0  # the owner looks for requests long after the run paused
    try:
        run = owner.start(graph([("manual", "manual-trigger", {}), ("ok", "approval", {"prompt": "Ship?"}),
                                 ("wait", "wait", {"amount": 1})],
                                ["manual.output -> ok.input", "manual.output -> wait.input"]), started_by="test")
        task = asyncio.create_task(run.run())
        while not (owner.is_live(run.run_id) and run.records.get("ok") and run.records["ok"].status == "paused"):
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.3)  # the owner's control thread made its first poll and heartbeat
        assert await asyncio.to_thread(other.stop, run.run_id) is True  # handed to the owner
        await task
        assert run.status == "paused"  # the Wait finished before the owner polled again
        stored = await asyncio.to_thread(wait_for, other, run.run_id, lambda r: r["status"] != "paused",
                                         "the stop settled", 10)
        assert stored["status"] == "cancelled" and statuses(stored)["ok"] == "cancelled"
    finally:
        other.close()
        owner.close()


async def test_a_restored_run_acts_in_its_graphs_workspace(launcher):
    """After a restart (or in another process) a paused run's nodes still use its workspace's credentials."""
    stored = launcher.graphs.create("Team graph", approval_and_wait(0), workspace_id="w-team")
    run = await launcher.start(launcher.graphs.get(stored.id).graph, started_by="test").run()
    restored = launcher.restore(run.run_id)
    assert restored.services.get("workspace_id") == "w-team"
    async for _ in restored.resume("ok", approval_payload("approve", "", "t")):
        pass
    assert restored.status == "completed"


async def test_of_two_answers_at_once_the_second_is_refused_not_told_the_run_goes_on(launcher):
    """The first answer restores the run here and drives it (live); the second found it live and was told "the
    run goes on" (the API's 202) while the run dropped it with a log line: a reject after an approve looked taken."""
    run = await launcher.start(approval_then_wait(0.5), started_by="test").run()
    approve, reject = approval_payload("approve", "", "ann"), approval_payload("reject", "no", "bob")
    restored = launcher.answer(run.run_id, "ok", approve)
    drive = asyncio.create_task(_drain(restored.resume("ok", approve)))
    while not launcher.is_live(run.run_id):
        await asyncio.sleep(0.01)
    with pytest.raises(RunBusy, match="node 'ok' is not waiting for input"):
        await asyncio.to_thread(launcher.answer, run.run_id, "ok", reject)  # as the API and the pages call it
    with pytest.raises(RunBusy, match="node 'ok' is not waiting for input"):
        launcher.answer(run.run_id, "ok", reject)  # on the run's own loop
    await drive
    assert restored.status == "completed" and restored.records["done"].status == "completed"


async def _drain(events) -> None:
    async for _ in events:
        pass
