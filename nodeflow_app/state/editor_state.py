"""State of the graph editor page: the authoritative graph in a backend-only var, small view vars for the browser.

The browser gets the whole graph once per load (`canvas_graph`) and afterwards one small `patch`
per committed edit (docs/editor.md): a delta carries the whole value of every dirty var, so the
graph itself is never a state var. Edits go through `GraphDocument` (undoable ops); saving goes
to the graph store, automatically a moment after the last edit.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import reflex as rx

from nodeflow_app.editor import fields
from nodeflow_app.editor.document import EditError, GraphDocument
from nodeflow_app.runtime.graph import normalize
from nodeflow_app.store.graphs import graph_store
from nodes._registry import default_registry

# Where a clicked palette entry lands, relative to the visible area (the canvas is at least this big).
CLICK_ADD_AT = (360.0, 220.0)


class EditorState(rx.State):
    """One open graph per browser tab."""

    graph_name: str = ""
    not_found: str = ""
    canvas_graph: dict[str, Any] = {"rev": 0, "graph": {"nodes": [], "edges": []}}
    patch: dict[str, Any] = {"rev": 0, "seq": 0, "ops": []}
    save_status: str = "saved"  # saved | unsaved | error
    saved_version: int = 0
    can_undo: bool = False
    can_redo: bool = False
    node_issues: dict[str, str] = {}
    issue_list: list[dict[str, str]] = []
    issues_open: bool = False

    # The inspector's view of the selected node (see components/inspector.py).
    selected_id: str = ""
    selected_type: str = ""
    selected_name: str = ""
    name_error: str = ""
    form_key: str = ""
    field_texts: dict[str, str] = {}
    field_flags: dict[str, bool] = {}
    field_rows: dict[str, list[dict[str, str]]] = {}
    field_errors: dict[str, str] = {}
    field_wired: dict[str, str] = {}
    field_expression: dict[str, bool] = {}
    settings_texts: dict[str, str] = {}
    upstream_names: list[str] = []

    _doc: GraphDocument | None = None
    _rev: int = 0
    _seq: int = 0
    _edits: int = 0
    _saved_edits: int = 0
    _form_rev: int = 0
    _expression_modes: dict[str, list[str]] = {}
    _typed_errors: dict[str, str] = {}

    # Loading and saving ------------------------------------------------------------------------

    @rx.event
    def load_graph(self):
        """on_load: open the graph of the URL; unsaved edits of the same graph (a reload) are saved, not dropped."""
        graph_id = self.router.page.params.get("graph_id", "")
        if self._doc is not None and self._doc.id == graph_id:
            if self._edits != self._saved_edits:
                self._save("autosave")
        else:
            stored = graph_store().get(graph_id)
            if stored is None:
                self._doc, self.not_found, self.graph_name = None, graph_id, ""
                return
            graph, issues = normalize(stored.graph, default_registry())
            if graph is None:
                self._doc, self.not_found = None, graph_id
                return rx.toast.error(f"Graph {graph_id} cannot be read: {issues[0].message}")
            graph.id, graph.name = stored.id, stored.name
            self._doc = GraphDocument.from_graph(graph)
            self._edits = self._saved_edits = 0
            self.saved_version, self.save_status = stored.version, "saved"
            self._set_issues(issues)
        self.not_found, self.graph_name = "", self._doc.name
        self._select([])
        self._send_whole_graph()

    @rx.event
    def resync(self, _payload: dict[str, Any] | None = None):
        if self._doc is not None:
            self._send_whole_graph()

    def _send_whole_graph(self) -> None:
        self._rev += 1
        self._seq = 0
        self.canvas_graph = {"rev": self._rev, "graph": self._doc.to_json()}
        self.patch = {"rev": self._rev, "seq": 0, "ops": []}
        self._update_history_flags()

    @rx.event(background=True)
    async def save(self, payload: dict[str, Any] | None = None):
        """Ctrl+S and the Save button; the canvas also calls it (`auto`) a second after the last patch.

        Validating and writing a 1,000-node graph takes ~80 ms: it runs in a thread, outside the state
        lock, so edits made meanwhile are neither blocked nor lost (they stay unsaved).
        """
        auto = bool((payload or {}).get("auto"))
        async with self:
            if self._doc is None or (auto and self._edits == self._saved_edits):
                return
            graph_id, graph, edits = self._doc.id, self._doc.to_json(), self._edits
        try:
            version, issues = await asyncio.to_thread(_validate_and_store, graph_id, graph,
                                                      "autosave" if auto else "saved")
        except Exception as error:  # noqa: BLE001 - the edits stay in memory; the page says so
            async with self:
                self.save_status = "error"
                self.issue_list = [{"node_id": "", "message": f"Saving failed: {error}"}]
            return
        async with self:
            self.saved_version = version
            self._saved_edits = max(self._saved_edits, edits)
            self.save_status = "saved" if self._edits == edits else "unsaved"
            self._set_issues(issues)
        if not auto:
            return rx.toast.success(f"Saved version {version}")

    def save_pending_edits(self, graph_id: str) -> bool:
        """Before a run of the stored graph `graph_id` (chat, test run): save this editor's unsaved edits of
        it now. Call under the state lock (`get_state` from another state's handler). False: saving failed."""
        if self._doc is None or self._doc.id != graph_id or self._edits == self._saved_edits:
            return True
        self._save("autosave")
        return self.save_status == "saved"

    def _save(self, note: str) -> None:
        """Save now, inside the handler (a reload with edits still pending)."""
        try:
            self.saved_version, issues = _validate_and_store(self._doc.id, self._doc.to_json(), note)
        except Exception as error:  # noqa: BLE001 - the edits stay in memory; the page says so
            self.save_status = "error"
            self.issue_list = [{"node_id": "", "message": f"Saving failed: {error}"}]
            return
        self._saved_edits = self._edits
        self.save_status = "saved"
        self._set_issues(issues)

    # Canvas events -----------------------------------------------------------------------------

    @rx.event
    def on_connect(self, payload: dict[str, Any]):
        return self._edit(lambda doc: doc.connect(
            default_registry(), str(payload.get("source")), str(payload.get("sourceHandle")),
            str(payload.get("target")), str(payload.get("targetHandle"))))

    @rx.event
    def on_move(self, payload: dict[str, Any]):
        # A drag changes positions only: the inspector shows none, so it is left alone (a small delta).
        return self._edit(lambda doc: doc.move(payload.get("moves") or []), inspect=False)

    @rx.event
    def on_delete(self, payload: dict[str, Any]):
        return self._edit(lambda doc: doc.delete(payload.get("nodes") or [], payload.get("edges") or []))

    @rx.event
    def on_select(self, payload: dict[str, Any]):
        self._select([str(i) for i in payload.get("nodes") or []])

    @rx.event
    def on_parameter(self, payload: dict[str, Any]):
        node_id, parameter = str(payload.get("id")), str(payload.get("parameter"))
        self._form_rev += 1  # the inspector shows the canvas's new value
        return self._edit(lambda doc: doc.set_parameter(default_registry(), node_id, parameter, payload.get("value")))

    @rx.event
    def on_add(self, payload: dict[str, Any]):
        return self._edit(lambda doc: doc.add_node(default_registry(), str(payload.get("type")),
                                                   payload.get("position") or {"x": 0, "y": 0}))

    @rx.event
    def add_from_palette(self, node_type: str):
        """A clicked palette entry lands in the visible area, staggered so repeated clicks do not stack."""
        if self._doc is None:
            return
        viewport = self._doc.viewport
        stagger = 30.0 * (len(self._doc.nodes) % 6)
        position = {"x": (CLICK_ADD_AT[0] - viewport.x) / viewport.zoom + stagger,
                    "y": (CLICK_ADD_AT[1] - viewport.y) / viewport.zoom + stagger}
        return self._edit(lambda doc: doc.add_node(default_registry(), node_type, position))

    @rx.event
    def on_paste(self, payload: dict[str, Any]):
        return self._edit(lambda doc: doc.paste(default_registry(), str(payload.get("text") or ""),
                                                payload.get("position")))

    @rx.event
    def on_viewport(self, payload: dict[str, Any]):
        if self._doc is not None:
            try:
                self._doc.set_viewport({k: float(payload[k]) for k in ("x", "y", "zoom")})
            except (KeyError, TypeError, ValueError):
                pass  # a malformed viewport is not worth an error: the next pan sends another

    @rx.event
    def undo(self, _payload: dict[str, Any] | None = None):
        return self._replay(lambda doc: doc.undo())

    @rx.event
    def redo(self, _payload: dict[str, Any] | None = None):
        return self._replay(lambda doc: doc.redo())

    @rx.event
    def delete_selection(self):
        return self._edit(lambda doc: doc.delete(self._selected_ids()))

    # Inspector events --------------------------------------------------------------------------

    @rx.event
    def set_field(self, parameter_id: str, raw: Any):
        node, definition = self._selected_node()
        if node is None:
            return
        parameter = definition.parameter(parameter_id)
        try:
            value = fields.parse_field(parameter, raw)
        except fields.FieldError as error:
            self._typed_errors[parameter_id] = str(error)
            self.field_errors = {**self.field_errors, parameter_id: str(error)}
            return
        self._typed_errors.pop(parameter_id, None)
        if node.data.get(parameter_id) == value:
            self._refresh_inspector()
            return
        return self._edit(lambda doc: doc.set_parameter(default_registry(), node.id, parameter_id, value))

    @rx.event
    def set_row_field(self, parameter_id: str, index: int, field_id: str, raw: str):
        return self._edit_rows(parameter_id, lambda p, current: fields.set_row_field(p, current, index, field_id, raw))

    @rx.event
    def add_row(self, parameter_id: str):
        return self._edit_rows(parameter_id, fields.add_row)

    @rx.event
    def remove_row(self, parameter_id: str, index: int):
        return self._edit_rows(parameter_id, lambda p, current: fields.remove_row(p, current, index))

    @rx.event
    def toggle_expression(self, parameter_id: str):
        if not self.selected_id:
            return
        modes = set(self._expression_modes.get(self.selected_id, []))
        modes ^= {parameter_id}
        self._expression_modes[self.selected_id] = sorted(modes)
        self._form_rev += 1
        self._refresh_inspector()

    @rx.event
    def rename_selected(self, name: str):
        if not self.selected_id:
            return
        try:
            change = self._doc.rename(self.selected_id, name)
        except EditError as error:
            self.name_error = str(error)
            return
        self.name_error = ""
        return self._after_change(change.ops) if change.ops else None

    @rx.event
    def set_setting(self, key: str, raw: str):
        node, _ = self._selected_node()
        if node is None:
            return
        try:
            settings = fields.parse_setting(node.settings, key, str(raw))
        except fields.FieldError as error:
            self.field_errors = {**self.field_errors, f"setting:{key}": str(error)}
            return
        return self._edit(lambda doc: doc.set_settings(default_registry(), node.id, settings))

    # Validation, export ------------------------------------------------------------------------

    @rx.event
    def validate(self):
        if self._doc is None:
            return
        issues = self._doc.issues(default_registry())
        self._set_issues(issues)
        self.issues_open = True
        if not issues:
            return rx.toast.success("The graph is valid")

    @rx.event
    def set_issues_open(self, open_: bool):
        self.issues_open = open_

    @rx.event
    def select_node(self, node_id: str):
        """Select a node from outside the canvas (the issues list)."""
        if self._doc is not None and node_id in self._doc.nodes:
            self._select([node_id])
            self._send([{"op": "select", "ids": [node_id]}])

    @rx.event
    def export_graph(self):
        if self._doc is None:
            return
        slug = re.sub(r"[^a-z0-9]+", "-", self._doc.name.lower()).strip("-") or "graph"
        return rx.download(data=json.dumps(self._doc.to_json(), indent=2), filename=f"{slug}.json")

    # Internals ---------------------------------------------------------------------------------

    def _edit(self, operation, inspect: bool = True):
        """Run one document operation; answer with a patch, or a toast saying why nothing changed."""
        if self._doc is None:
            return rx.toast.error("No graph is open")
        try:
            change = operation(self._doc)
        except EditError as error:
            return rx.toast.error(str(error))
        return self._after_change(change.ops, inspect)

    def _replay(self, operation):
        if self._doc is None:
            return
        ops = operation(self._doc)
        if ops:
            self._form_rev += 1
            return self._after_change(ops)

    def _after_change(self, ops: list[dict[str, Any]], inspect: bool = True):
        if not ops:
            return
        self._send(ops)
        selection = next((op["ids"] for op in ops if op["op"] == "select"), None)
        if selection is not None:
            self._select(selection)
        elif inspect and self.selected_id and (self.selected_id not in self._doc.nodes or _touches(ops, self.selected_id)):
            self._select([self.selected_id] if self.selected_id in self._doc.nodes else [], keep_form=True)
        self._edits += 1
        self.save_status = "unsaved"
        self._update_history_flags()

    def _send(self, ops: list[dict[str, Any]]) -> None:
        self._seq += 1
        self.patch = {"rev": self._rev, "seq": self._seq, "ops": ops}

    def _update_history_flags(self) -> None:
        can_undo, can_redo = bool(self._doc and self._doc.undo_stack), bool(self._doc and self._doc.redo_stack)
        if (can_undo, can_redo) != (self.can_undo, self.can_redo):  # assigning marks a var dirty even if equal
            self.can_undo, self.can_redo = can_undo, can_redo

    def _edit_rows(self, parameter_id: str, update):
        node, definition = self._selected_node()
        if node is None:
            return
        parameter = definition.parameter(parameter_id)
        try:
            value = update(parameter, node.data.get(parameter_id))
        except fields.FieldError as error:
            self.field_errors = {**self.field_errors, parameter_id: str(error)}
            return
        return self._edit(lambda doc: doc.set_parameter(default_registry(), node.id, parameter_id, value))

    def _selected_ids(self) -> list[str]:
        return [self.selected_id] if self.selected_id else []

    def _selected_node(self):
        if self._doc is None or self.selected_id not in self._doc.nodes:
            return None, None
        node = self._doc.nodes[self.selected_id]
        return node, default_registry().definition(node.type)

    def _select(self, ids: list[str], keep_form: bool = False) -> None:
        """The inspector follows a single selected node; none or several show the empty inspector."""
        node_id = ids[0] if len(ids) == 1 and self._doc is not None and ids[0] in self._doc.nodes else ""
        if node_id != self.selected_id or not keep_form:
            self._form_rev += 1
            self._typed_errors = {}
            self.name_error = ""
        self.selected_id = node_id
        self._refresh_inspector()

    def _refresh_inspector(self) -> None:
        node, definition = self._selected_node()
        self.form_key = f"{self.selected_id}-{self._form_rev}-"
        if node is None or definition is None:
            self.selected_type = self.selected_name = ""
            self.field_texts, self.field_flags, self.field_rows = {}, {}, {}
            self.field_errors, self.field_wired, self.field_expression = {}, {}, {}
            self.settings_texts, self.upstream_names = {}, []
            return
        modes = set(self._expression_modes.get(node.id, []))
        view = fields.field_view(definition, node, self._doc.to_graph(), modes)
        self.selected_type, self.selected_name = node.type, node.name
        self.field_texts, self.field_flags, self.field_rows = view.texts, view.flags, view.rows
        self.field_errors = {**view.errors, **self._typed_errors}
        self.field_wired, self.field_expression = view.wired, view.expression
        self.settings_texts, self.upstream_names = view.settings, view.upstream

    def _set_issues(self, issues) -> None:
        by_node: dict[str, str] = {}
        for issue in issues:
            if issue.node_id:
                by_node.setdefault(issue.node_id, issue.message)
        self.node_issues = by_node
        self.issue_list = [{"node_id": i.node_id or "", "message": i.message} for i in issues]


def _validate_and_store(graph_id: str, graph: dict[str, Any], note: str):
    """A new version of the graph, and the issues it has (saved anyway: work is never refused)."""
    _, issues = normalize(graph, default_registry())
    return graph_store().save(graph_id, graph, note=note), issues


def _touches(ops: list[dict[str, Any]], node_id: str) -> bool:
    """Whether a patch changes the node or a wire at it (its inspector view may differ)."""
    for op in ops:
        if op["op"] in ("add_node", "update_node") and op["node"]["id"] == node_id:
            return True
        if op["op"] in ("add_edge", "remove_edge", "remove_node"):
            return True
    return False
