"""Pinned outputs: per graph and node, the outputs test runs use instead of running the node (SPEC 5)."""

from __future__ import annotations

import json
import time
from typing import Any

from sqlalchemy import Engine, Table, delete, insert, select

from nodeflow_app.store.db import create_all, make_engine
from nodeflow_app.store.encoding import json_text
from nodeflow_app.store.models import PinnedOutputRow

PINS: Table = PinnedOutputRow.__table__  # type: ignore[attr-defined]


class PinStore:
    """Reads and writes the pinned outputs of graphs."""

    def __init__(self, engine_or_url: Engine | str | None = None):
        self.engine: Engine = engine_or_url if isinstance(engine_or_url, Engine) else make_engine(engine_or_url)
        create_all(self.engine)

    def pins(self, graph_id: str) -> dict[str, dict[str, Any]]:
        """node id -> pinned outputs, for one graph."""
        query = select(PINS.c.node_id, PINS.c.outputs_json).where(PINS.c.graph_id == graph_id)
        with self.engine.connect() as conn:
            return {node_id: json.loads(text) for node_id, text in conn.execute(query)}

    def pin(self, graph_id: str, node_id: str, outputs: dict[str, Any]) -> None:
        """Pin (or re-pin) a node's outputs."""
        with self.engine.begin() as conn:
            conn.execute(delete(PINS).where(PINS.c.graph_id == graph_id, PINS.c.node_id == node_id))
            conn.execute(insert(PINS).values(graph_id=graph_id, node_id=node_id, updated_at=time.time(),
                                             outputs_json=json_text(outputs)))

    def unpin(self, graph_id: str, node_id: str) -> bool:
        """Forget a pin; False if there was none."""
        with self.engine.begin() as conn:
            result = conn.execute(delete(PINS).where(PINS.c.graph_id == graph_id, PINS.c.node_id == node_id))
        return result.rowcount > 0
