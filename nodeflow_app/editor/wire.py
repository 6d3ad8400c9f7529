"""Nodes as the canvas gets them (the whole graph and each patch): without what the graph model fills in anyway.

At 1,000 nodes, default run settings and `parentId: null` are ~40% of the graph the editor sends on open, and
~200 bytes of every node in a patch. The canvas reads `node.settings?.error_mode` and `node.parentId`, so a
missing key means the default; a node that comes back (the clipboard) is filled in again by the graph model.
"""

from __future__ import annotations

from typing import Any

from nodeflow_app.runtime.graph import NodeSettings

# Keys left out when they hold the value the graph model would fill in.
DEFAULTS = {"settings": NodeSettings().model_dump(mode="json"), "parentId": None}


def on_wire(node: dict[str, Any]) -> dict[str, Any]:
    """The node JSON without default `settings` and without `parentId: None`."""
    return {key: value for key, value in node.items() if key not in DEFAULTS or value != DEFAULTS[key]}
