"""Timed pauses (nodeflow_app/runs/timers.py): a Wait over a minute pauses the run on record and another launcher
(a restarted process) resumes it when due, once even with two workers looking, on SQLite and PostgreSQL; a chat's
run goes on in its message; deleting its chat or its graph cancels it."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nodeflow_app.chat.service import ChatService
from nodeflow_app.runs.launcher import RunLauncher
from nodeflow_app.runs.timers import PauseTimers
from tests.llm.graphs import graph
from tests.store.postgres import POSTGRES_URL, private_schema

HOURS = 2
ROOT = Path(__file__).resolve().parents[2]


def waiting(trigger: str = "manual-trigger") -> dict:
    """Trigger -> Wait (2 hours) -> Edit Fields (adds `done`)."""
    return graph([("start", trigger, {}), ("wait", "wait", {"amount": HOURS, "unit": "hours"}),
                  ("after", "edit-fields", {"fields": [{"name": "done", "value": "yes"}]})],
                 ["start.output -> wait.input", "wait.output -> after.input"])


class Clock:
    def __init__(self, due: bool = False) -> None:
        """`due`: set past the Wait's time, as if it went by."""
        self.now = time.time() + (HOURS * 3600 + 1 if due else 0)

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request, tmp_path):
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'db.sqlite'}"
        return
    with private_schema() as schema:
        yield f"{POSTGRES_URL}?options=-csearch_path%3D{schema}"


async def paused_run(url: str) -> str:
    """A run paused at its Wait by a launcher that then goes away (a stopped process)."""
    launcher = RunLauncher(url)
    try:
        run = launcher.start(waiting(), started_by="api", payload={"order": 7})
        async with asyncio.timeout(10):
            events = [event async for event in run.events()]
        assert run.status == "paused"
        [paused] = [e for e in events if e.event_type == "paused"]
        assert paused.data["resume_at"] == run.records["wait"].wait.resume_at > time.time() + HOURS * 3600 - 60
        return run.run_id
    finally:
        launcher.close()


async def ended(launcher: RunLauncher, run_id: str) -> dict:
    deadline = time.monotonic() + 10
    while (record := launcher.store.get_run(run_id))["status"] in ("paused", "running"):
        assert time.monotonic() < deadline, f"run still {record['status']}"
        await asyncio.sleep(0.05)
    return record


async def test_a_long_wait_goes_on_by_itself_when_due_even_after_a_restart(url):
    run_id = await paused_run(url)
    launcher, clock = RunLauncher(url), Clock()
    try:
        [wait] = [n for n in launcher.store.get_run(run_id)["nodes"] if n["node_id"] == "wait"]
        assert wait["status"] == "paused" and wait["wait"]["options"] == ["resume now"]
        timers = PauseTimers(launcher, clock=clock)
        assert await timers.tick_once() == []  # not yet due
        clock.now = wait["wait"]["resume_at"] + 0.5
        assert await timers.tick_once() == [run_id]
        record = await ended(launcher, run_id)
        assert record["status"] == "completed"
        outputs = {n["node_id"]: n["outputs"] for n in record["nodes"]}
        assert outputs["after"]["output"]["done"] == "yes"
        assert outputs["wait"]["output"] == outputs["start"]["output"]  # the input passed on unchanged
        assert await timers.tick_once() == []  # nothing left to resume
    finally:
        launcher.close()


async def test_two_workers_looking_at_once_resume_each_pause_once(url):
    """Two processes (as two workers) look for the same due pauses at the same moment: each run goes on once."""
    run_ids = [await paused_run(url) for _ in range(4)]
    start_at, due = time.time() + 3, time.time() + HOURS * 3600 + 1
    children = [subprocess.Popen([sys.executable, "-m", "tests.runs.timers_child", url, str(start_at), str(due)],
                                 cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for _ in range(2)]
    resumed = []
    for child in children:
        out, err = child.communicate(timeout=60)
        assert child.returncode == 0, err[-2000:]
        resumed.append(out.split())
    print("resumed per process:", [len(r) for r in resumed])
    assert sorted(resumed[0] + resumed[1]) == sorted(run_ids)  # every run once, by one of them
    launcher = RunLauncher(url)
    try:
        assert {launcher.store.get_run(run_id)["status"] for run_id in run_ids} == {"completed"}
    finally:
        launcher.close()


async def test_a_person_resuming_first_leaves_nothing_due(tmp_path):
    url = f"sqlite:///{tmp_path / 'db.sqlite'}"
    run_id = await paused_run(url)
    launcher, clock = RunLauncher(url), Clock(due=True)
    try:
        run = launcher.restore(run_id, "wait", {"decision": "resume now", "by": "ada"})
        async with asyncio.timeout(10):
            [event async for event in run.resume("wait", {"decision": "resume now", "by": "ada"})]
        assert await PauseTimers(launcher, clock=clock).tick_once() == []
        assert launcher.store.get_run(run_id)["status"] == "completed"
    finally:
        launcher.close()


@pytest.fixture
def service(tmp_path):
    """A chat service on a SQLite database of its own."""
    chat_service = ChatService(f"sqlite:///{tmp_path / 'db.sqlite'}", interval=0.01)
    yield chat_service
    chat_service.close()


async def paused_chat(service: ChatService):
    """A chat whose answer is paused at its Wait: (chat, the answer)."""
    chat = service.create_chat(service.graphs.create("Later", waiting("chat-start")).id)
    async with asyncio.timeout(10):
        updates = [u async for u in service.send(chat.id, "remind me")]
    return chat, service.chats.get_message(updates[-1].message_id)


async def test_a_chats_long_wait_goes_on_in_its_message(service):
    _, message = await paused_chat(service)
    assert message.status == "paused"
    [card] = [b for b in message.blocks if b["type"] == "approval"]
    assert card["options"] == ["resume now"] and card["prompt"].startswith("Waiting 2 hours, until ")

    clock = Clock(due=True)
    timers = PauseTimers(service.launcher, service, clock=clock)
    assert await timers.tick_once() == [message.run_id]
    deadline = time.monotonic() + 10
    while (message := service.chats.get_message(message.id)).status != "complete":
        assert time.monotonic() < deadline, f"message still {message.status}"
        await asyncio.sleep(0.05)
    [card] = [b for b in message.blocks if b["type"] == "approval"]
    assert (card["decision"], card["decided_by"]) == ("resume now", "timer")
    assert service.launcher.store.get_run(message.run_id)["status"] == "completed"


async def test_deleting_a_chat_cancels_the_run_its_answer_waits_on(service):
    chat, message = await paused_chat(service)
    _, other = await paused_chat(service)
    service.delete_chat(chat.id)
    assert service.launcher.store.get_run(message.run_id)["status"] == "cancelled"
    assert await PauseTimers(service.launcher, service, clock=Clock(due=True)).tick_once() == [other.run_id]
    assert (await ended(service.launcher, other.run_id))["status"] == "completed"  # another chat's goes on


async def test_deleting_a_graph_cancels_its_waiting_runs_and_leaves_others_alone(url):
    from nodeflow_app.runs.service import RunService
    from nodeflow_app.store.graphs import GraphNotFound

    launcher = RunLauncher(url)
    run_service = RunService(launcher=launcher)
    try:
        doomed, kept = (launcher.graphs.create(name, waiting()).id for name in ("Doomed", "Kept"))
        runs = {}
        for graph_id in (doomed, kept):
            run = launcher.start(launcher.graphs.get(graph_id).graph, started_by="api", graph_id=graph_id)
            assert [e async for e in run.events()][-1].event_type == "paused"
            runs[graph_id] = run.run_id
        run_service.delete_graph(doomed)
        assert launcher.graphs.get(doomed) is None
        assert launcher.store.get_run(runs[doomed])["status"] == "cancelled"
        assert await PauseTimers(launcher, clock=Clock(due=True)).tick_once() == [runs[kept]]
        assert (await ended(launcher, runs[kept]))["status"] == "completed"
        with pytest.raises(GraphNotFound):
            run_service.delete_graph(doomed)
    finally:
        launcher.close()


async def test_a_run_whose_chat_message_is_gone_still_goes_on_when_due(service):
    chat, message = await paused_chat(service)
    run_id = message.run_id
    service.chats.delete_chat(chat.id)  # the messages only, as the store deletes them
    clock = Clock(due=True)
    assert await PauseTimers(service.launcher, service, clock=clock).tick_once() == [run_id]
    assert (await ended(service.launcher, run_id))["status"] == "completed"


async def test_a_pause_that_cannot_be_resumed_is_tried_again_a_minute_later_not_every_second(tmp_path, caplog):
    from nodeflow_app.runs.timers import RETRY_S

    url = f"sqlite:///{tmp_path / 'db.sqlite'}"
    run_id = await paused_run(url)
    launcher, clock = RunLauncher(url), Clock(due=True)
    real_restore, calls = launcher.restore, []

    def restore(*args):
        calls.append(args[0])
        if len(calls) == 1:
            raise RuntimeError("the graph's node types are gone")
        return real_restore(*args)

    launcher.restore = restore
    try:
        timers = PauseTimers(launcher, clock=clock)
        assert await timers.tick_once() == [] and "the graph's node types are gone" in caplog.text
        clock.now += 1
        assert await timers.tick_once() == [] and calls == [run_id]  # not tried again every tick
        clock.now += RETRY_S
        assert await timers.tick_once() == [run_id]
        assert (await ended(launcher, run_id))["status"] == "completed"
    finally:
        launcher.close()


async def test_a_run_nothing_persists_sleeps_instead_of_pausing(tmp_path, monkeypatch):
    """`nodeflow run --no-store`: nothing could resume a pause, so the Wait waits in memory as before."""
    from nodes.flow.wait import executor as wait_module

    slept = []

    async def fake_sleep(duration):
        slept.append(duration)

    launcher = RunLauncher(f"sqlite:///{tmp_path / 'db.sqlite'}")
    try:
        monkeypatch.setattr(wait_module.asyncio, "sleep", fake_sleep)  # asyncio's own: the kernel's sleeps too
        run = launcher.start(waiting(), started_by="cli", persist=False)
        async with asyncio.timeout(10):
            [event async for event in run.events()]
        assert run.status == "completed" and HOURS * 3600 in slept
    finally:
        launcher.close()
