"""The Reflex app: builds rx.App, the access check every event passes, and the pages."""

import asyncio
import contextlib
import os

import reflex as rx

from nodeflow_app import routes
from nodeflow_app.api.app import create_api
from nodeflow_app.components.auth_pages import account_page, setup_page, sign_in_page
from nodeflow_app.components.chat_panel import chat_page
from nodeflow_app.components.connection import connection_status
from nodeflow_app.components.editor_page import editor_page
from nodeflow_app.components.graph_list import graph_list_page
from nodeflow_app.components.inspector import unsent_guard
from nodeflow_app.components.header import TAGLINE
from nodeflow_app.components.knowledge_page import knowledge_page
from nodeflow_app.components.not_found import not_found_page
from nodeflow_app.components.workspace_page import invitation_page, workspace_page
from nodeflow_app.heap import freeze_startup_objects
from nodeflow_app.stopping import run_before_stopping
from nodeflow_app.state.access import AccessMiddleware, frontend_prefix
from nodeflow_app.state.forget_everywhere import listening as hear_other_workers_forget
from nodeflow_app.state.auth_state import AuthState
from nodeflow_app.components.settings_page import settings_page
from nodeflow_app.state.chat_state import ChatState
from nodeflow_app.state.editor_state import EditorState
from nodeflow_app.state.graph_list_state import GraphListState
from nodeflow_app.state.history_state import HistoryState
from nodeflow_app.state.knowledge_state import KnowledgeState
from nodeflow_app.state.run_history_state import RunHistoryState
from nodeflow_app.state.workspace_state import WorkspaceState
from nodeflow_app.state.settings_state import SettingsState
from nodeflow_app.state.trigger_state import TriggerState


def recover_interrupted_runs() -> None:
    """Runs left `running` by a process that is gone become `interrupted` (runs other live processes
    execute are left alone); the chat answers they were streaming keep what was saved and become
    `paused` (their approval card can still be answered) or `failed`."""
    from nodeflow_app.chat.service import chat_service

    chat_service().recover()


def create_admin_from_environment() -> None:
    """Headless installs: NODEFLOW_ADMIN_EMAIL / NODEFLOW_ADMIN_PASSWORD create the owner at first start."""
    from nodeflow_app.store.accounts import account_store

    email, password = os.environ.get("NODEFLOW_ADMIN_EMAIL"), os.environ.get("NODEFLOW_ADMIN_PASSWORD")
    if email and password:
        if account_store().ensure_admin(email, password) is not None:
            from nodeflow_app.state.access import adopt_unowned_graphs

            adopt_unowned_graphs()


async def run_schedules() -> None:
    """This worker's scheduler: Schedule triggers of active graphs fire once per due time across workers."""
    from nodeflow_app.triggers.scheduler import run_scheduler

    await run_scheduler()


async def resume_timed_pauses() -> None:
    """This worker's timers: a paused node due to go on by itself (a long Wait) does, once across workers."""
    from nodeflow_app.runs.timers import run_pause_timers

    await run_pause_timers()


async def keep_house() -> None:
    """Hourly, in one process: finished runs past NODEFLOW_RUNS_MAX_AGE_DAYS / _MAX_PER_GRAPH pruned, stored
    files no record refers to deleted."""
    from nodeflow_app.runs.housekeeping import run_housekeeping

    await run_housekeeping()


@contextlib.asynccontextmanager
async def save_rooms_when_stopping(app: rx.App):
    """At shutdown (SIGTERM or Ctrl+C to `make run`), before Reflex closes its state manager: the edits of the last
    seconds, which no tab's autosave took and whose room's own autosave is still waiting, are saved."""
    from nodeflow_app.state.editor_state import save_waiting_rooms

    async def save() -> None:
        with app.set_contexts():  # the saves use the app's state manager, as an event would
            await save_waiting_rooms()

    # Granian's stop can panic before the lifespan's shutdown runs (nodeflow_app/stopping.py): save on the signal.
    run_before_stopping(asyncio.get_running_loop(), save)
    yield
    await save()  # finds nothing left when the signal's save ran


# The tab's icon (assets/favicon.svg): without one named, browsers ask for /favicon.ico, a 404 on every page.
FAVICON = rx.el.link(rel="icon", type="image/svg+xml", href=frontend_prefix() + "/favicon.svg")
app = rx.App(api_transformer=create_api(),  # the HTTP API (/api/...) beside Reflex's backend
             head_components=[FAVICON, unsent_guard()])  # unsent_guard: before Reflex's own listeners
app.add_middleware(AccessMiddleware())
app.register_lifespan_task(create_admin_from_environment)
app.register_lifespan_task(hear_other_workers_forget)  # a sign-out or removal elsewhere, at once
# Our connection banner instead of Reflex's overlay (a pulsing icon, then an error toast).
app.app_wraps[(5, "Overlay")] = lambda stateful: connection_status() if stateful else None
app.register_lifespan_task(recover_interrupted_runs)
app.register_lifespan_task(run_schedules)
app.register_lifespan_task(resume_timed_pauses)
app.register_lifespan_task(keep_house)
app.register_lifespan_task(save_rooms_when_stopping)
app.register_lifespan_task(freeze_startup_objects)  # last: the app is imported and built by then
app.add_page(setup_page, route=routes.SETUP, title="NodeFlow — set up", on_load=AuthState.load_public)
app.add_page(sign_in_page, route=routes.SIGN_IN, title="NodeFlow — sign in", on_load=AuthState.load_public)
app.add_page(account_page, route=routes.ACCOUNT, title="NodeFlow — account", on_load=AuthState.guard)
app.add_page(graph_list_page, route=routes.GRAPHS, title="NodeFlow — graphs", description=TAGLINE,
             on_load=[AuthState.guard, GraphListState.load])
# The tab says which graph it holds (a Var title is a <title> in the page: React puts it in the head).
EDITOR_TITLE = rx.cond(EditorState.graph_name != "", EditorState.graph_name + " · NodeFlow", "NodeFlow — editor")
# The graph comes last: each on_load sends its own delta, and each delta after the graph's would make the
# browser lay out and paint every node of a big graph again (at 1,000 nodes, ~40 ms a frame).
app.add_page(editor_page, route=routes.EDITOR, title=EDITOR_TITLE,
             on_load=[AuthState.guard, EditorState.check_found, RunHistoryState.load, ChatState.load, HistoryState.load,
                      TriggerState.load, EditorState.load_graph])
app.add_page(chat_page, route=routes.CHAT, title="NodeFlow — chat",
             on_load=[AuthState.guard, ChatState.check_found, ChatState.load])
app.add_page(knowledge_page, route=routes.KNOWLEDGE, title="NodeFlow — knowledge",
             on_load=[AuthState.guard, KnowledgeState.load])
app.add_page(workspace_page, route=routes.WORKSPACE, title="NodeFlow — workspace",
             on_load=[AuthState.guard, WorkspaceState.load])
app.add_page(invitation_page, route=routes.INVITE, title="NodeFlow — invitation",
             on_load=[AuthState.load_account, WorkspaceState.open_invitation])
app.add_page(settings_page, route=routes.SETTINGS, title="NodeFlow — settings",
             on_load=[AuthState.guard, SettingsState.load])
# An address no page has (Reflex's own was a bare "404: Page not found"); the production build serves it for every
# unknown path (its 404.html falls back to the app, whose router renders this route).
app.add_page(not_found_page, route=routes.NOT_FOUND, title="NodeFlow — page not found", on_load=AuthState.load_account)
