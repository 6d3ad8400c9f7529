"""nodeflow_app/stopping.py: work asked for at a stop signal runs before the server's own handler (Granian's stop
can panic before the lifespan's shutdown: the co-editing rooms' last edits were lost)."""

import asyncio
import os
import signal

from nodeflow_app.stopping import run_before_stopping


def _stop_with(number: int, work_fails: bool = False, signals: int = 1) -> list[str]:
    order: list[str] = []
    loop = asyncio.new_event_loop()
    stopped = asyncio.Event()

    def server_stops() -> None:  # stands in for Granian's handler: it ends the worker's loop
        order.append("server stops")
        stopped.set()

    async def save() -> None:
        order.append("save starts")
        await asyncio.sleep(0.05)  # a real save awaits the database: the server must not stop meanwhile
        if work_fails:
            raise RuntimeError("the database is gone")
        order.append("save done")

    async def main() -> None:
        loop.add_signal_handler(number, server_stops)
        assert run_before_stopping(loop, save)
        for _ in range(signals):
            os.kill(os.getpid(), number)
            await asyncio.sleep(0.01)  # the loop handles this signal before the next is sent
        await asyncio.wait_for(stopped.wait(), 5)
        await asyncio.sleep(0.01)  # a later signal's server handler, if any

    try:
        loop.run_until_complete(main())
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        loop.close()
    return order


def test_the_work_runs_to_its_end_before_the_servers_own_stop() -> None:
    assert _stop_with(signal.SIGTERM) == ["save starts", "save done", "server stops"]
    assert _stop_with(signal.SIGINT) == ["save starts", "save done", "server stops"]


def test_a_second_signal_during_the_work_waits_for_it_too() -> None:
    """`make run` stopped with kill on its process group: the worker gets SIGTERM, then again from Granian's main
    process. The second must not stop the loop under the first one's save (CI lost an edit so)."""
    assert _stop_with(signal.SIGTERM, signals=2) == ["save starts", "save done", "server stops", "server stops"]


def test_the_server_stops_even_when_the_work_fails() -> None:
    assert _stop_with(signal.SIGTERM, work_fails=True) == ["save starts", "server stops"]


def test_a_loop_without_signal_handlers_is_left_alone() -> None:
    loop = asyncio.new_event_loop()
    try:
        assert run_before_stopping(loop, lambda: asyncio.sleep(0)) is False
    finally:
        loop.close()
