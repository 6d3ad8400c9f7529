"""Which workspace's knowledge a running node may use: `ctx.services["workspace_id"]`, else "default".

Collections belong to a workspace (SPEC 13); until accounts exist every run uses the "default" one.
"""

from __future__ import annotations

from typing import Any

from nodeflow_app.knowledge.collections import KnowledgeStore

DEFAULT_WORKSPACE = "default"


def store_for(ctx: Any) -> KnowledgeStore:
    services = getattr(ctx, "services", None) or {}
    return KnowledgeStore(str(services.get("workspace_id") or DEFAULT_WORKSPACE))
