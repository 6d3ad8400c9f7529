"""What the inspector shows for a trigger that runs while the graph is active: a webhook's addresses, or
a schedule's next three due times. Chosen by the trigger's entry points (`started_by`), never its type."""

from __future__ import annotations

import time
from typing import Any

from nodeflow_app.contract import NodeDefinition
from nodeflow_app.triggers import schedules, webhooks


def trigger_view(definition: NodeDefinition | None, graph_id: str, node_id: str,
                 data: dict[str, Any]) -> dict[str, Any]:
    """{} for other nodes; {"kind": "webhook", "hook_id", "path", "test_path"} or
    {"kind": "schedule", "next": [three times as text], "error": why there are none}."""
    if definition is None or not definition.trigger:
        return {}
    if webhooks.STARTED_BY in definition.started_by:
        hook = webhooks.hook_id(graph_id, node_id)
        return {"kind": "webhook", "hook_id": hook, "path": f"/api/hooks/{hook}",
                "test_path": f"/api/hooks-test/{hook}"}
    if schedules.STARTED_BY in definition.started_by:
        upcoming = schedules.describe_next(data, time.time())
        if isinstance(upcoming, str):
            return {"kind": "schedule", "next": [], "error": upcoming}
        return {"kind": "schedule", "next": upcoming, "error": ""}
    return {}
