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

from nodeflow_app.chat.service import starts_chats
from nodeflow_app.editor import fields
from nodeflow_app.editor.document import EditError, GraphDocument
from nodeflow_app.provider_settings import configured_providers, default_model, model_choices
from nodeflow_app.accounts.roles import allows
from nodeflow_app.state.access import current
from nodeflow_app.secret_values import hide_graph, hide_node, seal_graph, seal_parameter, secrets_to_enter
from nodeflow_app.store.graphs import graph_store
from nodeflow_app.triggers.view import trigger_view
from nodeflow_app.validation import Issue, validate_graph
from nodes._registry import default_registry
from nodeflow_app.state.access import requires

# Where a clicked palette entry lands, relative to the visible area (the canvas is at least this big).
CLICK_ADD_AT = (360.0, 220.0)


class EditorState(rx.State):
    """One open graph per browser tab."""

    graph_name: str = ""
    name_field_rev: int = 0
    has_chat_start: bool = False  # a test run then asks for the message to test with
    not_found: str = ""
    canvas_graph: dict[str, Any] = {"rev": 0, "graph": {"nodes": [], "edges": []}}
    patch: dict[str, Any] = {"rev": 0, "seq": 0, "ops": []}
    save_status: str = "saved"  # saved | unsaved | error
    saved_version: int = 0
    can_undo: bool = False
    can_redo: bool = False
    node_count: int = -1  # -1 until a graph is loaded; 0 or 1 shows the canvas's "how to add nodes" hint
    node_issues: dict[str, str] = {}
    issue_list: list[dict[str, str]] = []  # errors (Issue.as_dict() plus `text`)
    warning_list: list[dict[str, str]] = []  # e.g. a model whose provider is not configured yet
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
    field_warnings: dict[str, str] = {}
    field_wired: dict[str, str] = {}
    field_expression: dict[str, bool] = {}
    settings_texts: dict[str, str] = {}
    upstream_names: list[str] = []
    number_drafts: dict[str, str] = {}
    # The fields of upstream nodes' last outputs (latest runs of this graph), as expressions to insert.
    upstream_fields: list[dict[str, str]] = []
    # Options the install provides for `Parameter.choices` selects: {choices name: [[value, label]]}.
    choice_options: dict[str, list[list[str]]] = {}
    # The model picker's suggestions: configured providers first (provider_settings.model_choices).
    model_options: list[dict[str, str]] = []

    _doc: GraphDocument | None = None
    _rev: int = 0
    _seq: int = 0
    _edits: int = 0
    _saved_edits: int = 0
    _form_rev: int = 0
    _expression_modes: dict[str, list[str]] = {}
    _typed_errors: dict[str, str] = {}
    _configured: list[str] = []  # providers configured when the graph was opened
    read_only: bool = False  # the caller may look, not edit (a viewer of the graph's workspace)
    trigger_info: dict[str, Any] = {}  # a webhook's address or a schedule's next times (triggers/view.py)
    _frozen: bool = False  # History shows a stored version on the canvas: edits wait for "Back to current"

    # Loading and saving ------------------------------------------------------------------------

    @rx.event
    @requires("view")
    def load_graph(self):
        """on_load: open the graph of the URL; unsaved edits of the same graph (a reload) are saved, not dropped."""
        self._frozen = False
        return self._load(self.router.page.params.get("graph_id", ""))

    def _load(self, graph_id: str):
        if self._doc is not None and self._doc.id == graph_id:
            if self._edits != self._saved_edits:
                self._save("autosave")
        else:
            failure = self._open(graph_id)
            if self._doc is None:
                return failure
        self.not_found, self.graph_name = "", self._doc.name
        # A viewer's canvas is read-only (the access check refuses their edits anyway; this says so up front).
        self.read_only = not allows(current().role, "edit")
        self.choice_options = install_choices()
        self._configured = configured_providers()
        self.model_options = model_choices(self._configured)
        self._select([])
        self._send_whole_graph()

    def _open(self, graph_id: str):
        """Read the stored graph into `_doc`; on failure `_doc` is None and the toast to show is returned."""
        stored = graph_store().get(graph_id)
        if stored is None:
            self._doc, self.not_found, self.graph_name = None, graph_id, ""
            return None
        graph, issues = validate_graph(stored.graph, default_registry())
        if graph is None:
            self._doc, self.not_found = None, graph_id
            return rx.toast.error(f"Graph {graph_id} cannot be read: {issues[0].line()}")
        graph.id, graph.name = stored.id, stored.name
        self._doc = GraphDocument.from_graph(graph)
        self._edits = self._saved_edits = 0
        self.saved_version, self.save_status = stored.version, "saved"
        self._set_issues(issues)
        return None

    def _reopen_after_restart(self) -> None:
        """A restarted server holds a fresh state: an edit the page queued while it was down (Reflex sends
        them on reconnect, maybe before the page's on_load) first reopens the page's graph."""
        graph_id = self.router.page.params.get("graph_id", "")
        if self._doc is None and graph_id and self._open(graph_id) is None and self._doc is not None:
            self.not_found, self.graph_name = "", self._doc.name
            self._send_whole_graph()

    # History's hooks (state/history_state.py) ---------------------------------------------------

    @requires("view")
    def set_frozen(self, frozen: bool) -> None:
        """While History shows a stored version, the live graph takes no edits and no selection."""
        self._frozen = frozen
        if frozen and self.selected_id:
            self._select([])

    @requires("edit")
    def save_pending(self) -> None:
        """Edits not saved yet become a version now (before History restores another one)."""
        if self._doc is not None and self._edits != self._saved_edits:
            self._save("autosave")

    @requires("view")
    def reopen(self) -> None:
        """Load the graph's newest stored version again (History restored an old one): a new canvas rev."""
        if self._doc is not None:
            graph_id, self._doc = self._doc.id, None
            self._load(graph_id)

    @rx.event
    @requires("view")
    def resync(self, _payload: dict[str, Any] | None = None):
        if self._doc is not None:
            self._send_whole_graph()

    def _send_whole_graph(self) -> None:
        self._rev += 1
        self._seq = 0
        self.canvas_graph = {"rev": self._rev, "graph": hide_graph(self._doc.to_json(), default_registry())}
        self.patch = {"rev": self._rev, "seq": 0, "ops": []}
        self._update_history_flags()
        self._update_node_count()
        self._update_chat_start()

    @rx.event(background=True)
    @requires("edit")
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
                                                      "autosave" if auto else "saved", current().user)
        except Exception as error:  # noqa: BLE001 - the edits stay in memory; the page says so
            async with self:
                self.save_status = "error"
                self.issue_list = [{"node_id": "", "severity": "error", "text": f"Saving failed: {error}"}]
            return
        async with self:
            self.saved_version = version
            self._saved_edits = max(self._saved_edits, edits)
            self.save_status = "saved" if self._edits == edits else "unsaved"
            self._set_issues(issues)
        if not auto:
            return rx.toast.success(f"Saved version {version}")

    @requires("edit")
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
            self.saved_version, issues = _validate_and_store(self._doc.id, self._doc.to_json(), note, current().user)
        except Exception as error:  # noqa: BLE001 - the edits stay in memory; the page says so
            self.save_status = "error"
            self.issue_list = [{"node_id": "", "severity": "error", "text": f"Saving failed: {error}"}]
            return
        self._saved_edits = self._edits
        self.save_status = "saved"
        self._set_issues(issues)

    @rx.event
    @requires("edit")
    def rename_graph(self, name: str):
        """The header's name field, committed when it is left: the store checks and records the new name."""
        if self._doc is None:
            return
        try:
            graph_store().rename(self._doc.id, name)
        except ValueError as error:
            self.name_field_rev += 1  # the field remounts with the name the graph still has
            return rx.toast.error(f"Not renamed: {error}")
        self._doc.name = self.graph_name = name.strip()

    # Canvas events -----------------------------------------------------------------------------

    @rx.event
    @requires("edit")
    def on_connect(self, payload: dict[str, Any]):
        return self._edit(lambda doc: doc.connect(
            default_registry(), str(payload.get("source")), str(payload.get("sourceHandle")),
            str(payload.get("target")), str(payload.get("targetHandle"))))

    @rx.event
    @requires("edit")
    def on_move(self, payload: dict[str, Any]):
        # A drag changes positions only: the inspector shows none, so it is left alone (a small delta).
        return self._edit(lambda doc: doc.move(payload.get("moves") or [], default_registry()), inspect=False)

    @rx.event
    @requires("edit")
    def on_delete(self, payload: dict[str, Any]):
        return self._edit(lambda doc: doc.delete(payload.get("nodes") or [], payload.get("edges") or []))

    @rx.event
    @requires("view")
    def on_select(self, payload: dict[str, Any]):
        self._select([str(i) for i in payload.get("nodes") or []])

    @rx.event
    @requires("edit")
    def on_parameter(self, payload: dict[str, Any]):
        node_id, parameter = str(payload.get("id")), str(payload.get("parameter"))
        self._form_rev += 1  # the inspector shows the canvas's new value
        return self._edit(lambda doc: doc.set_parameter(default_registry(), node_id, parameter, payload.get("value")))

    @rx.event
    @requires("edit")
    def on_add(self, payload: dict[str, Any]):
        node_type = str(payload.get("type"))
        return self._edit(lambda doc: doc.add_node(default_registry(), node_type,
                                                   payload.get("position") or {"x": 0, "y": 0},
                                                   defaults=self._install_defaults(node_type)))

    @rx.event
    @requires("edit")
    def add_from_palette(self, node_type: str):
        """A clicked palette entry lands in the visible area, on a free spot (repeated clicks do not stack)."""
        self._reopen_after_restart()
        if self._doc is None:
            return
        viewport = self._doc.viewport
        position = self._doc.free_spot({"x": (CLICK_ADD_AT[0] - viewport.x) / viewport.zoom,
                                        "y": (CLICK_ADD_AT[1] - viewport.y) / viewport.zoom})
        return self._edit(lambda doc: doc.add_node(default_registry(), node_type, position,
                                                   defaults=self._install_defaults(node_type)))

    @rx.event
    @requires("edit")
    def on_paste(self, payload: dict[str, Any]):
        return self._edit(lambda doc: doc.paste(default_registry(), str(payload.get("text") or ""),
                                                payload.get("position")))

    @rx.event
    @requires("view")
    def on_viewport(self, payload: dict[str, Any]):
        if self._doc is not None:
            try:
                self._doc.set_viewport({k: float(payload[k]) for k in ("x", "y", "zoom")})
            except (KeyError, TypeError, ValueError):
                pass  # a malformed viewport is not worth an error: the next pan sends another

    @rx.event
    @requires("edit")
    def undo(self, _payload: dict[str, Any] | None = None):
        return self._replay(lambda doc: doc.undo())

    @rx.event
    @requires("edit")
    def redo(self, _payload: dict[str, Any] | None = None):
        return self._replay(lambda doc: doc.redo())

    @rx.event
    @requires("edit")
    def delete_selection(self):
        return self._edit(lambda doc: doc.delete(self._selected_ids()))

    # Inspector events --------------------------------------------------------------------------

    @rx.event
    @requires("edit")
    def set_field(self, parameter_id: str, raw: Any):
        node, definition = self._selected_node()
        if node is None:
            return
        parameter = definition.parameter(parameter_id)
        keep_invalid = False
        try:
            value = fields.parse_field(parameter, raw)
        except fields.FieldError as error:
            self._typed_errors[parameter_id] = str(error)
            value = fields.typed_number(raw) if parameter.type in fields.NUMBER_TYPES else None
            if value is None:
                self.field_errors = {**self.field_errors, parameter_id: str(error)}
                return
            keep_invalid = True  # kept as typed and shown in red; Validate and a run report it too
        else:
            self._typed_errors.pop(parameter_id, None)
        if node.data.get(parameter_id) == value or (parameter.secret and value in (None, "")):
            self._refresh_inspector()  # an empty secret field keeps the secret (its text is never shown)
            return
        value = seal_parameter(parameter, value)
        return self._edit(lambda doc: doc.set_parameter(default_registry(), node.id, parameter_id, value,
                                                        keep_invalid=keep_invalid))

    @rx.event
    @requires("edit")
    def set_number_draft(self, parameter_id: str, text: str):
        """A number field's text while it is typed: its slider follows (nothing is stored until it is left)."""
        self.number_drafts = {**self.number_drafts, parameter_id: str(text)}

    @rx.event
    @requires("edit")
    def set_row_field(self, parameter_id: str, index: int, field_id: str, raw: str):
        return self._edit_rows(parameter_id, lambda p, current: fields.set_row_field(p, current, index, field_id, raw))

    @rx.event
    @requires("edit")
    def add_row(self, parameter_id: str):
        return self._edit_rows(parameter_id, fields.add_row)

    @rx.event
    @requires("edit")
    def remove_row(self, parameter_id: str, index: int):
        return self._edit_rows(parameter_id, lambda p, current: fields.remove_row(p, current, index))

    @rx.event
    @requires("edit")
    def toggle_expression(self, parameter_id: str):
        if not self.selected_id:
            return
        modes = set(self._expression_modes.get(self.selected_id, []))
        modes ^= {parameter_id}
        self._expression_modes[self.selected_id] = sorted(modes)
        self._form_rev += 1
        self._refresh_inspector()

    @rx.event
    @requires("edit")
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
    @requires("edit")
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
    @requires("view")
    def validate(self):
        if self._doc is None:
            return
        _, issues = validate_graph(self._doc.to_json(), default_registry())
        self._set_issues(issues)
        self.issues_open = True
        if not self.issue_list:
            return rx.toast.success("The graph is valid")

    @rx.event
    @requires("view")
    def set_issues_open(self, open_: bool):
        self.issues_open = open_

    @rx.event
    @requires("view")
    def select_node(self, node_id: str):
        """Select a node from outside the canvas (the issues list)."""
        if self._doc is not None and node_id in self._doc.nodes:
            self._select([node_id])
            self._send([{"op": "select", "ids": [node_id]}])

    @rx.event
    @requires("view")
    def export_graph(self):
        if self._doc is None:
            return
        slug = re.sub(r"[^a-z0-9]+", "-", self._doc.name.lower()).strip("-") or "graph"
        graph, registry = self._doc.to_json(), default_registry()
        download = rx.download(data=json.dumps(hide_graph(graph, registry), indent=2), filename=f"{slug}.json")
        missing = secrets_to_enter(graph, registry)
        if not missing:
            return download
        return [download, rx.toast.info("Secrets are not exported; enter them again after importing: "
                                        + ", ".join(missing), duration=15000)]

    # Internals ---------------------------------------------------------------------------------

    def _install_defaults(self, node_type: str) -> dict[str, Any]:
        """A configured provider's model for a new node's model parameters, when their default's provider is not."""
        definition = default_registry().definition(node_type)
        if definition is None:
            return {}
        chosen = {}
        for parameter in definition.parameters:
            if parameter.type == "model" and isinstance(parameter.default, str):
                model = default_model(self._configured, parameter.default)
                if model is not None:
                    chosen[parameter.id] = model
        return chosen

    def _edit(self, operation, inspect: bool = True):
        """Run one document operation; answer with a patch, or a toast saying why nothing changed."""
        self._reopen_after_restart()
        if self._doc is None:
            return rx.toast.error("No graph is open")
        if self._frozen:
            return rx.toast.error("A stored version is shown: go Back to current to edit")
        try:
            change = operation(self._doc)
        except EditError as error:
            return rx.toast.error(str(error))
        return self._after_change(change.ops, inspect)

    def _replay(self, operation):
        if self._doc is None or self._frozen:
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
        self._update_node_count()
        self._update_chat_start()

    def _send(self, ops: list[dict[str, Any]]) -> None:
        self._seq += 1
        self.patch = {"rev": self._rev, "seq": self._seq, "ops": hide_ops(ops, default_registry())}

    def _update_chat_start(self) -> None:
        found = self._doc is not None and any(starts_chats(default_registry(), n.type) for n in self._doc.nodes.values())
        if found != self.has_chat_start:
            self.has_chat_start = found

    def _update_history_flags(self) -> None:
        can_undo, can_redo = bool(self._doc and self._doc.undo_stack), bool(self._doc and self._doc.redo_stack)
        if (can_undo, can_redo) != (self.can_undo, self.can_redo):  # assigning marks a var dirty even if equal
            self.can_undo, self.can_redo = can_undo, can_redo

    def _update_node_count(self) -> None:
        count = len(self._doc.nodes) if self._doc else -1
        if count != self.node_count:
            self.node_count = count

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
        value = seal_parameter(parameter, value)
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
            if self.number_drafts:
                self.number_drafts = {}
            self.selected_id = node_id
            self._load_upstream_fields()
        self.selected_id = node_id
        self._refresh_inspector()

    def _load_upstream_fields(self) -> None:
        """What the selected node's upstream nodes gave in the graph's latest runs (n8n's input panel)."""
        graph = self._doc.to_graph() if self._doc is not None and self.selected_id else None
        if graph is None:
            if self.upstream_fields:
                self.upstream_fields = []
            return
        names = {n.name: n.id for n in graph.nodes}
        wanted = {names[name]: name for name in fields.upstream_names(graph, self.selected_id) if name in names}
        try:
            outputs = _last_outputs(self._doc.id, set(wanted)) if wanted else {}
        except Exception:  # noqa: BLE001 - run history is a help here; the inspector must open without it
            outputs = {}
        self.upstream_fields = [row for node_id, name in wanted.items() if node_id in outputs
                                for row in fields.output_fields(name, outputs[node_id])]

    def _refresh_inspector(self) -> None:
        node, definition = self._selected_node()
        self.form_key = f"{self.selected_id}-{self._form_rev}-"
        if node is None or definition is None:
            self.selected_type = self.selected_name = ""
            self.field_texts, self.field_flags, self.field_rows = {}, {}, {}
            self.field_errors, self.field_wired, self.field_expression = {}, {}, {}
            self.field_warnings = {}
            self.settings_texts, self.upstream_names = {}, []
            self.trigger_info = {}
            return
        modes = set(self._expression_modes.get(node.id, []))
        view = fields.field_view(definition, node, self._doc.to_graph(), modes)
        self.selected_type, self.selected_name = node.type, node.name
        self.field_texts, self.field_flags, self.field_rows = view.texts, view.flags, view.rows
        self.field_errors = {**view.errors, **self._typed_errors}
        self.field_warnings = view.warnings
        self.field_wired, self.field_expression = view.wired, view.expression
        self.settings_texts, self.upstream_names = view.settings, view.upstream
        self.trigger_info = trigger_view(definition, self._doc.id, node.id, node.data)

    def _set_issues(self, issues: list[Issue]) -> None:
        """The Validate list (errors, then warnings) and each node's first error (outlined on the canvas)."""
        by_node: dict[str, str] = {}
        for issue in issues:
            if issue.node_id and issue.severity == "error":
                by_node.setdefault(issue.node_id, _issue_text(issue))
        self.node_issues = by_node
        rows = [{**issue.as_dict(), "text": _issue_text(issue)} for issue in issues]
        self.issue_list = [row for row in rows if row["severity"] == "error"]
        self.warning_list = [row for row in rows if row["severity"] == "warning"]


def _issue_text(issue: Issue) -> str:
    """What the Validate list shows: the node and parameter when the message does not name them."""
    if issue.parameter and issue.node_name:
        return f"'{issue.node_name}' {issue.parameter}: {issue.message}"
    return issue.message


def _last_outputs(graph_id: str, wanted: set[str], runs: int = 5) -> dict[str, Any]:
    """Node id -> its main output (first port) in the latest of the graph's last `runs` runs where it completed."""
    from nodeflow_app.runs.service import run_service

    service, found = run_service(), {}
    for summary in service.list_runs(graph_id, limit=runs):
        for node in (service.get_run(summary["id"]) or {}).get("nodes", []):
            node_id, outputs = node["node_id"], node.get("outputs")
            if node_id in wanted and node_id not in found and node["status"] == "completed" and outputs:
                found[node_id] = next(iter(outputs.values()))
        if len(found) == len(wanted):
            break
    return found


def install_choices() -> dict[str, list[list[str]]]:
    """The options of install-provided selects, read when a graph opens (a new declaration needs no restart)."""
    from nodeflow_app.llm.mcp_servers import McpConfigError, declared_servers

    try:
        servers = declared_servers()
    except McpConfigError:
        servers = {}  # the run names the mistake in the file; the editor just offers nothing
    return {"mcp_servers": [[name, f"{name}: {s.description}" if s.description else name]
                            for name, s in sorted(servers.items())]}


def _validate_and_store(graph_id: str, graph: dict[str, Any], note: str, author: Any = None):
    """A new version of the graph by `author` (a signed-in User), and the issues it has (saved anyway: work is
    never refused). Secrets still in clear (a pasted fragment) are sealed on the way to the database."""
    _, issues = validate_graph(graph, default_registry())
    return graph_store().save(graph_id, seal_graph(graph, default_registry()), note=note,
                              author=getattr(author, "id", None), author_name=getattr(author, "name", "")), issues


def hide_ops(ops: list[dict[str, Any]], registry) -> list[dict[str, Any]]:
    """Patch ops as the browser may see them: node data without secrets."""
    hidden = []
    for op in ops:
        node = op.get("node")
        if isinstance(node, dict) and isinstance(node.get("data"), dict):
            op = {**op, "node": {**node, "data": hide_node(registry.definition(str(node.get("type"))), node["data"])}}
        hidden.append(op)
    return hidden


def _touches(ops: list[dict[str, Any]], node_id: str) -> bool:
    """Whether a patch changes the node or a wire at it (its inspector view may differ)."""
    for op in ops:
        if op["op"] in ("add_node", "update_node") and op["node"]["id"] == node_id:
            return True
        if op["op"] in ("add_edge", "remove_edge", "remove_node"):
            return True
    return False
