"""Which workspace's knowledge a running node may use: `ctx.services["workspace_id"]`, else "default".

Collections belong to a workspace (SPEC 13); until accounts exist every run uses the "default" one.
"""

from __future__ import annotations

import asyncio
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any

from nodeflow_app.knowledge.collections import KnowledgeStore
from nodeflow_app.settings import data_dir

DEFAULT_WORKSPACE = "default"


def workspace_of(ctx: Any) -> str:
    """The run's workspace (its knowledge, its uploads)."""
    services = getattr(ctx, "services", None) or {}
    return str(services.get("workspace_id") or DEFAULT_WORKSPACE)


async def store_for(ctx: Any) -> KnowledgeStore:
    """The run's store. Made in a thread: a process's first one imports and opens LanceDB (~1.8 s), which held
    the event loop, so every other run, the first time a graph used knowledge."""
    return await asyncio.to_thread(workspace_store, workspace_of(ctx))


def workspace_store(workspace: str) -> KnowledgeStore:
    """One store per (data folder, workspace) in a process, so its open tables are reused across runs. Built under
    a lock: two threads asking at once would each build one (lru_cache does not lock)."""
    with _building:
        return _store(data_dir(), workspace)


_building = threading.Lock()


@lru_cache(maxsize=256)
def _store(root: Path, workspace: str) -> KnowledgeStore:
    return KnowledgeStore(workspace, root / "knowledge")
