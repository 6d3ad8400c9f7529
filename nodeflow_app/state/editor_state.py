"""State of the graph editor page: one tab's view of the graph it edits together with others.

The graph itself lives in the tab's co-editing room (`GraphRoom`, shared by everyone with the graph
open, state/graph_room.py); this state keeps what is the tab's own: the inspector, the undo history,
the validation list. The browser gets the whole graph once per load (`canvas_graph`) and afterwards
the room's small `patch` per committed edit, whoever made it (docs/editor.md): a delta carries the
whole value of every dirty var, so the graph itself is never a state var. Edits go through
`GraphDocument` (ops); saving goes to the graph store, automatically a moment after a burst of edits.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import itertools
import json
import logging
import os
import re
import threading
import time
from typing import Any, Callable, TypeVar

import reflex as rx

from nodeflow_app.state.page_threads import off_loop
from nodeflow_app import routes
from nodeflow_app.editor import fields
from nodeflow_app.editor import presence
from nodeflow_app.editor.document import Change, EditError, GraphDocument, UNDO_LIMIT, joined
from nodeflow_app.editor.wire import on_wire
from nodeflow_app.runs.view import JSON_CHARS, result_row
from nodeflow_app.provider_settings import configured_providers, default_model, model_choices, suggested_models
from nodeflow_app.accounts.roles import allows
from nodeflow_app.contract import NodeError
from nodeflow_app.state.access import current
from nodeflow_app.secret_values import (
    forget_sealed_value, hide_graph, hide_node, seal_graph, seal_parameter, secrets_to_enter,
)
from nodeflow_app.store.graphs import graph_store
from nodeflow_app.triggers.view import trigger_view
from nodeflow_app.validation import Issue, references_to, validate_graph
from nodes._registry import default_registry
from nodeflow_app.state.access import acts_on_graph, requires, still_checked
from nodeflow_app.state.graph_room import GraphRoom, modify_room, room_token

log = logging.getLogger(__name__)
# Saves of one field (typed in, left) less than this apart are one undo step: a burst of typing.
TYPING_BURST_S = 5.0
# Of the selected node's last output, what the inspector shows before "Show all".
OUTPUT_PREVIEW_CHARS = 1_500


class EditorState(rx.State):
    """One open graph per browser tab."""

    graph_name: str = ""
    name_field_rev: int = 0
    not_found: str = ""
    access_ended: bool = False  # with not_found: the person lost access to the open graph's workspace (room_access)
    # The whole graph, with the room's epoch and the seq of the last patch it holds (patches come from the room).
    canvas_graph: dict[str, Any] = {"rev": 0, "epoch": 0, "seq": 0, "graph": {"nodes": [], "edges": []}}
    catchup: dict[str, Any] = {"epoch": 0, "patches": []}  # room patches this tab missed, [[seq, ops]]
    focus: dict[str, Any] = {"n": 0, "ids": []}  # nodes to select on this tab's canvas (the issues list)
    worker: str = ""  # the process id of the backend worker that handled this tab's last event (multi-worker tests)
    me: str = ""  # this tab's presence id in the room (its own patches and cursor are not shown as others')
    me_user: str = ""  # my key in the room's faces (the toolbar shows no chip for me, from any of my tabs)
    can_undo: bool = False
    can_redo: bool = False
    node_issues: dict[str, str] = {}
    issue_list: list[dict[str, str]] = []  # errors (Issue.as_dict() plus `text`)
    warning_list: list[dict[str, str]] = []  # e.g. a model whose provider is not configured yet
    issues_open: bool = False

    # The inspector's view of the selected node (see components/inspector.py).
    selected_id: str = ""
    has_selection: bool = False  # a node or a wire is selected on the canvas (the toolbar's delete)
    selected_type: str = ""
    selected_name: str = ""
    name_error: str = ""
    form_key: str = ""
    # Each parameter's control key: the form's, plus a count of the times someone else's edit (or a row added or
    # removed) replaced what the control shows. A text field is saved while it is typed in: the key comes with
    # each save, and a save from a control since replaced (another node, someone else's value) is dropped.
    field_keys: dict[str, str] = {}
    # A secret's control key: its field key, plus a count of the times the stored secret changed (typed here and
    # stored, or replaced by someone else). Its typed text stays through other edits; a stored one is emptied.
    secret_keys: dict[str, str] = {}
    field_texts: dict[str, str] = {}
    field_flags: dict[str, bool] = {}
    field_rows: dict[str, list[dict[str, str]]] = {}
    field_errors: dict[str, str] = {}
    field_warnings: dict[str, str] = {}
    field_wired: dict[str, str] = {}
    field_expression: dict[str, bool] = {}
    field_hidden: dict[str, bool] = {}  # parameters the node's other settings hide (Parameter.show_if)
    settings_texts: dict[str, str] = {}
    upstream_names: list[str] = []
    number_drafts: dict[str, str] = {}
    # The fields of upstream nodes' last outputs (latest runs of this graph), as expressions to insert.
    upstream_fields: list[dict[str, str]] = []
    # The selected node's own record in the latest of those runs where it completed or failed (runs.view.result_row).
    node_result: dict[str, str] = {}
    # Options the install provides for `Parameter.choices` selects: {choices name: [[value, label]]}.
    choice_options: dict[str, list[list[str]]] = {}
    # The model picker's suggestions: configured providers first (provider_settings.model_choices).
    model_options: list[dict[str, str]] = []

    _graph_id: str = ""
    _rev: int = 0
    _undo: list[Change] = []  # this person's own changes: undo and redo never touch other people's
    _redo: list[Change] = []
    _form_rev: int = 0
    _field_revs: dict[str, int] = {}
    _secret_marks: dict[str, str] = {}  # parameter id -> a digest of its stored secret, as the inspector last showed it
    _secret_revs: dict[str, int] = {}
    _typing: str = ""  # the control key (and row cell) of my last saved field, and when: see _remember
    _typing_at: float = 0.0
    _expression_modes: dict[str, list[str]] = {}
    _typed_errors: dict[str, str] = {}
    _configured: list[str] = []  # providers configured for the graph's workspace when the graph was opened
    _suggested: dict[str, tuple[str, ...]] = {}  # its model suggestions per provider (provider_settings)
    read_only: bool = False  # the caller may look, not edit (a viewer of the graph's workspace)
    trigger_info: dict[str, Any] = {}  # a webhook's address or a schedule's next times (triggers/view.py)
    _selection: tuple[list[str], list[str]] = ([], [])  # the canvas's selected node ids and edge ids
    _frozen: bool = False  # History shows a stored version on the canvas: edits wait for "Back to current"

    # Loading and saving ------------------------------------------------------------------------

    @property
    def _doc(self) -> GraphDocument | None:
        """The open graph: the room's document. Valid in an event after `await self._room()`."""
        try:
            room = self._get_state_from_cache(GraphRoom)
        except ValueError:
            return None
        doc = room._doc
        return doc if doc is not None and self._graph_id and doc.id == self._graph_id else None

    @rx.event
    @requires("signed_in")
    def check_found(self) -> None:
        """on_load, before the loaders the access check refuses a non-member: the graph of a workspace they are not
        in is "not found" on the page, as one that does not exist (the editor stayed empty, only toasts said why)."""
        if not allows(current().role, "view"):
            self.not_found, self.graph_name, self.access_ended = routes.page_graph_id(self.router) or "?", "", False

    @rx.event
    @requires("view")
    async def load_graph(self):
        """on_load: join the room of the URL's graph (opening it from the database if nobody has it open)."""
        self._frozen = False
        graph_id = routes.page_graph_id(self.router)
        if graph_id != self._graph_id:
            if self._graph_id and self.me:  # another graph in the same tab: out of the previous room first
                (await self._room())[0]._leave(self.me)
            self._undo, self._redo = [], []
        self._graph_id, self.access_ended = graph_id, False
        room, failure = await self._room(fresh=True)
        self.worker = str(os.getpid())
        if self._doc is None:
            self.not_found, self.graph_name = graph_id, ""
            return failure
        if room.unsaved and allows(current().role, "edit"):
            await self._save(room, "autosave")  # a reload: what is still unsaved becomes a version now
        self.not_found, self.graph_name = "", self._doc.name
        # A viewer's canvas is read-only (the access check refuses their edits anyway; this says so up front).
        self.read_only = not allows(current().role, "edit")
        self.choice_options = install_choices()
        workspace = current().workspace_id or ""  # the graph's (the access check resolved it from the URL)
        self._configured = await off_loop(configured_providers, workspace)
        self._suggested = await off_loop(suggested_models, workspace)
        self.model_options = model_choices(self._configured, self._suggested)
        await self._enter(room)
        await self._select([])
        self._send_whole_graph(room)

    def _access_ended(self) -> None:
        """The tab was unlinked from its graph's room (state/room_access.py): the page says so instead of the graph."""
        self.access_ended = True
        self.not_found, self.graph_name = self._graph_id or "?", ""

    async def _room(self, fresh: bool = False) -> tuple[GraphRoom, Any]:
        """This tab's room, linked to its graph's token, holding the graph. (room, toast on failure)

        The link is made again after a server restart (a fresh state) by whatever event comes first.
        `fresh` (a page load) also rereads a graph the database holds a newer version of, and which version is live.
        """
        room = await self.get_state(GraphRoom)
        graph_id = self._graph_id or routes.page_graph_id(self.router)
        if not graph_id:
            return room, None
        restarted = not self._graph_id  # an edit queued by the page while a restarted server was down
        if restarted:
            self._graph_id = graph_id
            fresh = True
        room = await room._link_to(room_token(graph_id))
        if restarted and not self.me:  # a fresh state (a restarted server): this tab shows in the room again
            await self._enter(room)
        failure = None
        opening = room._doc is None or room._doc.id != graph_id or (fresh and await room._is_stale())
        if opening:
            error, issues = await room._open(graph_id)
            if error and error != "missing":
                failure = rx.toast.error(error)
            elif not error:
                self._set_issues(issues)
        if opening or fresh:  # the Live badge of every tab in the room (TriggerState)
            await room._reread_live()
        if restarted and room._doc is not None and not self.graph_name:  # (load_graph sends it itself)
            self.not_found, self.graph_name = "", room._doc.name
            self._send_whole_graph(room)
        return room, failure

    async def _enter(self, room: GraphRoom) -> None:
        """Show this tab in the room's presence; tabs whose websocket is gone leave it."""
        token = self.router.session.client_token
        self.me = presence.presence_id(token)
        user = current().user
        entry = presence.person(self.me, getattr(user, "id", "") or token, getattr(user, "name", "") or "Guest")
        self.me_user = entry["user"]
        room._enter(entry, token, await _connected(room._tokens.values()))

    # History's hooks (state/history_state.py), and what runs call first. Private: no event of the browser
    # reaches them, only the handlers of other states that checked their own access.

    async def _set_frozen(self, frozen: bool) -> None:
        """While History shows a stored version, the live graph takes no edits and no selection."""
        await self._room()
        self._frozen = frozen
        if frozen and self.selected_id:
            await self._select([])

    async def _save_pending(self) -> None:
        """Edits not saved yet become a version now (before History restores another one)."""
        room, _ = await self._room()
        if self._doc is not None and room.unsaved:
            await self._save(room, "autosave")

    async def _reopen(self) -> None:
        """Load the graph's newest stored version again (History restored an old one): a new room epoch,
        so every tab in the room reloads it; undo histories refer to the old one and are dropped."""
        room, _ = await self._room()
        if self._doc is not None:
            _, issues = await room._open(self._doc.id)
            self._set_issues(issues)
            self._undo, self._redo = [], []
            await self._select([])
            self._send_whole_graph(room)

    @rx.event
    @requires("view")
    async def resync(self, payload: dict[str, Any] | None = None):
        """The canvas missed room patches: the ones after its `seq` when the room still has them, else the graph."""
        room, _ = await self._room()
        if self._doc is None:
            return
        payload = payload or {}
        missed = room._since(int(payload.get("seq", -1))) if payload.get("epoch") == room._epoch else None
        if missed is None:
            self._send_whole_graph(room)
        else:
            self.catchup = {"epoch": room._epoch, "patches": [[seq, ops] for seq, ops in missed]}

    def _send_whole_graph(self, room: GraphRoom) -> None:
        self._rev += 1
        graph = hide_graph(self._doc.to_json(), default_registry())
        graph["nodes"] = [on_wire(node) for node in graph["nodes"]]
        self.canvas_graph = {"rev": self._rev, "epoch": room._epoch, "seq": room._seq, "graph": graph}
        self._update_history_flags()

    @rx.event(background=True)
    @requires("edit")
    async def save(self, payload: dict[str, Any] | None = None):
        """Ctrl+S and the Save button; the canvas also calls it (`auto`) a second after the last patch.

        Validating and writing a 1,000-node graph takes ~80 ms: it runs in a thread, outside the state
        lock, so edits made meanwhile are neither blocked nor lost (they stay unsaved).
        """
        auto = bool((payload or {}).get("auto"))
        async with self:
            room, _ = await self._room()
            # Every tab in the room asks to autosave after a burst: the first one claims the edits.
            if self._doc is None or (auto and not room.unsaved) or not still_checked(self._doc.id):
                return
            graph_id, graph = self._doc.id, self._doc.to_json()
            edits, authors = room._claim_save()
            claim = next_claim()
        try:
            saved = await _store_in_claim_order(graph_id, graph, "autosave" if auto else "saved", authors, claim)
        except asyncio.CancelledError:
            async with self:
                room, _ = await self._room()
                room._save_failed(edits, authors, "unsaved")  # the next autosave writes them
            raise
        except Exception as error:  # noqa: BLE001 - the edits stay in memory; the page says so
            async with self:
                room, _ = await self._room()
                room._save_failed(edits, authors)
                self.issue_list = [{"node_id": "", "severity": "error", "text": f"Saving failed: {error}"}]
            return
        if saved is None:  # a save claimed later (these edits and more) landed first: nothing older goes over it
            return None if auto else rx.toast.success("Saved")
        version, issues = saved
        async with self:
            room, _ = await self._room()
            room._saved(edits, version)
            self._set_issues(issues)
        if not auto:
            return rx.toast.success(f"Saved version {version}")

    async def _save_pending_edits(self, graph_id: str) -> bool:
        """Before a run of the stored graph `graph_id` (chat, test run): save the room's unsaved edits of
        it now. Call under the state lock (`get_state` from another state's handler). False: saving failed."""
        if self._graph_id != graph_id:
            return True  # this tab has no editor on that graph (the chat page): its room saves its own edits
        room, _ = await self._room()
        if self._doc is None or self._doc.id != graph_id or not room.unsaved:
            return True
        await self._save(room, "autosave")
        return room.save_status == "saved"

    async def _save(self, room: GraphRoom, note: str) -> None:
        """Save now, inside the handler (a reload with edits still pending, a run about to start); the writing
        in a thread (~80 ms at 1,000 nodes, which held every run and tab)."""
        edits, authors = room._claim_save()
        try:
            saved = await _store_in_claim_order(self._doc.id, self._doc.to_json(), note, authors, next_claim())
        except asyncio.CancelledError:  # a page load given up (a newer one, a closed tab): the next autosave
            room._save_failed(edits, authors, "unsaved")  # writes them (this write may still land: a version more)
            raise
        except Exception as error:  # noqa: BLE001 - the edits stay in memory; the page says so
            room._save_failed(edits, authors)
            self.issue_list = [{"node_id": "", "severity": "error", "text": f"Saving failed: {error}"}]
            return
        if saved is not None:  # (None: a save claimed later landed first, with these edits and more)
            version, issues = saved
            room._saved(edits, version)
            self._set_issues(issues)

    @rx.event
    @requires("edit")
    async def rename_graph(self, name: str):
        """The header's name field, committed when it is left: the store checks and records the new name."""
        await self._room()
        if self._doc is None:
            return
        try:
            await off_loop(graph_store().rename, self._doc.id, name)
        except ValueError as error:
            self.name_field_rev += 1  # the field remounts with the name the graph still has
            return rx.toast.error(f"Not renamed: {error}")
        self._doc.name = self.graph_name = name.strip()

    # Canvas events -----------------------------------------------------------------------------

    @rx.event
    @requires("edit")
    async def on_connect(self, payload: dict[str, Any]):
        return await self._edit(lambda doc: doc.connect(
            default_registry(), str(payload.get("source")), str(payload.get("sourceHandle")),
            str(payload.get("target")), str(payload.get("targetHandle"))))

    @rx.event
    @requires("edit")
    async def on_move(self, payload: dict[str, Any]):
        # A drag changes positions only: the inspector shows none, so it is left alone (a small delta).
        return await self._edit(lambda doc: doc.move(payload.get("moves") or [], default_registry()), inspect=False)

    @rx.event
    @requires("edit")
    async def on_delete(self, payload: dict[str, Any]):
        return await self._delete(payload.get("nodes") or [], payload.get("edges") or [])

    @rx.event
    @requires("view")
    async def on_select(self, payload: dict[str, Any]):
        room, _ = await self._room()
        ids = [str(i) for i in payload.get("nodes") or []]
        await self._select(ids, edges=[str(i) for i in payload.get("edges") or []])
        room._select(self.me, ids)  # others see it outlined in my colour

    @rx.event
    @requires("view")
    async def on_cursor(self, payload: dict[str, Any]):
        """My pointer on the canvas in flow coordinates (the canvas sends at most one per 50 ms), None: gone."""
        room, _ = await self._room()
        try:
            at = [round(float(payload["x"]), 1), round(float(payload["y"]), 1)]
        except (KeyError, TypeError, ValueError):
            at = None
        room._point(self.me, at)

    @rx.event
    @requires("view")
    async def on_remote(self, payload: dict[str, Any]):
        """Someone else's patch changed or deleted the node this tab inspects: show it as it is now, or close."""
        await self._room()
        if not self.selected_id or self._doc is None:
            return
        if self.selected_id in self._doc.nodes:
            self._refresh_inspector(remount_changed=True)  # a field typed in meanwhile keeps its text
            return
        name = self.selected_name
        await self._select([])
        who = str(payload.get("by") or "Someone")
        return rx.toast.info(f"{who} deleted '{name}'", duration=6000)

    @rx.event
    @requires("view")
    async def leave_room(self):
        """The page is closed or left: I am no longer shown as here, and my edits its autosave had no time to
        take become a version now. (Reflex closes the websocket on beforeunload, so this may never arrive: the
        server saves them anyway, `autosave_later`.)"""
        room, _ = await self._room()
        room._leave(self.me)
        if self._doc is not None and room.unsaved and allows(current().role, "edit"):
            await self._save(room, "autosave")

    @rx.event
    @requires("edit")
    async def on_parameter(self, payload: dict[str, Any]):
        node_id, parameter = str(payload.get("id")), str(payload.get("parameter"))
        self._form_rev += 1  # the inspector shows the canvas's new value

        def change(doc: GraphDocument) -> Change:
            node = doc.nodes.get(node_id)
            definition = default_registry().definition(node.type) if node is not None else None
            spec = definition.parameter(parameter) if definition is not None else None
            value = forget_sealed_value(spec, payload.get("value")) if spec is not None else payload.get("value")
            return doc.set_parameter(default_registry(), node_id, parameter, value)
        return await self._edit(change)

    @rx.event
    @requires("edit")
    async def on_add(self, payload: dict[str, Any]):
        """A palette entry dropped on the canvas or clicked: the canvas chose the spot (only it knows the view)."""
        node_type = str(payload.get("type"))
        return await self._edit(lambda doc: doc.add_node(default_registry(), node_type,
                                                   payload.get("position") or {"x": 0, "y": 0},
                                                   defaults=self._install_defaults(node_type)))

    @rx.event
    @requires("edit")
    async def on_paste(self, payload: dict[str, Any]):
        return await self._edit(lambda doc: doc.paste(default_registry(), str(payload.get("text") or ""),
                                                payload.get("position")))

    @rx.event
    @requires("view")
    async def on_viewport(self, payload: dict[str, Any]):
        """Where the canvas looks, saved with the graph: an editor's pan, not a viewer's (who may not change it)."""
        await self._room()
        if self._doc is not None and allows(current().role, "edit"):
            try:
                self._doc.set_viewport({k: float(payload[k]) for k in ("x", "y", "zoom")})
            except (KeyError, TypeError, ValueError):
                pass  # a malformed viewport is not worth an error: the next pan sends another

    @rx.event
    @requires("edit")
    async def undo(self, _payload: dict[str, Any] | None = None):
        return await self._replay(self._undo, self._redo)

    @rx.event
    @requires("edit")
    async def redo(self, _payload: dict[str, Any] | None = None):
        return await self._replay(self._redo, self._undo)

    @rx.event
    @requires("edit")
    async def delete_selection(self):
        """The toolbar's trash button: the canvas's selection, nodes and wires, as the Delete key does."""
        return await self._delete(*self._selection)

    # Inspector events --------------------------------------------------------------------------

    @rx.event
    @requires("edit")
    async def set_field(self, parameter_id: str, raw: Any, key: str = ""):
        """A control's value (a text field's when it is left); `key`: the text field's control key."""
        return await self._set_field(parameter_id, raw, key)

    @rx.event
    @requires("edit")
    async def type_field(self, parameter_id: str, raw: str, key: str):
        """A text field's text while it is typed (the page sends it a moment after the last keystroke), so a
        reload or a closed tab loses nothing. Text that is not a value yet (JSON typed half-way) waits until the
        field is left, where it is kept as typed with its error: the error does not flash while typing."""
        return await self._set_field(parameter_id, raw, key, typing=True)

    async def _set_field(self, parameter_id: str, raw: Any, key: str, typing: bool = False):
        await self._room()
        node, definition = self._selected_node()
        if node is None or (key and key != self.field_keys.get(parameter_id)):
            return  # typed into a control replaced since (another node shown, or someone else's value)
        parameter = definition.parameter(parameter_id)
        keep_invalid = False
        try:
            value = forget_sealed_value(parameter, fields.parse_field(parameter, raw))
        except fields.FieldError as error:
            if typing:
                return
            self._typed_errors[parameter_id] = str(error)
            value = fields.kept_as_typed(parameter, raw)
            if value is None:
                self.field_errors = {**self.field_errors, parameter_id: str(error)}
                return
            keep_invalid = True  # kept as typed and shown in red; Validate and a run refuse it too
        else:
            self._typed_errors.pop(parameter_id, None)
        if node.data.get(parameter_id) == value or (parameter.secret and value in (None, "")):
            self._refresh_inspector()  # an empty secret field keeps the secret (its text is never shown)
            return
        try:
            value = seal_parameter(parameter, value, node.data)
        except NodeError as error:  # a secret for a URL not set yet
            self.field_errors = {**self.field_errors, parameter_id: str(error)}
            return
        return await self._edit(lambda doc: doc.set_parameter(default_registry(), node.id, parameter_id, value,
                                                              keep_invalid=keep_invalid), group=key)

    @rx.event
    @requires("edit")
    def set_number_draft(self, parameter_id: str, text: str):
        """A number field's text while it is typed: its slider follows (nothing is stored until it is left)."""
        self.number_drafts = {**self.number_drafts, parameter_id: str(text)}

    @rx.event
    @requires("edit")
    async def set_row_field(self, parameter_id: str, index: int, field_id: str, raw: str, key: str = ""):
        """A row cell's value (a text cell's when it is left); `key`: the parameter's control key."""
        return await self._edit_rows(parameter_id, _cell_edit(index, field_id, raw), key, f"{key}:{index}:{field_id}")

    @rx.event
    @requires("edit")
    async def type_row_field(self, parameter_id: str, index: int, field_id: str, raw: str, key: str):
        """A row cell's text while it is typed (see type_field)."""
        return await self._edit_rows(parameter_id, _cell_edit(index, field_id, raw), key, f"{key}:{index}:{field_id}",
                                     typing=True)

    @rx.event
    @requires("edit")
    async def add_row(self, parameter_id: str):
        return await self._edit_rows(parameter_id, fields.add_row, remount=True)

    @rx.event
    @requires("edit")
    async def remove_row(self, parameter_id: str, index: int):
        # The rows after it move up: their cells remount with their new texts.
        return await self._edit_rows(parameter_id, lambda p, current: fields.remove_row(p, current, index),
                                     remount=True)

    @rx.event
    @requires("edit")
    async def toggle_expression(self, parameter_id: str):
        await self._room()
        if not self.selected_id:
            return
        modes = set(self._expression_modes.get(self.selected_id, []))
        modes ^= {parameter_id}
        self._expression_modes[self.selected_id] = sorted(modes)
        self._form_rev += 1
        self._refresh_inspector()

    @rx.event
    @requires("edit")
    async def rename_selected(self, name: str):
        await self._room()
        if not self.selected_id:
            return
        try:
            change = self._doc.rename(self.selected_id, name)
        except EditError as error:
            self.name_error = str(error)
            return
        self.name_error = ""
        return await self._after_change(change) if change.ops else None

    @rx.event
    @requires("edit")
    async def set_setting(self, key: str, raw: str):
        await self._room()
        node, _ = self._selected_node()
        if node is None:
            return
        try:
            settings = fields.parse_setting(node.settings, key, str(raw))
        except fields.FieldError as error:
            self.field_errors = {**self.field_errors, f"setting:{key}": str(error)}
            return
        return await self._edit(lambda doc: doc.set_settings(default_registry(), node.id, settings))

    # Validation, export ------------------------------------------------------------------------

    @rx.event
    @requires("view")
    async def validate(self):
        await self._room()
        if self._doc is None:
            return
        # In a thread: checking a 1,000-node graph takes tens of ms, which every run and tab would wait for.
        _, issues = await off_loop(validate_graph, self._doc.to_json(), default_registry())
        self._set_issues(issues)
        self.issues_open = True
        if self.issue_list:
            return
        if not self.warning_list:
            return rx.toast.success("The graph is valid")
        # Not a green "valid" over a warning that the first run will fail on: say so, the first one in full.
        count, first = len(self.warning_list), self.warning_list[0]["text"]
        more = f" (and {count - 1} more, listed under Validate)" if count > 1 else ""
        return rx.toast.warning(f"Valid, with {count} warning{'s' if count > 1 else ''}: {first}{more}",
                                duration=10000)

    @rx.event
    @requires("view")
    def set_issues_open(self, open_: bool):
        self.issues_open = open_

    @rx.event
    @requires("view")
    async def select_node(self, node_id: str):
        """Select a node from outside the canvas (the issues list)."""
        await self._room()
        if self._doc is not None and node_id in self._doc.nodes:
            await self._select([node_id])
            self.focus = {"n": self.focus["n"] + 1, "ids": [node_id]}

    @rx.event
    @requires("view")
    async def export_graph(self):
        await self._room()
        if self._doc is None:
            return
        slug = re.sub(r"[^a-z0-9]+", "-", self._doc.name.lower()).strip("-") or "graph"
        text, missing = await off_loop(_export_text, self._doc.to_json())  # ~30 ms at 1,000 nodes
        download = rx.download(data=text, filename=f"{slug}.json")
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
                model = default_model(self._configured, parameter.default, self._suggested)
                if model is not None:
                    chosen[parameter.id] = model
        return chosen

    async def _edit(self, operation, inspect: bool = True, group: str = ""):
        """Run one document operation on the room's graph; answer with a patch (to everyone in the room),
        or a toast saying why nothing changed. `group`: the field typed in (see _remember)."""
        await self._room()
        if self._doc is None:
            return rx.toast.error("No graph is open")
        if self._frozen:
            return rx.toast.error("A stored version is shown: go Back to current to edit")
        try:
            change = operation(self._doc)
        except EditError as error:
            return rx.toast.error(str(error))
        if self.worker != (pid := str(os.getpid())):
            self.worker = pid
        return await self._after_change(change, inspect, group)

    async def _delete(self, node_ids: list[str], edge_ids: list[str] | None = None):
        """Delete; when expressions of the nodes left read a deleted node, a toast names them at once (they would
        fail only at the next Validate or run, and undo brings the node back)."""
        gone: set[str] = set()

        def delete(doc: GraphDocument) -> Change:
            change = doc.delete(node_ids, edge_ids or [])
            gone.update(op["node"]["name"] for op in change.inverse if op["op"] == "add_node")
            return change
        answer = await self._edit(delete)
        if not gone:
            return answer
        # In a thread, like Validate: it reads every expression of the graph.
        readers = await off_loop(references_to, list(self._doc.nodes.values()), default_registry(), gone)
        if readers:
            return rx.toast.warning(_dangling_text(readers), duration=10000)

    async def _replay(self, source: list[Change], target: list[Change]):
        """Undo (source: my undo stack) or redo: take back my own change, on the graph as others left it."""
        await self._room()
        if self._doc is None or self._frozen or not source:
            return
        change = self._doc.revert(source.pop())
        target.append(change)
        self._form_rev += 1
        if change.ops:
            await self._publish(change)
        self._update_history_flags()

    async def _after_change(self, change: Change, inspect: bool = True, group: str = ""):
        if not change.ops:
            return
        if any(op["op"] != "select" for op in change.ops):
            self._remember(change, group)
        await self._publish(change, inspect)
        self._update_history_flags()

    def _remember(self, change: Change, group: str) -> None:
        """My change onto my undo stack. A text field is saved while it is typed in: saves of the same field
        (`group`) a moment apart join into one undo step, unless someone else changed the node in between."""
        now = time.time()
        burst = bool(group) and group == self._typing and now - self._typing_at < TYPING_BURST_S and self._undo
        both = joined(self._undo[-1], change) if burst else None
        self._undo = [*self._undo[:-1], both] if both else [*self._undo[-(UNDO_LIMIT - 1):], change]
        self._redo = []
        self._typing, self._typing_at = group, now

    async def _publish(self, change: Change, inspect: bool = True) -> None:
        """The room sends the ops to every tab (this one too); this tab's inspector follows them."""
        room = self._get_state_from_cache(GraphRoom)
        user = current().user
        room._publish(change.ops, self.me, getattr(user, "id", "") or "", getattr(user, "name", "") or "")
        autosave_later(self._doc.id)
        ops = change.ops
        selection = next((op["ids"] for op in ops if op["op"] == "select"), None)
        gone = {op["id"] for op in ops if op["op"] in ("remove_node", "remove_edge")}
        if gone and selection is None:  # the canvas leaves the rest selected and does not say so (it is my patch)
            self._set_selection(*[[i for i in ids if i not in gone] for ids in self._selection])
        if selection is not None:
            await self._select(selection)
        elif inspect and self.selected_id and (self.selected_id not in self._doc.nodes or _touches(ops, self.selected_id)):
            await self._select([self.selected_id] if self.selected_id in self._doc.nodes else [], keep_form=True)

    def _update_history_flags(self) -> None:
        can_undo, can_redo = bool(self._undo), bool(self._redo)
        if (can_undo, can_redo) != (self.can_undo, self.can_redo):  # assigning marks a var dirty even if equal
            self.can_undo, self.can_redo = can_undo, can_redo

    async def _edit_rows(self, parameter_id: str, update, key: str = "", group: str = "", typing: bool = False,
                         remount: bool = False):
        """`key`: the control key a cell was typed under (see _set_field); `remount`: the rows' cells show
        their new texts (rows added or removed)."""
        await self._room()
        node, definition = self._selected_node()
        if node is None or (key and key != self.field_keys.get(parameter_id)):
            return
        parameter = definition.parameter(parameter_id)
        try:
            rows = update(parameter, node.data.get(parameter_id))
            if rows == node.data.get(parameter_id):  # e.g. a cell left after its text was saved while typed
                self._refresh_inspector()  # (an error said before goes)
                return
            value = seal_parameter(parameter, rows, node.data)
        except (fields.FieldError, NodeError) as error:  # NodeError: a secret for a URL not set yet
            if not typing:  # said when the cell is left
                self.field_errors = {**self.field_errors, parameter_id: str(error)}
            return
        if remount:
            self._field_revs = {**self._field_revs, parameter_id: self._field_revs.get(parameter_id, 0) + 1}
        return await self._edit(lambda doc: doc.set_parameter(default_registry(), node.id, parameter_id, value),
                                group=group)

    def _selected_node(self):
        if self._doc is None or self.selected_id not in self._doc.nodes:
            return None, None
        node = self._doc.nodes[self.selected_id]
        return node, default_registry().definition(node.type)

    async def _select(self, ids: list[str], keep_form: bool = False, edges: list[str] | None = None) -> None:
        """The inspector follows a single selected node; none or several show the empty inspector. The whole
        selection (nodes and wires) is kept for the toolbar's delete; `keep_form`: the same selection, refreshed."""
        if not keep_form:
            self._set_selection(list(ids), list(edges or []))
        node_id = ids[0] if len(ids) == 1 and self._doc is not None and ids[0] in self._doc.nodes else ""
        if node_id != self.selected_id or not keep_form:
            self._form_rev += 1
            self._field_revs = {}
            self._typed_errors = {}
            self.name_error = ""
            if self.number_drafts:
                self.number_drafts = {}
            self.selected_id = node_id
            await self._load_run_data()
        self.selected_id = node_id
        self._refresh_inspector()

    def _set_selection(self, nodes: list[str], edges: list[str]) -> None:
        self._selection = (nodes, edges)
        if self.has_selection != bool(nodes or edges):  # assigning marks a var dirty even if equal
            self.has_selection = bool(nodes or edges)

    async def _load_run_data(self) -> None:
        """What the selected node's upstream nodes gave in the graph's latest runs, and what the node itself gave
        or why it failed (n8n's input and output panels). Read in a thread: up to five whole runs, which held
        every run and tab on each click."""
        graph = self._doc.to_graph() if self._doc is not None and self.selected_id else None
        if graph is None:
            if self.upstream_fields:
                self.upstream_fields = []
            if self.node_result:
                self.node_result = {}
            return
        names = {n.name: n.id for n in graph.nodes}
        wanted = {names[name]: name for name in fields.upstream_names(graph, self.selected_id) if name in names}
        try:
            outputs, result = await off_loop(_last_runs, self._doc.id, self.selected_id, set(wanted))
        except Exception:  # noqa: BLE001 - run history is a help here; the inspector must open without it
            outputs, result = {}, {}
        self.upstream_fields = [row for node_id, name in wanted.items() if node_id in outputs
                                for row in fields.output_fields(name, outputs[node_id])]
        self.node_result = result

    async def _after_run(self, graph_id: str) -> None:
        """A run of `graph_id` ended (a test run, a chat answer): the inspector shows what it gave. (Run data is
        otherwise read when a node is selected: the input list still showed the run before.)

        Called from other states' handlers, whose access check covered `graph_id`, not the graph this state
        keeps: that can be one its person no longer may open (removed from its workspace, the graph moved)."""
        if not self.selected_id or graph_id != self._graph_id:  # (a chat page without the editor: no room here)
            return
        await self._room()
        if self._doc is not None:
            await self._load_run_data()

    @rx.event
    @requires("view")
    async def show_whole_output(self):
        """"Show all" under the selected node's output: as much of it as the Runs panel shows."""
        run_id, node_id = self.node_result.get("run_id", ""), self.selected_id
        if run_id and node_id:
            self.node_result = await off_loop(_run_result, self._graph_id, run_id, node_id, JSON_CHARS) or {}

    def _refresh_inspector(self, remount_changed: bool = False) -> None:
        """The inspector's view of the selected node. `remount_changed` (someone else's edit): the controls whose
        texts it changed show the new ones, the others keep what is being typed in them."""
        node, definition = self._selected_node()
        self.form_key = f"{self.selected_id}-{self._form_rev}-"
        if node is None or definition is None:
            self.field_keys, self.secret_keys = {}, {}
            self.selected_type = self.selected_name = ""
            self.field_texts, self.field_flags, self.field_rows = {}, {}, {}
            self.field_errors, self.field_wired, self.field_expression = {}, {}, {}
            self.field_warnings, self.field_hidden = {}, {}
            self.settings_texts, self.upstream_names = {}, []
            self.trigger_info = {}
            return
        modes = set(self._expression_modes.get(node.id, []))
        view = fields.field_view(definition, node, self._doc.to_graph(), modes)
        if remount_changed:
            changed = {pid for pid in {*view.texts, *view.rows} if view.texts.get(pid) != self.field_texts.get(pid)
                       or view.rows.get(pid) != self.field_rows.get(pid)}
            self._field_revs = {**self._field_revs, **{pid: self._field_revs.get(pid, 0) + 1 for pid in changed}}
        keys = {p.id: f"{self.form_key}{p.id}:{self._field_revs.get(p.id, 0)}" for p in definition.parameters}
        if keys != self.field_keys:  # assigning marks a var dirty even if equal
            self.field_keys = keys
        secret_keys = {pid: f"{keys[pid]}:secret:{rev}" for pid, rev in self._secret_changes(definition, node).items()}
        if secret_keys != self.secret_keys:
            self.secret_keys = secret_keys
        self.selected_type, self.selected_name = node.type, node.name
        self.field_texts, self.field_flags, self.field_rows = view.texts, view.flags, view.rows
        self.field_errors = {**view.errors, **self._typed_errors}
        self.field_warnings = view.warnings
        self.field_wired, self.field_expression = view.wired, view.expression
        if view.hidden != self.field_hidden:  # most edits change none: do not send it again
            self.field_hidden = view.hidden
        self.settings_texts, self.upstream_names = view.settings, view.upstream
        self.trigger_info = trigger_view(definition, self._doc.id, node.id, node.data)

    def _secret_changes(self, definition, node) -> dict[str, int]:
        """Each secret parameter's count of changes of its stored value (sealed: a new secret is a new ciphertext).
        Kept here, not sent: the browser never gets anything made from a secret."""
        marks, revs = dict(self._secret_marks), dict(self._secret_revs)
        for parameter in definition.parameters:
            if parameter.secret:
                mark = _digest(node.data.get(parameter.id))
                if marks.get(parameter.id) != mark:
                    marks[parameter.id], revs[parameter.id] = mark, revs.get(parameter.id, 0) + 1
        if marks != self._secret_marks:
            self._secret_marks, self._secret_revs = marks, revs
        return {p.id: revs[p.id] for p in definition.parameters if p.secret}

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


def _dangling_text(readers: dict[str, list[str]]) -> str:
    """After a delete: "Deleted 'Fetch', which expressions in 'Summarize' and 'Reply' still read: ..."."""
    deleted = sorted({name for names in readers.values() for name in names})
    return (f"Deleted {_listed(deleted)}, which expressions in {_listed(list(readers))} still read: change them, "
            "or undo (Ctrl+Z)")


def _listed(names: list[str], most: int = 5) -> str:
    """'A', 'A' and 'B', 'A', 'B' and 'C'; past `most` names, 'and N more'."""
    quoted = [f"'{name}'" for name in names[:most]]
    if len(names) > most:
        quoted.append(f"{len(names) - most} more")
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} and {quoted[-1]}"


def _issue_text(issue: Issue) -> str:
    """What the Validate list shows: the node and parameter when the message does not name them."""
    if issue.parameter and issue.node_name:
        return f"'{issue.node_name}' {issue.parameter}: {issue.message}"
    return issue.message


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()


def _cell_edit(index: int, field_id: str, raw: Any):
    """The edit of one row cell, as `EditorState._edit_rows` applies it."""
    return lambda parameter, current: fields.set_row_field(parameter, current, index, field_id, raw)


def _last_runs(graph_id: str, node_id: str, wanted: set[str], runs: int = 5) -> tuple[dict[str, Any], dict[str, str]]:
    """From the graph's last `runs` runs: node id -> its main output (first port) in the latest where it completed,
    for the `wanted` nodes; and `node_id`'s record in the latest where it completed or failed, as the inspector
    shows it (runs.view.result_row; {} when none)."""
    from nodeflow_app.runs.service import run_service

    service, found, result = run_service(), {}, {}
    for summary in service.list_runs(graph_id, limit=runs):
        run = service.get_run(summary["id"]) or {"nodes": []}
        for node in run["nodes"]:
            outputs = node.get("outputs")
            if node["node_id"] in wanted and node["node_id"] not in found and node["status"] == "completed" and outputs:
                found[node["node_id"]] = next(iter(outputs.values()))
            if node["node_id"] == node_id and not result and node["status"] in ("completed", "failed"):
                result = result_row(node, run, OUTPUT_PREVIEW_CHARS)
        if len(found) == len(wanted) and result:
            break
    return found, result


def _run_result(graph_id: str, run_id: str, node_id: str, limit: int) -> dict[str, str] | None:
    """`node_id`'s record in run `run_id` of `graph_id` as the inspector shows it, its output cut at `limit`."""
    from nodeflow_app.runs.service import run_service

    run = run_service().get_run(run_id)
    if run is None or run["graph_id"] != graph_id:
        return None
    node = next((n for n in run["nodes"] if n["node_id"] == node_id), None)
    return result_row(node, run, limit) if node is not None else None


def install_choices() -> dict[str, list[list[str]]]:
    """The options of install-provided selects, read when a graph opens (a new declaration needs no restart)."""
    from nodeflow_app.llm.mcp_servers import McpConfigError, declared_servers

    try:
        servers = declared_servers()
    except McpConfigError:
        servers = {}  # the run names the mistake in the file; the editor just offers nothing
    return {"mcp_servers": [[name, f"{name}: {s.description}" if s.description else name]
                            for name, s in sorted(servers.items())]}


T = TypeVar("T")
_claims = itertools.count(1)  # saves, in the order the event loop claimed their edits
_newest_written: dict[str, int] = {}  # graph id -> the latest claim written by this process
_writing: dict[str, threading.Lock] = {}
_writing_guard = threading.Lock()
# The server's own autosave of a room (see autosave_later): later than the tabs' (a second after the last edit).
SERVER_AUTOSAVE_S = 3.0
_server_autosaves: dict[str, asyncio.Task] = {}  # graph id -> the save waiting for its room's edits to stop
SHUTDOWN_SAVE_S = 5.0  # how long a stopping server gives the rooms' waiting saves (`save_waiting_rooms`)


def next_claim() -> int:
    """The order of a save (or a History restore) claimed now, on the event loop."""
    return next(_claims)


def in_claim_order(graph_id: str, claim: int, write: Callable[[], T]) -> T | None:
    """`write()` (in a page thread), unless a save of the graph claimed later is written already (None). Saves
    write in threads: an older snapshot landing last would be the newest version while the room counts the
    newer edits saved, and a History restore would be overwritten by the autosave that was under way."""
    with _writing_guard:
        lock = _writing.setdefault(graph_id, threading.Lock())
    with lock:
        if _newest_written.get(graph_id, 0) > claim:
            return None
        done = write()
        _newest_written[graph_id] = claim
        return done


async def _store_in_claim_order(graph_id: str, graph: dict[str, Any], note: str, authors: dict[str, str],
                                claim: int):
    """A save's write, in a page thread and in claim order: (version, issues), or None when a later claim's
    write landed first."""
    write = functools.partial(_validate_and_store, graph_id, graph, note, current().user, authors)
    return await off_loop(in_claim_order, graph_id, claim, write)


def autosave_later(graph_id: str) -> None:
    """The graph's room saves its edits SERVER_AUTOSAVE_S after the last one, when no tab's autosave (a second after
    it) took them: the tab was closed, or lost its websocket, before its autosave went out. Each edit restarts the
    wait (on the event loop: an event handler calls this)."""
    waiting = _server_autosaves.pop(graph_id, None)
    if waiting is not None:
        waiting.cancel()
    _server_autosaves[graph_id] = asyncio.create_task(_autosave_after(graph_id, SERVER_AUTOSAVE_S))


async def _autosave_after(graph_id: str, delay: float) -> None:
    await asyncio.sleep(delay)
    if _server_autosaves.get(graph_id) is asyncio.current_task():
        del _server_autosaves[graph_id]  # an edit from now on waits anew, and does not cancel this save
    try:
        await save_room(graph_id)
    except Exception:  # noqa: BLE001 - a task of its own: nobody else would see it; the edits stay unsaved
        log.exception("saving the room of graph %s failed", graph_id)


async def save_waiting_rooms(timeout: float = SHUTDOWN_SAVE_S) -> None:
    """The server stops: each room whose autosave is still waiting (its last edit less than SERVER_AUTOSAVE_S ago)
    saves now, all at once, for at most `timeout` seconds; otherwise those edits would be lost with the process."""
    waiting = list(_server_autosaves)
    for graph_id in waiting:
        _server_autosaves.pop(graph_id).cancel()
    if waiting:
        log.info("saving the edits of %d room(s) before stopping", len(waiting))
        saves = [asyncio.create_task(_autosave_after(graph_id, 0)) for graph_id in waiting]
        _, late = await asyncio.wait(saves, timeout=timeout)
        for save in late:
            save.cancel()  # save_unsaved marks its edits unsaved again; the process ends with them
        if late:
            log.warning("%d room(s) were not saved within %.0f s of stopping", len(late), timeout)


async def save_room(graph_id: str) -> int | None:
    """The unsaved edits in the room of `graph_id` become a version, outside any tab's event (the tabs linked to
    the room see "Saved"). The version, or None when there was nothing to save or a later claim landed first.
    The app's state manager: at shutdown there is no event's."""
    from reflex_base.registry import RegistrationContext

    manager = RegistrationContext.get().app.state_manager
    return await modify_room(manager, GraphRoom, room_token(graph_id), lambda room: save_unsaved(room, graph_id))


async def save_unsaved(room: GraphRoom, graph_id: str) -> int | None:
    """The room's unsaved edits of `graph_id` as a version by their authors (`_authors`), in claim order with every
    other save. Written under the room's lock: this runs only when no tab's autosave took them."""
    if room._doc is None or room._doc.id != graph_id or not room.unsaved:
        return None
    graph, (edits, authors) = room._doc.to_json(), room._claim_save()
    write = functools.partial(_validate_and_store, graph_id, graph, "autosave", None, authors)
    try:
        saved = await off_loop(in_claim_order, graph_id, next_claim(), write)
    except asyncio.CancelledError:  # the server stops
        room._save_failed(edits, authors, "unsaved")
        raise
    except Exception:  # the next save (a tab's, or this one after the next edit) retries them
        room._save_failed(edits, authors)
        raise
    if saved is None:
        return None
    room._saved(edits, saved[0])
    return saved[0]


def _validate_and_store(graph_id: str, graph: dict[str, Any], note: str, author: Any = None,
                        authors: dict[str, str] | None = None):
    """A new version of the graph, and the issues it has (saved anyway: work is never refused). Its author is
    the saver (a signed-in User), or, when it holds others' edits (`authors`: user id -> name), the first of
    them, named with all of them. Secrets still in clear (a pasted fragment) are sealed on the way."""
    _, issues = validate_graph(graph, default_registry())
    author_id, name = getattr(author, "id", None), getattr(author, "name", "")
    if authors and author_id not in authors:
        author_id = next(iter(authors)) or None
    if authors:
        name = ", ".join(n for n in authors.values() if n) or name
    return graph_store().save(graph_id, seal_graph(graph, default_registry()), note=note,
                              author=author_id, author_name=name), issues


def _export_text(graph: dict[str, Any]) -> tuple[str, list[str]]:
    """(the graph as the file to download, secrets hidden; the secrets left to enter after importing it)."""
    registry = default_registry()
    return json.dumps(hide_graph(graph, registry), indent=2), secrets_to_enter(graph, registry)


def hide_ops(ops: list[dict[str, Any]], registry) -> list[dict[str, Any]]:
    """Patch ops as the browser may see them: node data without secrets, nodes in their wire form."""
    hidden = []
    for op in ops:
        node = op.get("node")
        if isinstance(node, dict) and isinstance(node.get("data"), dict):
            node = {**node, "data": hide_node(registry.definition(str(node.get("type"))), node["data"])}
            op = {**op, "node": on_wire(node)}
        hidden.append(op)
    return hidden


async def _connected(tokens) -> set[str] | None:
    """Which of these client tokens still have a websocket (None: unknown, keep everyone)."""
    try:
        from reflex_base.registry import RegistrationContext

        manager = RegistrationContext.get().app.event_namespace._token_manager
        return {t for t in tokens if await manager.is_token_connected(t)}
    except Exception:  # noqa: BLE001 - presence tidiness must never break opening a graph
        return None


def _touches(ops: list[dict[str, Any]], node_id: str) -> bool:
    """Whether a patch changes the node or a wire at it (its inspector view may differ)."""
    for op in ops:
        if op["op"] in ("add_node", "update_node") and op["node"]["id"] == node_id:
            return True
        if op["op"] in ("add_edge", "remove_edge", "remove_node"):
            return True
    return False


acts_on_graph(EditorState)
