"""The History panel: the open graph's versions, one opened read-only or two compared on the canvas, restore, names.

The canvas gets what to show through one prop (`canvas_view`, the canvas's `history`): empty for the live
graph, else `{rev, mode: "version" | "diff", graph, marks: {nodes, edges}}` (docs/editor.md, History).
The live graph stays in EditorState untouched meanwhile; its edits are refused until "Back to current".
Store calls (versions read, diffed, restored, named) run in a thread: on the event loop, every other tab and every
run waited meanwhile.
"""

from __future__ import annotations

import functools
import re
import secrets
import time
from typing import Any

import reflex as rx

from nodeflow_app.state.page_threads import off_loop
from nodeflow_app import routes
from nodeflow_app.state.access import current

from nodeflow_app.editor.diff import FieldChange, GraphDiff, diff_graphs, diff_view
from nodeflow_app.editor.timeline import AUTOSAVE, Entry, group_versions
from nodeflow_app.runs.view import ago
from nodeflow_app.secret_values import fingerprint_graph, hide_graph, holds_secret
from nodeflow_app.state.editor_state import EditorState, in_claim_order, next_claim
from nodeflow_app.store.graphs import GraphNotFound, graph_store
from nodes._registry import default_registry
from nodeflow_app.state.access import acts_on_graph, requires

NO_AUTHOR = "—"  # versions saved before accounts, or by the CLI
NOT_A_VERSION = "That is not a version number of this graph"


class HistoryState(rx.State):
    panel_open: bool = False
    entries: list[dict[str, str]] = []  # entry_row of each History entry, newest first
    picked: list[str] = []  # versions ticked to compare (at most two, as strings)
    viewing: int = 0  # the version shown read-only (0: none)
    diff_title: str = ""  # "v3 → v7" while two versions are compared
    diff_rows: list[dict[str, str]] = []  # {kind: node | change | note, name, status, text}
    canvas_view: dict[str, Any] = {}
    naming: str = ""  # the version being named ("" when the name dialog is closed)
    naming_text: str = ""
    restoring: int = 0  # the version a Restore button asks to confirm (0: no dialog)

    _rev: int = 0

    # The list ----------------------------------------------------------------------------------

    @rx.event
    @requires("view")
    async def load(self):
        """on_load of the editor (before EditorState's, which unfreezes the editor): the live graph on the
        canvas, the list fresh."""
        self.picked, self.naming = [], ""
        await self._back(unfreeze=False)
        if self.panel_open:  # the page's graph (checked): the editor still keeps the previous page's until its load
            await self._refresh(routes.page_graph_id(self.router))

    @rx.event
    @requires("view")
    async def toggle_panel(self):
        self.panel_open = not self.panel_open
        if self.panel_open:
            await self._refresh()

    @rx.event
    @requires("view")
    def close_panel(self):
        """The chat opens where History is docked: one of them at a time (components/editor_page.py)."""
        if self.panel_open:
            self.panel_open = False

    @rx.event
    @requires("view")
    async def refresh(self):
        """The panel mounts a marker keyed by the saved version: every save refreshes the list."""
        if self.panel_open:
            await self._refresh()

    async def _refresh(self, graph_id: str | None = None) -> None:
        graph_id = await self._graph_id() if graph_id is None else graph_id
        self.entries = await off_loop(_entries, graph_id) if graph_id else []

    # Open, compare, go back --------------------------------------------------------------------

    @rx.event
    @requires("view")
    async def open_version(self, version: int | str):
        number = version_number(version)
        return rx.toast.error(NOT_A_VERSION) if number is None else await self._open(number)

    async def _open(self, number: int):
        graph_id = await self._graph_id()
        graph = await off_loop(_version, graph_id, number) if graph_id else None
        if graph is None:
            return rx.toast.error(f"There is no version {number} of this graph")
        self._show("version", graph, {})
        self.viewing, self.diff_title, self.diff_rows = number, "", []
        await self._freeze_editor(True)

    @rx.event
    @requires("view")
    async def open_run_version(self, label: str):
        """The Runs panel's version label ("v3"): that version, read-only, with History open beside it."""
        found = re.fullmatch(r"v(\d+)", str(label).strip())
        number = version_number(found.group(1)) if found else None
        if number is None:
            return rx.toast.error(NOT_A_VERSION)
        if not self.panel_open:
            self.panel_open = True
            await self._refresh()
        return await self._open(number)

    @rx.event
    @requires("view")
    def toggle_pick(self, version: str):
        if version_number(version) is None:
            return rx.toast.error(NOT_A_VERSION)
        version = str(version)
        picked = [v for v in self.picked if v != version]
        if len(picked) == len(self.picked):
            picked = (picked + [version])[-2:]
        self.picked = picked

    @rx.event
    @requires("view")
    async def compare(self):
        """The two ticked versions on the canvas: added, removed and changed nodes and edges marked."""
        if len(self.picked) != 2:
            return rx.toast.error("Tick two versions to compare")
        graph_id = await self._graph_id()
        older, newer = sorted(int(v) for v in self.picked)
        compared = await off_loop(_comparison, graph_id, older, newer)
        if compared is None:
            return rx.toast.error("One of these versions is gone; refresh the list")
        graph, marks, rows = compared
        self._show("diff", graph, marks)
        self.viewing, self.diff_title, self.diff_rows = 0, f"v{older} → v{newer}", rows
        await self._freeze_editor(True)

    @rx.event
    @requires("view")
    async def back_to_current(self):
        await self._back()

    async def _back(self, unfreeze: bool = True) -> None:
        self._rev += 1
        self.canvas_view = {"rev": self._rev, "mode": "", "graph": None, "marks": {}}
        self.viewing, self.diff_title, self.diff_rows = 0, "", []
        if unfreeze:
            await self._freeze_editor(False)

    # Restore and names -------------------------------------------------------------------------

    @rx.event
    @requires("edit")
    def ask_restore(self, version: int | str):
        """The Restore buttons ask first: the live graph is replaced for everyone, and undo cannot bring it back."""
        self.restoring = version_number(version) or 0

    @rx.event
    @requires("view")
    def set_restore_open(self, open_: bool):
        if not open_:
            self.restoring = 0

    @rx.event
    @requires("edit")
    async def restore(self, version: int | str):
        """Version N saved again as the newest version ("restored from vN"); the editor reopens on it."""
        number = version_number(version)
        self.restoring = 0
        if number is None:
            return rx.toast.error(NOT_A_VERSION)
        editor = await self.get_state(EditorState)
        await editor._save_pending()
        if editor._doc is None:
            return  # edits not autosaved yet become a version of their own first
        try:
            user, graph_id = current().user, editor._doc.id
            restore = functools.partial(graph_store().restore, graph_id, number, author=user.id if user else None,
                                        author_name=user.name if user else "")
            # In claim order: an autosave still under way must not land over the restored version.
            restored = await off_loop(in_claim_order, graph_id, next_claim(), restore)
        except GraphNotFound as error:
            return rx.toast.error(str(error))
        if restored is None:  # someone's save claimed after this restore landed first
            return rx.toast.error("Not restored: the graph was saved meanwhile; restore again")
        await self._back()
        await editor._reopen()
        await self._refresh()
        return rx.toast.success(f"Version {number} restored as version {restored}")

    @rx.event
    @requires("view")
    def start_naming(self, version: str, label: str):
        if version_number(version) is None:
            return rx.toast.error(NOT_A_VERSION)
        self.naming, self.naming_text = str(version), str(label)

    @rx.event
    @requires("view")
    def set_naming_open(self, open_: bool):
        if not open_:
            self.naming = ""

    @rx.event
    @requires("edit")
    async def save_name(self, form: dict[str, Any]):
        graph_id = await self._graph_id()
        try:
            await off_loop(graph_store().label_version, graph_id, int(self.naming), str(form.get("label", "")))
        except (GraphNotFound, ValueError) as error:
            return rx.toast.error(f"Not named: {error}")
        self.naming = ""
        await self._refresh()

    # Internals ---------------------------------------------------------------------------------

    async def _graph_id(self) -> str:
        editor = await self.get_state(EditorState)
        return editor._graph_id

    async def _freeze_editor(self, frozen: bool) -> None:
        editor = await self.get_state(EditorState)
        await editor._set_frozen(frozen)

    def _show(self, mode: str, graph: dict[str, Any], marks: dict[str, Any]) -> None:
        """Show `graph` (already `for_canvas`) on the canvas instead of the live one."""
        self._rev += 1
        self.canvas_view = {"rev": self._rev, "mode": mode, "graph": graph, "marks": marks}


def version_number(value: Any) -> int | None:
    """A version number as the browser sends it (a number, or its digits as text); None for anything else: text,
    a dict, a number no database column holds (a forged event's; int() of them was a crash)."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        return None
    text = str(value).strip()
    return int(text) if text.isdecimal() and len(text) <= 9 else None


def _entries(graph_id: str) -> list[dict[str, str]]:
    """The History rows of a graph ([] when it is gone), read in a thread."""
    store = graph_store()
    try:
        versions = store.versions(graph_id)
    except GraphNotFound:
        return []
    counts, now = store.run_counts(graph_id), time.time()
    return [entry_row(entry, counts, now) for entry in group_versions(versions)]


def _version(graph_id: str, number: int) -> dict[str, Any] | None:
    """Version `number` of a graph for the canvas (None: no such version), read in a thread."""
    stored = graph_store().get_version(graph_id, number)
    return for_canvas(stored.graph) if stored is not None else None


def _comparison(graph_id: str, older: int,
                newer: int) -> tuple[dict[str, Any], dict[str, Any], list[dict[str, str]]] | None:
    """Two versions compared, in a thread (two stored graphs read and diffed): the marked graph for the canvas,
    its marks and the panel's rows; None when one of them is gone."""
    old, new = (graph_store().get_version(graph_id, v) for v in (older, newer))
    if old is None or new is None:
        return None
    key = secrets.token_bytes(16)  # this comparison's: its digests of secrets match nothing elsewhere
    older_graph, newer_graph = (fingerprint_graph(v.graph, default_registry(), key) for v in (old, new))
    diff = diff_graphs(older_graph, newer_graph, parameter_defaults())
    view = diff_view(old.graph, new.graph, diff)
    return for_canvas(view["graph"]), view["marks"], diff_rows(diff)


def parameter_defaults() -> dict[str, dict[str, Any]]:
    """Node type -> its parameters' defaults (a parameter left out of a stored graph has its default)."""
    return {d.id: d.defaults() for d in default_registry().definitions()}


def for_canvas(graph: dict[str, Any]) -> dict[str, Any]:
    """The parts of a stored graph the canvas draws, secrets hidden (as EditorState sends the live graph)."""
    return hide_graph({key: graph.get(key) for key in ("id", "name", "nodes", "edges")}, default_registry())


def entry_row(entry: Entry, counts: dict[int, int], now: float) -> dict[str, str]:
    """One History row as display strings."""
    newest, burst = entry.newest, len(entry.versions) > 1
    runs = entry.runs(counts)
    return {
        "version": str(newest.version),
        "title": entry.title,
        "label": newest.label,
        "note": f"{len(entry.versions)} autosaves" if burst else newest.note,
        "author": newest.author_name or NO_AUTHOR,
        "when": ago(newest.created_at, now) if not burst else
        f"{ago(entry.oldest.created_at, now)} – {ago(newest.created_at, now)}",
        "at": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(newest.created_at)),
        "runs": "" if runs == 0 else ("1 run" if runs == 1 else f"{runs} runs"),
        "autosave": "1" if newest.note == AUTOSAVE else "",
    }


def change_line(change: FieldChange) -> str:
    """`field: old -> new`; a secret parameter (sealed in the stored graph) never shows its value."""
    if holds_secret(change.old) or holds_secret(change.new):
        return f"{change.field}: secret changed"
    return change.line()


def diff_rows(diff: GraphDiff) -> list[dict[str, str]]:
    """The panel's list of a diff: each node with its status, then its changed fields (old -> new)."""
    rows: list[dict[str, str]] = []
    for node in diff.nodes:
        rows.append({"kind": "node", "name": node.name, "status": node.status, "text": node.status})
        rows += [{"kind": "change", "name": node.name, "status": node.status, "text": change_line(change)}
                 for change in node.changes]
    edges = {status: sum(1 for s in diff.edges.values() if s == status) for status in ("added", "removed", "changed")}
    if any(edges.values()):
        text = ", ".join(f"{n} {status}" for status, n in edges.items() if n)
        rows.append({"kind": "note", "name": "", "status": "", "text": f"Edges: {text}"})
    if diff.moved:
        rows.append({"kind": "note", "name": "", "status": "",
                     "text": "Only moved (not counted as changes): " + ", ".join(diff.moved)})
    if diff.empty:
        rows.append({"kind": "note", "name": "", "status": "", "text": "No differences"})
    return rows


acts_on_graph(HistoryState, EditorState)  # the editor's graph
