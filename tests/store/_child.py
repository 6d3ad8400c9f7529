"""A separate process for the store tests: resume a stored run, or start one and hang until killed.

    python -m tests.store._child resume URL RUN_ID NODE_ID ANSWER [SCHEMA]
    python -m tests.store._child hang URL [SCHEMA]
"""

from __future__ import annotations

import asyncio
import json
import sys

from nodeflow_app.runtime.engine import start_run
from nodeflow_app.store.db import make_engine
from nodeflow_app.store.runs import RunStore

from tests.runtime import toys


def open_store(url: str, schema: str | None) -> RunStore:
    engine = make_engine(url)
    if schema:
        engine = engine.execution_options(schema_translate_map={None: schema})
    return RunStore(engine)


async def resume(store: RunStore, run_id: str, node_id: str, answer: str) -> None:
    from nodeflow_app.runs.launcher import RunLauncher

    launcher = RunLauncher(store.engine, registry=toys.registry())
    interrupted = launcher.recover()  # what a fresh process does first; a paused run is left alone
    run = launcher.restore(run_id)
    events = [e.event_type async for e in run.resume(node_id, answer)]
    launcher.close()
    print(json.dumps({"interrupted": interrupted, "status": run.status, "events": events}), flush=True)


async def hang(store: RunStore) -> None:
    #  S --> SLOW(60 s) --> P
    graph = toys.graph([("s", "start"), ("slow", "slow", {"delay": 60}), ("p", "pass")],
                       ["s.out -> slow.in", "slow.out -> p.in"])
    run = start_run(graph, toys.registry(), payload={"hello": "world"}, hooks=store.hooks())
    async for event in run.events():
        if event.node_id == "slow" and event.event_type == "started":
            print(run.run_id, flush=True)


def main(argv: list[str]) -> None:
    command, url, rest = argv[0], argv[1], argv[2:]
    if command == "resume":
        run_id, node_id, answer, *schema = rest
        asyncio.run(resume(open_store(url, schema[0] if schema else None), run_id, node_id, answer))
    else:
        asyncio.run(hang(open_store(url, rest[0] if rest else None)))


if __name__ == "__main__":
    main(sys.argv[1:])
