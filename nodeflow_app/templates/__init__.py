"""Graph templates: the starting points "New graph" offers. One JSON file per template in this folder.

A template file is `{"name", "description", "order"?, "graph": {"nodes", "edges", "viewport"?}}`; its id
is the file name without `.json`. Adding a template is adding a file: nothing else changes. Templates
are read when asked for (no cache), and a test runs every one through the normalizer.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TEMPLATES_DIR = Path(__file__).resolve().parent
BLANK = "blank"  # the template of an empty graph: a Chat Start only
DEFAULT_ORDER = 100


class TemplateError(ValueError):
    """A template file that cannot be used; the message names the file and what is wrong."""


@dataclass(frozen=True)
class Template:
    id: str
    name: str
    description: str
    order: int
    graph: dict[str, Any]

    @property
    def node_count(self) -> int:
        return len(self.graph.get("nodes", []))

    def new_graph(self) -> dict[str, Any]:
        """A fresh copy of the template's graph, for a new stored graph to start from."""
        return copy.deepcopy(self.graph)


def read_template(path: Path) -> Template:
    """One template file; a TemplateError names the file and the missing or malformed field."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise TemplateError(f"template {path.name}: cannot be read: {error}") from None
    if not isinstance(raw, dict):
        raise TemplateError(f"template {path.name}: must be a JSON object")
    for field in ("name", "description"):
        if not isinstance(raw.get(field), str) or not raw[field].strip():
            raise TemplateError(f"template {path.name}: '{field}' must be a non-empty string")
    graph = raw.get("graph")
    if not isinstance(graph, dict) or not isinstance(graph.get("nodes"), list):
        raise TemplateError(f"template {path.name}: 'graph' must be an object with a 'nodes' list")
    order = raw.get("order", DEFAULT_ORDER)
    if not isinstance(order, int):
        raise TemplateError(f"template {path.name}: 'order' must be an integer")
    return Template(id=path.stem, name=raw["name"].strip(), description=raw["description"].strip(), order=order,
                    graph=graph)


def load_templates(folder: Path = TEMPLATES_DIR) -> list[Template]:
    """Every template of `folder`, Blank first, then by `order` and name."""
    templates = [read_template(path) for path in folder.glob("*.json")]
    return sorted(templates, key=lambda t: (t.id != BLANK, t.order, t.name.lower()))


def get_template(template_id: str, folder: Path = TEMPLATES_DIR) -> Template:
    """The template with this id; a TemplateError if there is none (ids are file names: no paths)."""
    path = folder / f"{template_id}.json"
    if "/" in template_id or "\\" in template_id or template_id.startswith(".") or not path.is_file():
        raise TemplateError(f"no template '{template_id}'")
    return read_template(path)
