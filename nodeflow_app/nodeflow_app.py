"""The Reflex app: builds rx.App and adds the pages."""

import reflex as rx

from nodeflow_app import routes
from nodeflow_app.components.chat_panel import chat_page
from nodeflow_app.components.connection import connection_status
from nodeflow_app.components.editor_page import editor_page
from nodeflow_app.components.graph_list import graph_list_page
from nodeflow_app.components.header import TAGLINE
from nodeflow_app.components.knowledge_page import knowledge_page
from nodeflow_app.components.settings_page import settings_page
from nodeflow_app.state.chat_state import ChatState
from nodeflow_app.state.editor_state import EditorState
from nodeflow_app.state.graph_list_state import GraphListState
from nodeflow_app.state.history_state import HistoryState
from nodeflow_app.state.knowledge_state import KnowledgeState
from nodeflow_app.state.run_history_state import RunHistoryState
from nodeflow_app.state.settings_state import SettingsState


def recover_interrupted_runs() -> None:
    """Runs left `running` by a process that is gone become `interrupted` (runs other live processes
    execute are left alone); the chat answers they were streaming keep what was saved and become
    `paused` (their approval card can still be answered) or `failed`."""
    from nodeflow_app.chat.service import chat_service

    chat_service().recover()


app = rx.App()
# Our connection banner instead of Reflex's overlay (a pulsing icon, then an error toast).
app.app_wraps[(5, "Overlay")] = lambda stateful: connection_status() if stateful else None
app.register_lifespan_task(recover_interrupted_runs)
app.add_page(graph_list_page, route=routes.GRAPHS, title="NodeFlow — graphs", description=TAGLINE,
             on_load=GraphListState.load)
app.add_page(editor_page, route=routes.EDITOR, title="NodeFlow — editor",
             on_load=[EditorState.load_graph, RunHistoryState.load, ChatState.load, HistoryState.load])
app.add_page(chat_page, route=routes.CHAT, title="NodeFlow — chat", on_load=ChatState.load)
app.add_page(knowledge_page, route=routes.KNOWLEDGE, title="NodeFlow — knowledge", on_load=KnowledgeState.load)
app.add_page(settings_page, route=routes.SETTINGS, title="NodeFlow — settings", on_load=SettingsState.load)
