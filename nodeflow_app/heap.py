"""The garbage collector in a long-running server: what start-up made stays for the life of the process.

A NodeFlow process imports FastAPI, pydantic, SQLAlchemy, Agno and Reflex: several hundred thousand objects
that live until the end. Each full (generation 2) collection walked every one of them, stopping the event
loop for 50-100 ms every few hundred runs: the p99 of webhook calls was ~100 ms for a p50 of 13 ms
(benchmarks/webhooks.py). Frozen, they sit in the collector's permanent generation and are never walked.
"""

from __future__ import annotations

import gc


def freeze_startup_objects() -> None:
    """Collect what start-up left as garbage, then freeze everything that is left (a lifespan task, run once
    the app is imported and built)."""
    gc.collect()
    gc.freeze()
