"""The graph canvas: a typed wrapper around assets/flow_canvas.jsx (React Flow); protocol in docs/editor.md."""

from __future__ import annotations

from typing import Any

import reflex as rx
from reflex_base.components.component import NoSSRComponent
from reflex_base.event import EventHandler, passthrough_event_spec
from reflex_base.utils.imports import ImportDict
from reflex_base.vars.base import Var

# Each canvas event hands Python one plain dict (see the table in docs/editor.md).
_Event = EventHandler[passthrough_event_spec(dict[str, Any])]


class FlowCanvas(NoSSRComponent):
    """React Flow needs `window`, so the canvas renders in the browser only."""

    library = "$/public/flow_canvas.jsx"
    tag = "FlowCanvas"
    lib_dependencies: list[str] = ["@xyflow/react@12.10.0", "lucide-react@1.26.0"]

    definitions: Var[dict]
    graph: Var[dict]
    patch: Var[dict]
    issues: Var[dict]
    statuses: Var[dict]
    errors: Var[dict]  # the run shown: failed node id -> its error, shown on the node
    ports: Var[dict]
    pinned: Var[dict]
    history: Var[dict]  # a stored version or a diff to show read-only instead of the graph (History)
    read_only: Var[bool]  # a viewer: nothing but selection and the viewport goes to Python
    catchup: Var[dict]  # room patches this tab missed
    people: Var[list]  # who is in the room (presence), with their selections
    cursors: Var[dict]  # presence id -> [x, y] in flow coordinates
    me: Var[str]  # this tab's presence id
    focus: Var[dict]  # {n, ids}: select these nodes (a new n each time)

    on_connect: _Event
    on_move: _Event
    on_delete: _Event
    on_select: _Event
    on_parameter: _Event
    on_add: _Event
    on_paste: _Event
    on_undo: _Event
    on_redo: _Event
    on_save: _Event
    on_resync: _Event
    on_viewport: _Event
    on_run_to: _Event
    on_cursor: _Event
    on_remote: _Event
    on_leave: _Event

    def add_imports(self) -> ImportDict:
        # The canvas's own stylesheet is imported by the JSX, after React Flow's.
        return {"": ["@xyflow/react/dist/style.css"]}


def flow_canvas(**props: Any) -> rx.Component:
    return FlowCanvas.create(**props)
