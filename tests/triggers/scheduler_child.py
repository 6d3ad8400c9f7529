"""One scheduler process for the race test: `python -m tests.triggers.scheduler_child DB_URL SECONDS`.

Runs this process's Scheduler on DB_URL for SECONDS, then prints the run ids it started, one per line."""

from __future__ import annotations

import asyncio
import sys
import time

from nodeflow_app.runs.launcher import RunLauncher
from nodeflow_app.triggers.scheduler import Scheduler


async def main(url: str, seconds: float) -> None:
    launcher = RunLauncher(url)
    scheduler = Scheduler(launcher, tick=0.1)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        await scheduler.tick_once()
        await asyncio.sleep(0.1)
    await asyncio.sleep(0.5)  # the last runs finish
    launcher.store.flush()
    print("\n".join(scheduler.started), flush=True)
    launcher.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], float(sys.argv[2])))
