"""The "Save as template…" dialog (graph list rows, editor menu): a graph becomes a template of its workspace.

Everyone who may edit in the workspace sees it in New graph beside the built-in templates and may delete it.
"""

from __future__ import annotations

from typing import Any

import reflex as rx

from nodeflow_app.state.page_threads import off_loop
from nodeflow_app import routes
from nodeflow_app.state.access import acts_on_graph, current, requires
from nodeflow_app.store.graphs import graph_store
from nodeflow_app.store.templates import template_store
from nodes._registry import default_registry


class TemplateSaveState(rx.State):
    open: bool = False
    name: str = ""
    error: str = ""
    _graph_id: str = ""

    @rx.event
    @requires("edit")
    def ask(self, graph_id: str, name: str) -> None:
        """Open the dialog for `graph_id` ("": the editor's graph)."""
        self._graph_id = graph_id or routes.page_graph_id(self.router)
        self.name, self.error, self.open = name, "", True

    @rx.event
    @requires("view")
    def set_open(self, is_open: bool) -> None:
        self.open = is_open

    @rx.event
    @requires("edit")
    async def save(self, form: dict[str, Any]) -> Any:
        workspace, user = current().workspace_id, current().user
        name, description = str(form.get("name", "")), str(form.get("description", ""))
        # In a thread: the whole graph is read, checked and written (a big graph held every run and tab).
        template, name_error = await off_loop(_save_template, self._graph_id, workspace, name, description, user)
        if name_error:
            self.name, self.error = name, name_error
            return None
        if template is None:
            self.open = False
            return rx.toast.error("Not saved: the graph is not in this workspace.")
        self.open = False
        return rx.toast.success(f"Saved as the template “{template.name}”: New graph offers it to your team.")


acts_on_graph(TemplateSaveState, chosen_by=("ask",))  # `ask` opens the dialog for a graph it is given


def _save_template(graph_id: str, workspace: str | None, name: str, description: str, user: Any) -> tuple[Any, str]:
    """(the graph as a template of `workspace`, or None when the graph is not in it; what is wrong in the form)."""
    stored = graph_store().get(graph_id)
    if stored is None or graph_store().workspace_of(graph_id) != workspace:
        return None, ""
    try:
        return template_store().save(workspace, name, description, stored.graph, default_registry(),
                                     author=getattr(user, "id", None)), ""
    except ValueError as error:  # the name or the description
        return None, str(error).capitalize() + "."
