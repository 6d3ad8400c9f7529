"""The Reflex app: builds rx.App and adds the pages."""

import reflex as rx

from nodes._registry import default_registry
from nodeflow_app import routes
from nodeflow_app.components.canvas_placeholder import canvas_placeholder
from nodeflow_app.components.editor_page import editor_page
from nodeflow_app.components.graph_list import graph_list_page
from nodeflow_app.components.header import TAGLINE, header
from nodeflow_app.components.palette import palette
from nodeflow_app.state.editor_state import EditorState
from nodeflow_app.state.graph_list_state import GraphListState


def index() -> rx.Component:
    return rx.vstack(
        header(),
        rx.hstack(
            palette(default_registry().by_category()),
            canvas_placeholder(),
            spacing="0",
            width="100%",
            flex="1",
            min_height="0",
        ),
        spacing="0",
        height="100vh",
        width="100vw",
        overflow="hidden",
    )


def recover_interrupted_runs() -> None:
    """Runs left `running` by a process that died are marked `interrupted` (they can be re-run)."""
    from nodeflow_app.store.db import create_all
    from nodeflow_app.store.runs import RunStore

    store = RunStore()
    create_all(store.engine)
    store.mark_interrupted()
    store.close()


app = rx.App()
app.register_lifespan_task(recover_interrupted_runs)
app.add_page(graph_list_page, route=routes.GRAPHS, title="NodeFlow — graphs", description=TAGLINE,
             on_load=GraphListState.load)
app.add_page(editor_page, route=routes.EDITOR, title="NodeFlow — editor", on_load=EditorState.load_graph)
