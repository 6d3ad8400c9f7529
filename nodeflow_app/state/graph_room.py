"""A co-editing room: the one graph document everybody with the graph open edits, and who is there.

`GraphRoom` is an `rx.SharedState`: each editor tab links its instance to the token `graph<id>`
(`EditorState._room`), so the backend-only `_doc` is one object for all of them (on every worker:
with Redis the room is stored under that token) and a var the room changes (`patch`, `people`,
`cursors`, `saved_version`, `live_version`) reaches every linked tab. EditorState validates and
role-checks each edit, applies it here (`publish`), and the browsers apply the small patch; see
docs/editor.md, "Editing together".
The room has no event handlers of its own: every event goes through EditorState's access checks.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any, Awaitable, Callable

import reflex as rx
from reflex.state import _override_base_method  # how Reflex's own states override `_clean`

from nodeflow_app.state.access import graph_workspace, kept_graph_workspace
from nodeflow_app.state.page_threads import off_loop
from nodeflow_app.state.room_access import kept_linked
from nodeflow_app.editor import presence
from nodeflow_app.editor.document import GraphDocument
from nodeflow_app.store.graphs import graph_store
from nodeflow_app.store.triggers import trigger_store
from nodeflow_app.validation import Issue, validate_graph
from nodes._registry import default_registry

LOG_SIZE = 64  # recent patches kept for a tab that missed some (`since`)
SELECTION_SHOWN = 50  # of a tab's selected nodes, how many the others see outlined


@lru_cache(maxsize=4096)
def room_token(graph_id: str) -> str:
    """The shared token of a graph's room (a linked token may not contain `_`).

    A Reflex client picks its own token, and a page hydrated under the room's token would read the room's
    vars without any access check: the token carries a digest of the graph id under the install's key.
    """
    from nodeflow_app.llm.credentials import keyed_digest

    return f"graph{graph_id.replace('_', '-')}-{keyed_digest('room:' + graph_id)[:32]}"


async def modify_room(manager: Any, cls: type[rx.SharedState], token: str,
                      change: Callable[[Any], Awaitable[Any]]) -> Any:
    """`change(room)`'s result, the room of `token` changed outside any tab's event (a server-side save, a switch).

    Not `app.modify_state`: it also sends the room's delta to the room's own token, which no browser holds (a
    "delta to disconnected client" warning each time, without Redis). This is the rest of it: the state manager's
    modify_state_with_links sends the change to every tab linked to the room when it ends, as after a tab's event,
    and `_clean()` (as each event ends) is what records the vars that changed for them."""
    from reflex.istate.manager.token import BaseStateToken

    async with manager.modify_state_with_links(BaseStateToken(ident=token, cls=cls)) as root:
        result = await change(only_new_changes(await root.get_state(cls)))
        await root._get_resolved_delta()  # brings the room's computed vars up to date, as sending it would
        root._clean()
        return result


async def without_router_resent(state: rx.State, linking: Any) -> Any:
    """A shared state's `_internal_patch_linked_state` (`linking`, awaited here) without its side effect: Reflex's
    linking (every event of a linked tab, and every fan-out to one) marks the root's router vars (and the route
    args computed from them) dirty to refresh computed vars, and leaves them dirty: each delta then carried the
    router, ~1.8 KB of request headers, beside a ~0.5 KB patch. Nothing in them changed, so they are not resent."""
    root = state._get_root_state()
    already = set(root.dirty_vars)
    linked = await linking
    root.dirty_vars.intersection_update(already)  # the router, and the page's route args computed from it
    return linked


def only_new_changes(linked: Any) -> Any:
    """`linked` (a room just patched into a tab's state, or changed by its own token: `modify_room`), with no
    change recorded yet for this event: Reflex then updates the other linked tabs only if the event changes it.

    After every event of a linked tab Reflex sends the vars the room's last `_clean` recorded as changed to every
    other linked tab, and takes each of those tabs' state (and lock; with Redis, a round trip) to do so whenever
    a record exists, even an empty one; but an event cleans the room only when it changed it. So an event that
    left the room as it was (a selection, a panel opened, a run's message) sent an earlier change again to every
    tab, and with that fixed, an empty update to each. None is "nothing recorded"; `record_changes` makes a record
    when the room is cleaned, i.e. changed. Reflex also updates them when the room "was touched" (changed in any
    way, backend vars too): a room read from Redis starts untouched, one kept in memory stays touched for good
    after its first change, so it starts this event untouched here too (it is linked before anything changes it)."""
    linked._previous_dirty_vars = None
    linked._was_touched = False
    return linked


def record_changes(room: Any) -> None:
    """Call first in a room's `_clean`: Reflex's records the changed vars only into a record that exists."""
    if room._previous_dirty_vars is None:
        room._previous_dirty_vars = set()


class GraphRoom(rx.SharedState):
    """One per graph; empty (`_doc` None) until a tab links to it and opens the graph."""

    patch: dict[str, Any] = {"epoch": 0, "seq": 0, "ops": [], "by": ""}
    people: list[dict[str, Any]] = []  # presence.person() of each tab in the room, in order of arrival
    faces: list[dict[str, Any]] = []  # presence.faces(people): one per person, for the toolbar
    cursors: dict[str, list[float]] = {}  # presence id -> [x, y] in flow coordinates
    node_count: int = -1  # -1 until a graph is open; 0 or 1 shows the canvas's "how to add nodes" hint
    has_chat_start: bool = False  # a test run then asks for the message to test with
    save_status: str = "saved"  # saved | unsaved | error
    saved_version: int = 0
    live_version: int = 0  # the version webhooks and schedules run; 0 while the graph is inactive (TriggerState)

    _doc: GraphDocument | None = None
    _epoch: int = 0  # a new epoch each time the document is (re)read from the database
    _seq: int = 0
    _log: list[tuple[int, list[dict[str, Any]]]] = []
    _edits: int = 0
    _saved_edits: int = 0
    _authors: dict[str, str] = {}  # user id -> name, of the edits not saved yet
    _tokens: dict[str, str] = {}  # presence id -> client token (to drop tabs that went away)

    async def _internal_patch_linked_state(self, token: str, full_delta: bool = False):
        linked = await without_router_resent(self, super()._internal_patch_linked_state(token, full_delta))
        return await kept_linked(self, only_new_changes(linked), await linked._workspace_id())

    @_override_base_method
    def _clean(self) -> None:
        record_changes(self)
        super()._clean()

    async def _workspace_id(self) -> str | None:
        """The workspace of the open graph (None: no graph open yet); kept a moment per process (`graph_workspace`)."""
        if self._doc is None:
            return None
        kept = kept_graph_workspace(self._doc.id)
        return kept[0] if kept is not None else await off_loop(graph_workspace, self._doc.id)

    async def _access_ended(self) -> None:
        """This (private) copy's tab was unlinked: its person may no longer view the graph (room_access)."""
        from nodeflow_app.state.editor_state import EditorState

        (await self.get_state(EditorState))._access_ended()

    async def _open(self, graph_id: str) -> tuple[str | None, list[Issue]]:
        """(Re)read the stored graph: a new epoch, so every tab in the room reloads it. (error, issues)"""
        stored, graph, issues = await off_loop(_read_graph, graph_id)
        if stored is None:
            self._doc = None
            return "missing", []
        if graph is None:
            self._doc = None
            return f"Graph {graph_id} cannot be read: {issues[0].line()}", issues
        self._doc = graph
        self._epoch += 1
        self._seq, self._log = 0, []
        self._edits = self._saved_edits = 0
        self._authors = {}
        self.saved_version, self.save_status = stored.version, "saved"
        self.patch = {"epoch": self._epoch, "seq": 0, "ops": [], "by": ""}
        self._update_counts()
        return None, issues

    async def _is_stale(self) -> bool:
        """Nothing unsaved here, but the database holds a newer version (History, the CLI, the API wrote it)."""
        if self._doc is None or self.unsaved:
            return False
        graph_id = self._doc.id
        return await off_loop(graph_store().version_of, graph_id) not in (None, self.saved_version)

    async def _reread_live(self) -> None:
        """Which version is live, from the database: on a page load, when activation may have changed elsewhere
        (another process, a room that was not open then)."""
        if self._doc is not None:
            self._set_live(await off_loop(trigger_store().active_version, self._doc.id) or 0)

    def _set_live(self, version: int) -> None:
        """Every tab's switch and badge show it (0: inactive)."""
        if version != self.live_version:  # assigning marks a var dirty even if equal: every tab would get it
            self.live_version = version

    def _show_live(self, graph_id: str, version: int) -> None:
        """`_set_live` when the room has `graph_id` open."""
        if self._doc is not None and self._doc.id == graph_id:
            self._set_live(version)

    @property
    def unsaved(self) -> bool:
        return self._edits != self._saved_edits

    def _publish(self, ops: list[dict[str, Any]], by: str, author_id: str, author_name: str) -> None:
        """Ops already applied to `_doc` go to every tab in the room as one patch (secrets hidden)."""
        from nodeflow_app.state.editor_state import hide_ops

        self._seq += 1
        shown = hide_ops(ops, default_registry())
        self._log = [*self._log[-(LOG_SIZE - 1):], (self._seq, shown)]
        self.patch = {"epoch": self._epoch, "seq": self._seq, "ops": shown, "by": by}
        self._edits += 1
        self._authors = {**self._authors, author_id: author_name}
        if self.save_status != "unsaved":
            self.save_status = "unsaved"
        self._update_counts()

    def _since(self, seq: int) -> list[tuple[int, list[dict[str, Any]]]] | None:
        """The patches after `seq`, or None when they are no longer all kept."""
        missed = [entry for entry in self._log if entry[0] > seq]
        if seq < self._seq and (not missed or missed[0][0] != seq + 1):
            return None
        return missed

    def _claim_save(self) -> tuple[int, dict[str, str]]:
        """Mark every edit as being saved (other tabs' autosaves of the burst then find nothing to do)."""
        edits, authors = self._edits, self._authors
        self._saved_edits, self._authors = edits, {}
        return edits, authors

    def _saved(self, edits: int, version: int) -> None:
        self.saved_version = version
        self.save_status = "saved" if self._edits == edits else "unsaved"

    def _save_failed(self, edits: int, authors: dict[str, str], status: str = "error") -> None:
        """The claimed edits are unsaved again (the next autosave retries them). `status` "unsaved": the save
        was given up, not refused (its page load was cancelled)."""
        self._saved_edits = min(self._saved_edits, edits - 1) if self._saved_edits == edits else self._saved_edits
        self._authors = {**authors, **self._authors}
        self.save_status = status

    def _update_counts(self) -> None:
        from nodeflow_app.chat.service import starts_chats

        count = len(self._doc.nodes) if self._doc else -1
        if count != self.node_count:  # assigning marks a var dirty even if equal: every tab would get it
            self.node_count = count
        found = self._doc is not None and any(starts_chats(default_registry(), n.type) for n in self._doc.nodes.values())
        if found != self.has_chat_start:
            self.has_chat_start = found

    # Presence ----------------------------------------------------------------------------------

    def _enter(self, entry: dict[str, Any], token: str, connected: set[str] | None = None) -> None:
        """Add (or refresh) a tab; tabs whose websocket is gone (`connected` excludes them) leave."""
        tokens = {pid: t for pid, t in self._tokens.items() if connected is None or t in connected or pid == entry["id"]}
        tokens[entry["id"]] = token
        self._tokens = tokens
        others = [p for p in self.people if p["id"] != entry["id"] and p["id"] in tokens]
        self._set_people([*others, entry])
        if set(self.cursors) - set(tokens):
            self.cursors = {pid: xy for pid, xy in self.cursors.items() if pid in tokens}

    def _leave(self, pid: str) -> None:
        self._tokens = {k: v for k, v in self._tokens.items() if k != pid}
        if any(p["id"] == pid for p in self.people):
            self._set_people([p for p in self.people if p["id"] != pid])
        if pid in self.cursors:
            self.cursors = {k: v for k, v in self.cursors.items() if k != pid}

    def _set_people(self, people: list[dict[str, Any]]) -> None:
        self.people = people
        faces = presence.faces(people)
        if faces != self.faces:  # a second tab of someone already here changes no face
            self.faces = faces

    def _select(self, pid: str, ids: list[str]) -> None:
        """`ids` come from the browser (a viewer's too) and go to every tab: only nodes of the open graph, a few."""
        nodes = self._doc.nodes if self._doc is not None else {}
        ids = [node_id for node_id in ids if node_id in nodes][:SELECTION_SHOWN]
        for i, entry in enumerate(self.people):
            if entry["id"] == pid and entry["selected"] != ids:
                self.people = [*self.people[:i], {**entry, "selected": ids}, *self.people[i + 1:]]
                return

    def _point(self, pid: str, at: list[float] | None) -> None:
        """`at` comes from the browser and goes to every tab: NaN or Infinity there is no JSON a browser reads
        (its websocket drops the update and reconnects, to get it again), so it counts as no cursor."""
        if at is not None and not all(math.isfinite(v) for v in at):
            at = None
        if at is None:
            if pid in self.cursors:
                self.cursors = {k: v for k, v in self.cursors.items() if k != pid}
        elif self.cursors.get(pid) != at:
            self.cursors = {**self.cursors, pid: at}


def _read_graph(graph_id: str) -> tuple[Any, GraphDocument | None, list[Issue]]:
    """(stored row or None, its document or None when it does not validate, issues). Reading, checking and
    building a 1,000-node graph takes tens of ms: callers run this in a thread, off the event loop every
    run and tab shares."""
    stored = graph_store().get(graph_id)
    if stored is None:
        return None, None, []
    graph, issues = validate_graph(stored.graph, default_registry())
    if graph is None:
        return stored, None, issues
    graph.id, graph.name = stored.id, stored.name
    return stored, GraphDocument.from_graph(graph, history=False), issues
