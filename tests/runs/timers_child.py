"""One worker's timers for the race test: `python -m tests.runs.timers_child DB_URL START_AT NOW`.

At START_AT (epoch seconds) it looks once for pauses due at NOW, lets the runs it resumed end, and prints their ids,
one per line."""

from __future__ import annotations

import asyncio
import sys
import time

from nodeflow_app.runs.launcher import RunLauncher
from nodeflow_app.runs.timers import PauseTimers


async def main(url: str, start_at: float, now: float) -> None:
    launcher = RunLauncher(url)
    timers = PauseTimers(launcher, clock=lambda: now)
    await asyncio.sleep(max(start_at - time.time(), 0))
    resumed = await timers.tick_once()
    await asyncio.sleep(1.0)  # the resumed runs end
    launcher.close()
    print("\n".join(resumed), flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], float(sys.argv[2]), float(sys.argv[3])))
