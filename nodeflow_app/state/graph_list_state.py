"""The graph list page's state: the rows shown, the search, the New graph picker and the rename / delete / import
dialogs.

Every store call goes through `_attempt`, in a thread (the event loop serves every tab and runs every workflow
run), so a database error or a graph deleted meanwhile becomes a toast or an inline message, never a crashed
handler. Rows are shaped for the view (times as text).
"""

from __future__ import annotations

import dataclasses
import logging
import time
from datetime import datetime, timezone
from typing import Any, AsyncIterator, Callable

import reflex as rx

from nodeflow_app.state.page_threads import off_loop
from nodeflow_app import routes
from nodeflow_app.runs.service import run_service
from nodeflow_app.runtime.graph import GraphIssue
from nodeflow_app.state.access import current
from nodeflow_app.state.live_rooms import GraphListRoom, list_room_token, show_live
from nodeflow_app.state.legacy_import_state import LegacyImportState, legacy_migration
from nodeflow_app.store.graphs import NAME_MAX, GraphNotFound, GraphSummary, clean_name, graph_store
from nodeflow_app.store.triggers import trigger_store
from nodeflow_app.triggers.activation import activation
from nodeflow_app.store.templates import is_workspace_template, template_store
from nodeflow_app.templates import BLANK, Template, TemplateError, get_template, load_templates
from nodes._registry import default_registry
from nodeflow_app.state.access import requires

log = logging.getLogger(__name__)

UNTITLED = "Untitled graph"
UPLOAD_ID = "graph-import"
MAX_IMPORT_BYTES = 5 * 1024 * 1024


@dataclasses.dataclass
class GraphListRow:
    id: str
    name: str
    node_count: int
    edited: str  # "3 min ago"
    edited_title: str  # the exact time, for the tooltip
    version: int


@dataclasses.dataclass
class TemplateCard:
    id: str
    name: str
    description: str
    node_count: int


@dataclasses.dataclass
class ImportIssue:
    where: str  # "node start", "edge e1" or "graph"
    message: str


class _Failed(Exception):
    """A store call failed; `message` says what ("Could not ...: <reason>"), `event` is the toast saying it."""

    def __init__(self, message: str):
        self.message, self.event = message, rx.toast.error(message)


def ago(seconds: float) -> str:
    """How long ago, the way people say it: "just now", "5 min ago", "3 h ago", "yesterday", "12 days ago"."""
    minutes, hours, days = seconds / 60, seconds / 3600, seconds / 86400
    if minutes < 1:
        return "just now"
    if hours < 1:
        return f"{int(minutes)} min ago"
    if days < 1:
        return f"{int(hours)} h ago"
    if days < 2:
        return "yesterday"
    return f"{int(days)} days ago"


def edited_text(updated_at: float, now: float) -> str:
    """"3 min ago" within a month, else the date ("12 Mar 2026")."""
    if now - updated_at < 30 * 86400:
        return ago(max(0.0, now - updated_at))
    day = datetime.fromtimestamp(updated_at)
    return f"{day.day} {day:%b %Y}"


def row_view(summary: GraphSummary, now: float) -> GraphListRow:
    exact = datetime.fromtimestamp(summary.updated_at, tz=timezone.utc).isoformat(timespec="seconds")
    return GraphListRow(id=summary.id, name=summary.name, node_count=summary.node_count,
                        edited=edited_text(summary.updated_at, now), edited_title=exact, version=summary.version)


def next_untitled(names: list[str], base: str = UNTITLED) -> str:
    """`base` ("Untitled graph"), else the first free "`base` N" (N >= 2)."""
    taken = set(names)
    if base not in taken:
        return base
    n = 2
    while f"{base} {n}" in taken:
        n += 1
    return f"{base} {n}"


def free_name_in(workspace: str | None) -> Callable[[str], str]:
    """An imported graph's name: the file's, else the first free "<name> N" of the workspace, so an import beside a
    graph of the same name (say, the export it came from) can be told apart in the list. A name too long to take a
    number stays as it is."""
    def free(name: str) -> str:
        numbered = next_untitled([s.name for s in graph_store().list(name, workspace)], name)
        return numbered if len(numbered) <= NAME_MAX else name
    return free


def _as_author() -> dict[str, Any]:
    """The caller as the author of a graph's version 1 (History showed "—" for graphs made in the app)."""
    user = current().user
    return {"author": user.id, "author_name": user.name} if user else {}


def card_view(template: Template) -> TemplateCard:
    return TemplateCard(id=template.id, name=template.name, description=template.description,
                        node_count=template.node_count)


def name_base(template: Template) -> str:
    """A blank graph is "Untitled graph", one from a template is named after it (then made unique)."""
    return UNTITLED if template.id == BLANK else template.name


class UploadTooLarge(Exception):
    def __init__(self, name: str):
        super().__init__(name)
        self.name = name


async def read_first_file(chunks: AsyncIterator[Any], limit: int) -> tuple[str | None, bytes]:
    """(name, bytes) of the first file of a streamed upload (other files are skipped); (None, b"") when
    there is none. Raises UploadTooLarge as soon as the file passes `limit` bytes, without reading on."""
    name: str | None = None
    content = bytearray()
    async for chunk in chunks:
        if name is None:
            name = chunk.filename or "the file"
        elif (chunk.filename or "the file") != name:
            continue
        content += chunk.data
        if len(content) > limit:
            raise UploadTooLarge(name)
    return name, bytes(content)


def issue_view(issue: GraphIssue) -> ImportIssue:
    where = f"node {issue.node_id}" if issue.node_id else f"edge {issue.edge_id}" if issue.edge_id else "graph"
    return ImportIssue(where=where, message=issue.message)


def _listing(search: str, workspace: str | None) -> tuple[list[GraphListRow], int, dict[str, int]]:
    """(the rows matching `search`, the number of graphs of the workspace, {graph id: live version} of the active
    ones among the rows); blocking."""
    store, now = graph_store(), time.time()
    summaries = store.list(search, workspace_id=workspace)
    live = trigger_store().active_versions([s.id for s in summaries])
    rows = [row_view(s, now) for s in summaries]
    return rows, len(store.list(workspace_id=workspace)) if search.strip() else len(rows), live


def _in_workspace(graph_id: str) -> str:
    """`graph_id` when it belongs to the caller's workspace; else the graph is "not found" for them (the role
    checked before the handler ran is the one in this workspace, so another workspace's graph is off limits)."""
    if graph_store().workspace_of(graph_id) != current().workspace_id:
        raise GraphNotFound(graph_id)
    return graph_id


async def _attempt(action: str, call: Callable[[], Any]) -> Any:
    """Run a store call in a thread (on the event loop, a slow query held every other tab and every run); failures
    raise `_Failed` carrying the toast that explains them. The thread gets a copy of the context: `current()` there
    is the caller this event was checked for. (knowledge_state's `_call` does the same with its page's messages.)"""
    try:
        return await off_loop(call)
    except GraphNotFound:
        raise _Failed(f"Could not {action}: the graph no longer exists.") from None
    except Exception as error:  # noqa: BLE001 - a handler must answer with a message, never crash
        log.exception("graph list: could not %s", action)
        raise _Failed(f"Could not {action}: {error}") from None


class GraphListState(rx.State):
    rows: list[GraphListRow] = []
    loaded: bool = False  # until the first load, show neither the table nor "No graphs yet"
    load_error: str = ""  # the first load failed: the list's place says why, with a Retry
    total: int = 0  # graphs in the database, whatever the search
    search: str = ""

    # The New graph picker. `creating` holds from the first pick until the editor opens, so a double
    # click (or a second pick while the first is on its way) makes one graph, not two.
    picker_open: bool = False
    templates: list[TemplateCard] = []
    workspace_templates: list[TemplateCard] = []  # saved by the workspace's members ("Save as template…")
    creating: bool = False

    rename_open: bool = False
    rename_id: str = ""
    rename_name: str = ""
    rename_error: str = ""

    delete_open: bool = False
    delete_id: str = ""
    delete_name: str = ""

    import_open: bool = False
    import_file: str = ""
    import_issues: list[ImportIssue] = []

    @rx.var
    def count_text(self) -> str:
        noun = "graph" if self.total == 1 else "graphs"
        return f"{len(self.rows)} of {self.total} {noun}" if self.search.strip() else f"{self.total} {noun}"

    async def _refreshed(self, event: Any = None) -> Any:
        """Refresh the rows after a change; a failure to read becomes the toast."""
        search, workspace = self.search, current().workspace_id
        try:
            self.rows, self.total, live = await _attempt("load the graphs", lambda: _listing(search, workspace))
        except _Failed as failed:
            if not self.loaded:  # nothing listed yet: the list's place says it (components/loading.py)
                self.load_error = failed.message
                return None
            return failed.event
        await self._share_live(workspace, live)
        self.loaded, self.load_error = True, ""
        return event

    async def _share_live(self, workspace: str | None, live: dict[str, int]) -> None:
        """The rows' switches show the workspace's list room: a switch flipped elsewhere (an editor, another
        tab's list) changes them at once (state/live_rooms.py)."""
        room = await (await self.get_state(GraphListRoom))._link_to(list_room_token(workspace))
        room._listed(workspace, [row.id for row in self.rows], live)

    def _access_ended(self) -> None:
        """The tab was unlinked from its workspace's list room (state/room_access.py): its rows go too."""
        self.rows, self.total = [], 0

    @rx.event
    @requires("view")
    async def load(self) -> Any:
        if self.creating:  # back on the list after a graph was made: a fresh picker (a picker the person opened
            self.creating, self.picker_open = False, False  # while this load waited stays open)
        return await self._refreshed()

    @rx.event
    @requires("view")
    async def set_search(self, value: str) -> Any:
        self.search = value
        return await self._refreshed()

    # -- New graph -----------------------------------------------------------------------------------

    @rx.event
    @requires("edit")
    async def open_picker(self) -> Any:
        """New graph: the templates, read from their folder now (a new file shows without a restart)."""
        if self.creating:
            return None
        try:
            self.templates = [card_view(t) for t in await off_loop(load_templates)]
        except TemplateError as error:
            log.error("graph list: %s", error)
            return rx.toast.error(f"Could not list the templates: {error}")
        try:
            await self._list_workspace_templates()
        except _Failed as failed:
            return failed.event
        self.picker_open = True
        return None

    async def _list_workspace_templates(self) -> None:
        workspace = current().workspace_id
        self.workspace_templates = [card_view(t) for t in await _attempt(
            "list the workspace's templates", lambda: template_store().list(workspace))] if workspace else []

    @rx.event
    @requires("edit")
    async def delete_template(self, template_id: str) -> Any:
        try:
            await _attempt("delete the template",
                           lambda: template_store().delete(current().workspace_id, template_id))
            await self._list_workspace_templates()
        except _Failed as failed:
            return failed.event
        return None

    @rx.event
    @requires("view")
    def set_picker_open(self, is_open: bool) -> None:
        if not self.creating:  # the picker stays until the new graph opens
            self.picker_open = is_open

    @rx.event
    @requires("edit")
    async def create_graph(self, template_id: str = BLANK) -> Any:
        """Store a new graph from the template and open it; ignored while a creation is under way."""
        if self.creating:
            return None
        try:
            template = await off_loop(self._template, template_id)  # a file, or the database
        except TemplateError as error:
            return rx.toast.error(f"Could not create the graph: {error}")
        self.creating = True
        try:
            base = name_base(template)
            workspace = current().workspace_id
            names = [s.name for s in await _attempt("create a graph", lambda: graph_store().list(base, workspace))]
            name = next_untitled(names, base)
            author = _as_author()
            created = await _attempt("create a graph", lambda: graph_store().create(
                name, template.new_graph(), note=f"created from {template.name}", workspace_id=workspace, **author))
        except _Failed as failed:
            self.creating = False
            return failed.event
        return rx.redirect(routes.editor_url(created.id))

    @staticmethod
    def _template(template_id: str) -> Template:
        """A built-in template, or one of the workspace's own (never another workspace's)."""
        if not is_workspace_template(template_id):
            return get_template(template_id)
        found = template_store().get(current().workspace_id or "", template_id)
        if found is None:
            raise TemplateError("that template is not in this workspace any more")
        return found

    # -- rename ------------------------------------------------------------------------------------

    @rx.event
    @requires("edit")
    def start_rename(self, graph_id: str, name: str) -> None:
        self.rename_id, self.rename_name, self.rename_error = graph_id, name, ""
        self.rename_open = True

    @rx.event
    @requires("view")
    def set_rename_open(self, is_open: bool) -> None:
        self.rename_open = is_open

    @rx.event
    @requires("edit")
    async def confirm_rename(self, form: dict[str, Any]) -> Any:
        raw, graph_id = str(form.get("name", "")), self.rename_id
        try:
            name = clean_name(raw)
        except ValueError as error:
            self.rename_name, self.rename_error = raw, str(error).capitalize() + "."
            return None
        try:
            await _attempt("rename the graph", lambda: graph_store().rename(_in_workspace(graph_id), name))
        except _Failed as failed:
            self.rename_open = False
            return await self._refreshed(failed.event)
        self.rename_open = False
        return await self._refreshed()

    # -- activation --------------------------------------------------------------------------------

    @rx.event
    @requires("edit")
    async def set_active(self, graph_id: str, on: bool) -> Any:
        """The row's switch: the graph's latest saved version goes live (or its triggers stop)."""
        change = (lambda: activation().activate(_in_workspace(graph_id))) if on else (
            lambda: activation().deactivate(_in_workspace(graph_id)))
        try:
            version = await _attempt("activate the graph" if on else "deactivate the graph", change)
        except _Failed as failed:
            return await self._refreshed(failed.event)
        show_live(graph_id, current().workspace_id, version if on else 0)  # its editors, the other graph lists
        return await self._refreshed(rx.toast.success(f"Active: version {version} is live" if on else "Inactive"))

    # -- duplicate, delete -------------------------------------------------------------------------

    @rx.event
    @requires("edit")
    async def duplicate(self, graph_id: str) -> Any:
        try:
            author = _as_author()
            copy = await _attempt("duplicate the graph",
                                  lambda: graph_store().duplicate(_in_workspace(graph_id), **author))
        except _Failed as failed:
            return await self._refreshed(failed.event)
        return await self._refreshed(rx.toast.success(f"Created “{copy.name}”"))

    @rx.event
    @requires("edit")
    def ask_delete(self, graph_id: str, name: str) -> None:
        self.delete_id, self.delete_name, self.delete_open = graph_id, name, True

    @rx.event
    @requires("view")
    def set_delete_open(self, is_open: bool) -> None:
        self.delete_open = is_open

    @rx.event
    @requires("edit")
    async def confirm_delete(self) -> Any:
        self.delete_open, graph_id = False, self.delete_id
        try:
            await _attempt("delete the graph", lambda: run_service().delete_graph(_in_workspace(graph_id)))
        except _Failed as failed:
            return await self._refreshed(failed.event)
        return await self._refreshed(rx.toast.success(f"Deleted “{self.delete_name}”"))

    # -- import ------------------------------------------------------------------------------------

    @rx.event
    @requires("view")
    def set_import_open(self, is_open: bool) -> None:
        self.import_open = is_open

    @rx.event(background=True)
    @requires("edit")
    async def import_chunks(self, chunks: rx.UploadChunkIterator) -> Any:
        """Import the first uploaded JSON file; open the editor on success, list its issues otherwise.

        The file is read as it streams in: past MAX_IMPORT_BYTES the handler returns, which makes Reflex
        stop reading the request, so an oversized upload never reaches the server whole.
        """
        try:
            name, content = await read_first_file(chunks, MAX_IMPORT_BYTES)
        except UploadTooLarge as too_large:
            yield rx.toast.error(f"{too_large.name} is larger than {MAX_IMPORT_BYTES // (1024 * 1024)} MB.")
            return
        if name is None:
            return
        text = content.decode("utf-8", errors="replace")
        # Parsing and migrating up to MAX_IMPORT_BYTES of JSON takes a while: in a thread, like the store call.
        migration = await off_loop(legacy_migration, text, name or "the file")
        if migration is not None:  # a graph of the older runtime: show its migration report first
            async with self:
                (await self.get_state(LegacyImportState))._show(name or "the file", migration)
            return
        try:  # outside `async with self`: the state stays free while the database works
            workspace, author = current().workspace_id, _as_author()
            summary, issues = await _attempt("import the graph", lambda: graph_store().import_json(
                text, default_registry(), workspace_id=workspace, free_name=free_name_in(workspace), **author))
        except _Failed as failed:
            yield failed.event
            return
        async with self:
            self.import_file = name or "the file"
            if summary is None:
                self.import_issues = [issue_view(i) for i in issues]
                self.import_open = True
                return
        # The editor's Import opens a new graph that may look just like the one it replaces on screen: say so.
        yield rx.toast.success(f"Imported “{summary.name}” as a new graph")
        yield rx.redirect(routes.editor_url(summary.id))
