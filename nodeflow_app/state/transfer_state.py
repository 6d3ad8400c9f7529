"""The "Copy to workspace..." / "Move to workspace..." dialog of the graph list and the editor (issue 14).

The handlers need `edit` where the event acts (the page's graph, else the current workspace); `transfer`
checks edit in the graph's own workspace and in the target again, whatever the browser sends.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import reflex as rx

from nodeflow_app.state.page_threads import off_loop
from nodeflow_app import routes
from nodeflow_app.accounts.transfer import TransferRefused, edit_targets, transfer
from nodeflow_app.state.access import acts_on_graph, current, forget_graph, requires
from nodeflow_app.store.accounts import account_store
from nodeflow_app.store.graphs import graph_store


@dataclasses.dataclass
class TargetOption:
    id: str
    name: str


class TransferState(rx.State):
    open: bool = False
    mode: str = "copy"  # copy | move
    graph_name: str = ""
    targets: list[TargetOption] = []
    target_id: str = ""
    _graph_id: str = ""

    @rx.event
    @requires("edit")
    async def ask(self, graph_id: str, name: str, mode: str) -> Any:
        """Open the dialog for `graph_id` ("": the editor's graph), listing the other workspaces where the
        caller may edit."""
        graph_id = graph_id or routes.page_graph_id(self.router)
        user = current().user
        options = await off_loop(_edit_targets, user.id, graph_id) if user else []
        self._graph_id, self.graph_name, self.mode = graph_id, name, "move" if mode == "move" else "copy"
        self.targets = [TargetOption(w.id, w.name) for w in options]
        self.target_id = options[0].id if options else ""
        self.open = True

    @rx.event
    @requires("view")
    def set_open(self, is_open: bool) -> None:
        self.open = is_open

    @rx.event
    @requires("edit")
    def set_target(self, workspace_id: str) -> None:
        self.target_id = workspace_id

    @rx.event
    @requires("edit")
    async def confirm(self) -> Any:
        user = current().user
        target = next((t for t in self.targets if t.id == self.target_id), None)
        if user is None or target is None:
            return rx.toast.error("Choose a workspace first.")
        try:  # in a thread: a copy reads and writes the whole graph (a big one held every run and tab)
            copy = await off_loop(transfer, graph_store(), account_store(), user.id, self._graph_id,
                                  target.id, self.mode)  # type: ignore[arg-type]
        except TransferRefused as error:
            self.open = False
            return rx.toast.error(f"Not done: {error}.")
        forget_graph(self._graph_id)  # a moved graph's events act in its new workspace from now on
        self.open = False
        from nodeflow_app.state.graph_list_state import GraphListState  # the list drops a moved graph

        done = f"Copied to {target.name} as “{copy.name}”" if copy is not None else f"Moved to {target.name}"
        return [rx.toast.success(done), GraphListState.load]


acts_on_graph(TransferState, chosen_by=("ask",))  # `ask` opens the dialog for a graph it is given


def _edit_targets(user_id: str, graph_id: str) -> list[Any]:
    return edit_targets(account_store(), user_id, graph_store().workspace_of(graph_id))
