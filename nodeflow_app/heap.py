"""The garbage collector in a long-running server: what start-up made stays for the life of the process.

A NodeFlow process imports FastAPI, pydantic, SQLAlchemy, Agno and Reflex: several hundred thousand objects
that live until the end. Each full (generation 2) collection walked every one of them, stopping the event
loop for 50-100 ms every few hundred runs: the p99 of webhook calls was ~100 ms for a p50 of 13 ms
(benchmarks/webhooks.py). Frozen, they sit in the collector's permanent generation and are never walked.

What a request makes (a run, its records, the answer) is short-lived: the youngest generation is collected
after 20,000 new objects rather than 700, so a burst of calls is not interrupted by a collection every few
runs, and the older generations (walked once per 10 and 100 of those) rarely. The webhook benchmark's p99
went from 28 to 19 ms on SQLite and from 43 to 22 ms on PostgreSQL at the same rate (benchmarks/README.md,
session 11).
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 20_000  # new objects between two collections of the youngest generation (CPython: 700)


def freeze_startup_objects() -> None:
    """Collect what start-up left as garbage, then freeze everything that is left (a lifespan task, run once
    the app is imported and built)."""
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
