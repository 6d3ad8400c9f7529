"""Timed pauses: a paused node with a `resume_at` (a Wait longer than a minute) goes on by itself when it is due.

The pause is on record (`node_run.resume_at`), so it outlives a restart, and a run waiting for days holds no
memory meanwhile. Every worker looks every TICK seconds for due pauses and answers each as a person would answer
its card, with its first option, `by` "timer": a chat's run through the chat (its message goes on), any other
run through the launcher. Restoring a run claims it first, so when two workers find the same pause, one goes on
and the other is refused (RunBusy) and skips it. A node answered early by a person is no longer paused: nothing
is due.
"""

from __future__ import annotations

import asyncio
import logging
import time
from contextlib import aclosing
from typing import Any, Callable

from nodeflow_app.contract import CONVERSATION
from nodeflow_app.runs.detached import drive
from nodeflow_app.runs.launcher import RunBusy, RunLauncher
from nodeflow_app.runs.periodic import every
from nodeflow_app.runs.service import approval_payload

log = logging.getLogger("nodeflow.timers")

TICK = 1.0  # seconds between looks for due pauses
RETRY_S = 60.0  # a pause that could not be resumed (its graph no longer plans, say) is tried again after this
TIMER = "timer"  # who answered, as the run's record and the chat's card say


class PauseTimers:
    def __init__(self, launcher: RunLauncher, chats: Any = None, *, tick: float = TICK,
                 clock: Callable[[], float] = time.time):
        """`chats`: the ChatService that resumes a chat's runs (default: the process's, on first need)."""
        self.launcher, self.tick, self.clock, self._chats = launcher, tick, clock, chats
        self.resumed: list[str] = []  # run ids this process resumed (tests, logs)
        self._failed: dict[tuple[str, str], float] = {}  # (run, node) -> not tried again before then

    async def run_forever(self) -> None:
        await every(self.tick, self.tick_once, log, "looking for due timed pauses")

    async def tick_once(self) -> list[str]:
        """Resume every pause due now; the run ids this process resumed."""
        now = self.clock()
        due = await asyncio.to_thread(self.launcher.store.due_pauses, now)
        resumed = []
        for run_id, node_id in due:
            if self._failed.get((run_id, node_id), 0.0) > now:
                continue
            try:
                if await self._resume(run_id, node_id):
                    resumed.append(run_id)
            except (RunBusy, LookupError) as error:  # another worker took it, or it was answered or deleted
                log.debug("timed pause of run %s node %s not resumed here: %s", run_id, node_id, error)
            except Exception:  # noqa: BLE001 - one run's trouble must not keep the others waiting
                log.exception("timed pause of run %s node %s could not be resumed; trying again in %.0f s",
                              run_id, node_id, RETRY_S)
                self._failed[(run_id, node_id)] = now + RETRY_S
        self.resumed += resumed
        return resumed

    async def _resume(self, run_id: str, node_id: str) -> bool:
        record = await asyncio.to_thread(self.launcher.store.get_run, run_id)
        node = next((n for n in (record or {}).get("nodes", []) if n["node_id"] == node_id), None)
        if node is None or node["status"] != "paused" or not node.get("wait"):
            return False
        option = (node["wait"].get("options") or ["resume"])[0]
        if CONVERSATION in (record.get("context") or {}) and await self._resume_chat(run_id, node_id, option):
            return True
        payload = approval_payload(option, None, TIMER)
        run = await asyncio.to_thread(self.launcher.restore, run_id, node_id, payload)
        drive(run, run.resume(node_id, payload))
        return True

    async def _resume_chat(self, run_id: str, node_id: str, option: str) -> bool:
        """Through the chat, so that its message goes on with the run (a tab left open asks for it when it is due).
        False when the chat's message is gone (its chat was deleted): the run then goes on by itself."""
        from nodeflow_app.chat.service import ChatError

        chats = self._chat_service()
        message = await asyncio.to_thread(chats.chats.message_of_run, run_id)
        if message is None:
            return False
        updates = chats.resume(message.chat_id, message.id, node_id, option, who=TIMER)
        try:
            await anext(updates)  # the run is restored (claimed) and goes on: the rest is driven in a task
        except ChatError as error:  # answered meanwhile, or another worker took it
            await updates.aclose()
            raise RunBusy(str(error)) from None
        task = asyncio.create_task(_consume(updates), name=f"timer-chat-{run_id}")
        _chat_runs.add(task)
        task.add_done_callback(_chat_runs.discard)
        return True

    def _chat_service(self) -> Any:
        if self._chats is None:  # the process's, on the process's launcher
            from nodeflow_app.chat.service import chat_service

            self._chats = chat_service()
        return self._chats


_chat_runs: set[asyncio.Task] = set()  # strong references: a task nobody holds may be collected mid-run


async def _consume(updates: Any) -> None:
    """Drive a chat's resumed answer to its end; it saves its message as it goes."""
    try:
        async with aclosing(updates) as stream:
            async for _update in stream:
                pass
    except Exception:  # noqa: BLE001 - the chat's message records what failed; nothing else listens here
        log.exception("a chat's answer resumed by its timer stopped with an error")


async def run_pause_timers() -> None:
    """The Reflex lifespan task: this worker's timers on the process's launcher."""
    from nodeflow_app.runs.launcher import run_launcher

    await PauseTimers(await asyncio.to_thread(run_launcher)).run_forever()
