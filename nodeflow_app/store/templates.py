"""Templates of a workspace: graphs its members saved as starting points for New graph.

The built-in templates are files (nodeflow_app/templates); these are rows, each belonging to one workspace and
listed after the built-in ones. A template holds no secret: secret parameters are stored hidden and are entered
again in the graph made from it.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from sqlalchemy import Engine, delete, insert, select

from nodeflow_app.secret_values import Definitions, hide_graph
from nodeflow_app.store.db import create_all, make_engine, process_wide
from nodeflow_app.store.graphs import clean_name
from nodeflow_app.store.models import TemplateRow
from nodeflow_app.templates import Template

PREFIX = "workspace-"  # a workspace template's id in the picker, beside the built-in templates' file names
DESCRIPTION_MAX = 500
_TABLE = TemplateRow.__table__


class TemplateStore:
    def __init__(self, engine_or_url: Engine | str | None = None):
        self.engine: Engine = engine_or_url if isinstance(engine_or_url, Engine) else make_engine(engine_or_url)
        create_all(self.engine)

    def save(self, workspace_id: str, name: str, description: str, graph: dict[str, Any],
             definitions: Definitions, author: str | None = None) -> Template:
        """A new template of the workspace from `graph` (its secrets hidden); a ValueError says what is wrong."""
        name, description = clean_name(name), (description or "").strip()
        if len(description) > DESCRIPTION_MAX:
            raise ValueError(f"a description can be at most {DESCRIPTION_MAX} characters long")
        body = {key: graph[key] for key in ("nodes", "edges", "viewport") if key in graph}
        body = hide_graph(body, definitions)
        row_id = uuid.uuid4().hex[:16]
        with self.engine.begin() as conn:
            conn.execute(insert(_TABLE).values(id=row_id, workspace_id=workspace_id, name=name,
                                               description=description, graph_json=json.dumps(body),
                                               created_by=author, created_at=time.time()))
        return _template(row_id, name, description, body)

    def list(self, workspace_id: str) -> list[Template]:
        with self.engine.connect() as conn:
            rows = conn.execute(select(_TABLE).where(_TABLE.c.workspace_id == workspace_id)
                                .order_by(_TABLE.c.name)).all()
        return [_template(r.id, r.name, r.description, json.loads(r.graph_json)) for r in rows]

    def get(self, workspace_id: str, template_id: str) -> Template | None:
        """The workspace's template by its picker id (`workspace-<id>`), or None (another workspace's too)."""
        row_id = template_id.removeprefix(PREFIX)
        with self.engine.connect() as conn:
            row = conn.execute(select(_TABLE).where(_TABLE.c.id == row_id,
                                                    _TABLE.c.workspace_id == workspace_id)).first()
        return _template(row.id, row.name, row.description, json.loads(row.graph_json)) if row else None

    def delete(self, workspace_id: str, template_id: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(delete(_TABLE).where(_TABLE.c.id == template_id.removeprefix(PREFIX),
                                              _TABLE.c.workspace_id == workspace_id))


def is_workspace_template(template_id: str) -> bool:
    return template_id.startswith(PREFIX)


def _template(row_id: str, name: str, description: str, graph: dict[str, Any]) -> Template:
    return Template(id=f"{PREFIX}{row_id}", name=name, description=description or "Saved by your team.",
                    order=0, graph=graph)


template_store = process_wide(TemplateStore)
