"""Which version of a graph is live, the same in every tab (docs/triggers.md): whoever switches a graph on or off,
in its editor or on the graph list, every editor of the graph (its `GraphRoom`) and every graph list of its
workspace (its `GraphListRoom`) shows it at once.

`show_live` changes both rooms in a task of its own, after the switching event: that event holds its tab's lock and
the locks of the rooms its tab is linked to (a tab stays linked to the rooms of the pages it came from), and taking
another room's lock under them could wait for a tab that waits for this one. The task takes one room at a time.
"""

from __future__ import annotations

import asyncio
import logging
from functools import lru_cache

import reflex as rx
from reflex.state import _override_base_method  # how Reflex's own states override `_clean`

from nodeflow_app.state.graph_room import (GraphRoom, modify_room, only_new_changes, record_changes, room_token,
                                          without_router_resent)
from nodeflow_app.state.room_access import kept_linked

log = logging.getLogger(__name__)

_showing: set[asyncio.Task] = set()  # the tasks under way (kept: the loop holds tasks only weakly)


@lru_cache(maxsize=1024)
def list_room_token(workspace_id: str | None) -> str:
    """The shared token of a workspace's graph lists, keyed as `room_token` is (a token must not be guessable)."""
    from nodeflow_app.llm.credentials import keyed_digest

    workspace = workspace_id or "none"
    return f"graphlist{workspace.replace('_', '-')}-{keyed_digest('graphs:' + workspace)[:32]}"


class GraphListRoom(rx.SharedState):
    """One per workspace: which of its graphs are active, for the switches of every tab on its graph list."""

    live: dict[str, int] = {}  # graph id -> live version, of the active graphs listed (or switched) so far
    _workspace: str = ""  # whose list this is ("": none listed yet), for room_access

    async def _internal_patch_linked_state(self, token: str, full_delta: bool = False):
        linked = await without_router_resent(self, super()._internal_patch_linked_state(token, full_delta))
        return await kept_linked(self, only_new_changes(linked), linked._workspace or None)

    @_override_base_method
    def _clean(self) -> None:
        record_changes(self)
        super()._clean()

    async def _access_ended(self) -> None:
        """This (private) copy's tab was unlinked: its person may no longer view the workspace (room_access)."""
        from nodeflow_app.state.graph_list_state import GraphListState

        (await self.get_state(GraphListState))._access_ended()

    def _listed(self, workspace: str | None, graph_ids: list[str], live: dict[str, int]) -> None:
        """A tab listed `graph_ids` of `workspace` from the database; `live`: those of them that are active."""
        if workspace and workspace != self._workspace:
            self._workspace = workspace
        listed = set(graph_ids)
        self._set({**{g: v for g, v in self.live.items() if g not in listed}, **live})

    def _show_live(self, graph_id: str, version: int) -> None:
        self._set({**{g: v for g, v in self.live.items() if g != graph_id}, **({graph_id: version} if version else {})})

    def _set(self, live: dict[str, int]) -> None:
        if live != self.live:  # assigning marks a var dirty even if equal: every tab would get it
            self.live = live


def show_live(graph_id: str, workspace_id: str | None, version: int) -> None:
    """Every tab with the graph open, and every graph list of its workspace, shows `version` live (0: inactive).
    Call it from an event, once activation changed."""
    task = asyncio.create_task(_show_live(graph_id, workspace_id, version))
    _showing.add(task)
    task.add_done_callback(_shown)


async def settled() -> None:
    """Wait for the `show_live` tasks under way (tests)."""
    while _showing:
        await asyncio.gather(*list(_showing), return_exceptions=True)


async def _show_live(graph_id: str, workspace_id: str | None, version: int) -> None:
    await _change(GraphRoom, room_token(graph_id), lambda room: room._show_live(graph_id, version))
    await _change(GraphListRoom, list_room_token(workspace_id), lambda room: room._show_live(graph_id, version))


async def _change(cls: type[rx.SharedState], token: str, change) -> None:
    """`change(room)` on the room of `token`, sent to every tab linked to it (graph_room.modify_room)."""
    from reflex.istate.manager import get_state_manager

    async def changed(room: rx.SharedState) -> None:
        change(room)

    await modify_room(get_state_manager(), cls, token, changed)


def _shown(task: asyncio.Task) -> None:
    _showing.discard(task)
    if not task.cancelled() and task.exception() is not None:  # a task of its own: nobody else would see it
        log.error("showing the live version failed", exc_info=task.exception())
