"""State of a graph's chats: the chat list, the visible branch of one chat, and the answer being streamed.

Streaming (SPEC 8, FACTS "Streaming from background handlers"): a send runs in one background handler
that iterates `ChatService` updates (already batched every ~50 ms) and takes the state lock only to apply
one. The answer being streamed lives in the small `stream` var as patch ops (`chat.patch`), applied by the
thread component in the browser; it joins `messages` once, when it ends. So a flush sends a few hundred
bytes, never the history or the graph. Run status for the canvas goes to `RunViewState`, a state of its own.
Store calls run in a thread: on the event loop, a long chat's read held every tab and run.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import time
from contextlib import aclosing
from datetime import datetime
from typing import Any, AsyncIterator, Callable

import reflex as rx

from nodeflow_app.state.page_threads import off_loop
from nodeflow_app import routes
from nodeflow_app.chat.patch import apply_patch, wire_ops
from nodeflow_app.chat.service import ChatError, ChatService, ChatUpdate, chat_service
from nodeflow_app.state.editor_state import EditorState
from nodeflow_app.accounts.roles import allows
from nodeflow_app.state.access import current
from nodeflow_app.state.run_history_state import RunHistoryState
from nodeflow_app.state.run_view_state import RunViewState
from nodeflow_app.store.chats import ChatHistory, ChatMessage, ChatNotFound
from nodeflow_app.store.graphs import GraphNotFound, graph_store
from nodeflow_app.state.access import acts_on_graph, requires, still_checked

log = logging.getLogger(__name__)

EMPTY_HEAD: dict[str, Any] = {"message_id": "", "status": "", "siblings": [], "index": 0}
EMPTY_STREAM: dict[str, Any] = {"seq": 0, "ops": []}
CONTINUE_TEXT = "Continue"
# A due timed pause (`due`): how long the tab waits for its answer to move on, how often it looks, and how long it
# follows the answer's saves as it streams.
DUE_WAIT_S, DUE_POLL_S, DUE_FOLLOW_S = 30.0, 0.5, 600.0
_REFUSED = (ChatError, ChatNotFound, GraphNotFound)


def message_view(history: ChatHistory, message: ChatMessage) -> dict[str, Any]:
    """A message as the thread component shows it, with its siblings (the branch arrows)."""
    siblings = history.siblings(message.id) if message.id in history.messages else [message.id]
    return {"id": message.id, "role": message.role, "status": message.status, "blocks": message.blocks,
            "run_id": message.run_id or "", "created_at": message.created_at, "siblings": siblings,
            "index": siblings.index(message.id) if message.id in siblings else 0}


def branch_view(history: ChatHistory, path: list[str]) -> list[dict[str, Any]]:
    return [message_view(history, history.messages[message_id]) for message_id in path]


def _me() -> str | None:
    """The signed-in caller's user id (resolved by the access check); chats are per person."""
    user = current().user
    return user.id if user else None


def chat_row(summary: Any) -> dict[str, str]:
    return {"id": summary.id, "title": summary.title,
            "updated": datetime.fromtimestamp(summary.updated_at).strftime("%d %b %H:%M")}


class ChatState(rx.State):
    """One graph's chats in one browser tab (the editor's chat panel and the full-page chat share it)."""

    graph_id: str = ""
    graph_name: str = ""
    missing: str = ""  # a graph id that does not exist (the chat page says so)
    chats: list[dict[str, str]] = []
    chat_id: str = ""
    messages: list[dict[str, Any]] = []
    stream_head: dict[str, Any] = EMPTY_HEAD  # the answer streamed (or just finished) apart from `messages`
    stream: dict[str, Any] = EMPTY_STREAM  # its latest batch of patch ops
    busy: bool = False
    panel_open: bool = False
    rename_open: bool = False
    rename_error: str = ""
    delete_open: bool = False

    _run_id: str = ""
    _stop_requested: bool = False
    _stream_blocks: list[dict[str, Any]] = []
    _seq: int = 0

    @rx.var
    def chat_title(self) -> str:
        return next((c["title"] for c in self.chats if c["id"] == self.chat_id), "")

    # Loading ---------------------------------------------------------------------------------------

    @rx.event
    @requires("signed_in")
    def check_found(self) -> None:
        """on_load of the chat page, before `load` (which the access check refuses a non-member): the graph of a
        workspace they are not in is "not found" on the page, as one that does not exist."""
        if not allows(current().role, "view"):
            self.missing, self.graph_name, self.chats = routes.page_graph_id(self.router) or "?", "", []

    @rx.event
    @requires("view")
    async def load(self):
        """on_load of the editor and the chat page: the graph of the URL, its chats, the latest one opened."""
        graph_id = routes.page_graph_id(self.router)
        if self.busy and graph_id == self.graph_id:
            return None  # a reload while an answer streams: the stream goes on into this state
        name = await off_loop(graph_store().name_of, graph_id)  # not the graph: ~15 ms of JSON at 1,000 nodes
        self.graph_id, self.missing = graph_id, "" if name is not None else graph_id
        self.graph_name = name or ""
        if name is not None:
            await self._refresh_chats()
        else:
            self.chats = []
        chat_id = self.chat_id if any(c["id"] == self.chat_id for c in self.chats) else (
            self.chats[0]["id"] if self.chats else "")
        return await self._open_chat(chat_id)

    @rx.event
    @requires("view")
    def toggle_panel(self):
        self.panel_open = not self.panel_open

    @rx.event
    @requires("view")
    def close_panel(self):
        """History opens where the chat is docked: one of them at a time (components/editor_page.py)."""
        if self.panel_open:
            self.panel_open = False

    @rx.event
    @requires("view")
    async def select_chat(self, chat_id: str):
        if self.busy:
            return rx.toast.warning("An answer is still streaming: stop it or wait before switching chats.")
        return await self._open_chat(chat_id)

    @rx.event
    @requires("chat")
    async def new_chat(self):
        if self.busy:
            return rx.toast.warning("An answer is still streaming: stop it or wait first.")
        try:
            summary = await off_loop(chat_service().create_chat, self.graph_id, user_id=_me())
        except _REFUSED as error:
            return rx.toast.error(str(error))
        await self._refresh_chats()
        return await self._open_chat(summary.id)

    async def _open_chat(self, chat_id: str):
        """Show a chat's latest branch; the canvas shows the steps of its latest answer."""
        self.chat_id, self.stream_head, self.stream, self._stream_blocks = chat_id, EMPTY_HEAD, EMPTY_STREAM, []
        self.messages = []
        if not chat_id:
            return None
        try:
            history = await off_loop(_own_history, chat_id, self.graph_id, _me())
        except ChatNotFound as error:
            self.chat_id = ""
            return rx.toast.error(str(error))
        if history is None:
            self.chat_id = ""  # someone else's chat (or another graph's) is not found for this caller
            return rx.toast.error("Chat not found.")
        self.messages = branch_view(history, history.path)
        last = history.messages[history.path[-1]] if history.path else None
        if last is not None and last.role == "assistant" and last.run_id:
            (await self.get_state(RunViewState))._show_blocks(last.run_id, last.blocks, "Latest answer")
        return None

    async def _refresh_chats(self) -> None:
        chats = await off_loop(chat_service().list_chats, self.graph_id, _me())
        self.chats = [chat_row(c) for c in chats]

    # Rename and delete -------------------------------------------------------------------------------

    @rx.event
    @requires("view")
    def set_rename_open(self, is_open: bool):
        self.rename_open, self.rename_error = is_open, ""

    @rx.event
    @requires("chat")
    async def rename(self, form: dict[str, Any]):
        title = str(form.get("title") or "").strip()
        if not title:
            self.rename_error = "A chat needs a title."
            return None
        try:
            await off_loop(chat_service().rename_chat, self.chat_id, title)
        except ChatNotFound as error:
            self.rename_error = str(error)
            return None
        self.rename_open = False
        await self._refresh_chats()
        return None

    @rx.event
    @requires("view")
    def set_delete_open(self, is_open: bool):
        self.delete_open = is_open

    @rx.event
    @requires("chat")
    async def delete(self):
        if self.busy:
            return rx.toast.warning("Stop the answer being streamed before deleting its chat.")
        try:
            await off_loop(chat_service().delete_chat, self.chat_id)
        except ChatNotFound as error:
            return rx.toast.error(str(error))
        self.delete_open = False
        await self._refresh_chats()
        return await self._open_chat(self.chats[0]["id"] if self.chats else "")

    # Branches ----------------------------------------------------------------------------------------

    @rx.event
    @requires("view")
    async def show_branch(self, payload: dict[str, Any]):
        """The arrows: show the branch through the sibling `message_id`."""
        try:
            history = await off_loop(chat_service().history, self.chat_id)
            self.messages = branch_view(history, history.branch(str(payload.get("message_id"))))
            self.stream_head, self.stream = EMPTY_HEAD, EMPTY_STREAM
        except (ChatNotFound, KeyError):
            return rx.toast.error("That message is gone; reload the chat.")
        return None

    @rx.event
    @requires("view")
    def resync(self, payload: dict[str, Any] | None = None):
        """The browser missed a stream delta: send the streamed message whole."""
        if self.stream_head["message_id"]:
            self.stream = {"seq": self._seq, "blocks": self._stream_blocks, "ops": []}

    @rx.event(background=True)
    @requires("view")
    async def due(self, payload: dict[str, Any]):
        """A timed pause of a shown answer came due: the server's timer goes on with it (runs/timers.py) in a task of
        its own, which saves the answer every second while it streams. The tab follows those saves (the message and
        the canvas's steps) until the answer ends, then shows the chat again. It gives up waiting after DUE_WAIT_S
        when the answer does not move on, and following after DUE_FOLLOW_S (a reload shows the rest)."""
        async with self:
            chat_id, busy, graph_ok = self.chat_id, self.busy, still_checked(self.graph_id)
        if busy or not chat_id or not graph_ok:
            return None
        message_id, started, shown = str(payload.get("message_id")), time.monotonic(), None
        while (waited := time.monotonic() - started) < DUE_FOLLOW_S:
            message = await off_loop(chat_service().chats.get_message, message_id)
            if message is None or message.chat_id != chat_id or message.status not in ("paused", "streaming"):
                break
            if message.status == "paused" and waited >= DUE_WAIT_S:
                break
            if message.status == "streaming" and message.blocks != shown:
                async with self:
                    if self.chat_id != chat_id or self.busy or not still_checked(self.graph_id):
                        return None
                    await self._show_saved(message)
                shown = message.blocks
            await asyncio.sleep(DUE_POLL_S)
        async with self:
            if self.chat_id == chat_id and not self.busy and still_checked(self.graph_id):  # nobody moved on meanwhile
                return await self._open_chat(chat_id)
        return None

    async def _show_saved(self, message: ChatMessage) -> None:
        """An answer as last saved, in the thread and on the canvas (another task is streaming it). The tab's own
        stream is over (it is not busy); an answer it streamed lives there, not in `messages`: it moves over."""
        head = self.stream_head if self.stream_head["message_id"] == message.id else EMPTY_HEAD
        listed = next((m for m in self.messages if m["id"] == message.id), None)
        view = {**(listed or {"id": message.id, "role": message.role, "run_id": message.run_id or "",
                              "created_at": message.created_at, "siblings": head["siblings"] or [message.id],
                              "index": head["index"]}), "status": message.status, "blocks": message.blocks}
        self.messages = ([view if m["id"] == message.id else m for m in self.messages] if listed
                         else [*self.messages, view])
        self.stream_head, self.stream, self._stream_blocks = EMPTY_HEAD, EMPTY_STREAM, []
        if message.run_id:
            (await self.get_state(RunViewState))._show_blocks(message.run_id, message.blocks, "Latest answer")

    # Conversation (background: the run streams while other events go on) ----------------------------

    @rx.event(background=True)
    @requires("chat")
    async def send(self, form: dict[str, Any]):
        text = str(form.get("message") or "")
        if not text.strip():
            return None
        return await self._converse(lambda service, chat_id: service.send(chat_id, text), new_chat=True)

    @rx.event(background=True)
    @requires("chat")
    async def continue_chat(self, payload: dict[str, Any]):
        parent = str(payload.get("message_id"))
        return await self._converse(lambda service, chat_id: service.send(chat_id, CONTINUE_TEXT, parent_id=parent))

    @rx.event(background=True)
    @requires("chat")
    async def retry(self, payload: dict[str, Any]):
        message_id = str(payload.get("message_id"))
        return await self._converse(lambda service, chat_id: service.retry(chat_id, message_id))

    @rx.event(background=True)
    @requires("chat")
    async def edit(self, payload: dict[str, Any]):
        message_id, text = str(payload.get("message_id")), str(payload.get("text") or "")
        return await self._converse(lambda service, chat_id: service.edit(chat_id, message_id, text))

    @rx.event(background=True)
    @requires("chat")
    async def approve(self, payload: dict[str, Any]):
        message_id, node_id = str(payload.get("message_id")), str(payload.get("node_id"))
        decision, note = str(payload.get("decision")), str(payload.get("note") or "").strip() or None
        return await self._converse(lambda service, chat_id: service.resume(
            chat_id, message_id, node_id, decision, note, who=_decider()))

    @rx.event
    @requires("chat")
    async def stop(self):
        """Stop: the run is cancelled (its provider stream closed); the answer keeps what arrived, as stopped."""
        self._stop_requested = True
        if self._run_id:
            await off_loop(chat_service().stop, self._run_id)  # a run live elsewhere: through the database

    async def _converse(self, updates_of: Callable[[ChatService, str], AsyncIterator[ChatUpdate]],
                        new_chat: bool = False):
        """Run one exchange: apply each update under the lock; a refusal becomes a toast, never a crash."""
        service = chat_service()
        async with self:
            if self.busy:
                return rx.toast.warning("An answer is still streaming.")
            if not still_checked(self.graph_id):
                return rx.toast.error("Nothing sent: the page changed meanwhile.")
            if not self.chat_id:
                if not new_chat:
                    return rx.toast.error("Open a chat first.")
                try:
                    created = await off_loop(service.create_chat, self.graph_id, user_id=_me())
                    self.chat_id, self.messages = created.id, []
                except _REFUSED as error:
                    return rx.toast.error(str(error))
            self.busy, self._stop_requested, self._run_id = True, False, ""
            await self._save_pending_edits()
            chat_id, graph_id = self.chat_id, self.graph_id
        try:
            async with aclosing(updates_of(service, chat_id)) as updates:
                async for update in updates:
                    async with self:
                        await self._apply(update, service)
                        stop = self._stop_requested and update.kind != "end"
                    if stop and update.run_id:
                        await off_loop(service.stop, update.run_id)
        except _REFUSED as error:
            return rx.toast.error(str(error))
        except Exception as error:  # noqa: BLE001 - the page must survive; the log has the trace
            log.exception("chat exchange failed")
            return rx.toast.error(f"The chat failed: {error}")
        finally:
            async with self:
                self.busy, self._run_id = False, ""
                if self.stream_head["status"] == "streaming":  # ended without its `end`: show what is stored
                    await self._open_chat(self.chat_id)
                panel_graph = (await self.get_state(RunHistoryState))._graph_id
        # The answer's run joins the editor's run panel, when it shows this graph: on the chat page the tab may
        # keep another graph there, of a workspace this page's check does not cover (its refresh was refused).
        return RunHistoryState.refresh if panel_graph == graph_id else None

    async def _save_pending_edits(self) -> None:
        """A run uses the stored graph: unsaved edits of this graph in the editor are saved first."""
        editor = await self.get_state(EditorState)
        await editor._save_pending_edits(self.graph_id)

    async def _apply(self, update: ChatUpdate, service: ChatService) -> None:
        """One update. The history (`messages`) changes only when an exchange starts, never per batch.

        Called under the lock: the history is read in a thread while the tab's other events wait, so updates
        apply in order and no page load changes the chat in between; other tabs and runs go on."""
        run_view = await self.get_state(RunViewState)
        if update.kind == "user":  # the previous answer, kept in the stream until now, joins the history
            history = await off_loop(service.history, self.chat_id)
            self.messages = branch_view(history, history.branch(update.message_id))
            self.stream_head, self.stream = EMPTY_HEAD, EMPTY_STREAM
            await self._refresh_chats()  # a first message names the chat
        elif update.kind == "start":
            history = await off_loop(service.history, self.chat_id)
            path = history.branch(update.message_id)
            self.messages = branch_view(history, path[:path.index(update.message_id)])
            view = message_view(history, update.message)
            self._run_id, self._seq = update.run_id or "", 0
            self._stream_blocks = copy.deepcopy(update.message.blocks)
            self.stream_head = {"message_id": update.message_id, "status": update.status,
                                "siblings": view["siblings"], "index": view["index"]}
            self.stream = {"seq": 0, "blocks": update.message.blocks, "ops": []}
            run_view._show_blocks(self._run_id, update.message.blocks, "Live run")
        elif update.kind == "patch":
            self._apply_ops(update.ops)
            run_view._apply_steps(update.ops)
        elif update.kind == "end":
            run_view._apply_steps(update.ops)
            self._run_id = ""
            if update.message_id == self.stream_head["message_id"]:  # the answer stays where it streamed
                self._apply_ops(update.ops)
                self.stream_head = {**self.stream_head, "status": update.status}
            else:  # an answer that never streamed (nothing could run): the branch through it
                history = await off_loop(service.history, self.chat_id)
                self.messages = branch_view(history, history.branch(update.message_id))
                self.stream_head, self.stream = EMPTY_HEAD, EMPTY_STREAM

    def _apply_ops(self, ops: list[dict[str, Any]]) -> None:
        self._seq += 1
        apply_patch(self._stream_blocks, ops)
        self.stream = {"seq": self._seq, "ops": wire_ops(ops)}


def _own_history(chat_id: str, graph_id: str, user_id: str | None) -> ChatHistory | None:
    """The chat's whole history, read in a thread; None when it is another graph's or someone else's chat."""
    chat = chat_service().get_chat(chat_id)
    if chat is None or chat.graph_id != graph_id or (chat.user_id is not None and chat.user_id != user_id):
        return None
    return chat_service().history(chat_id)


def _decider() -> str:
    """Who answers an approval: the signed-in caller's name (the access check resolved them)."""
    user = current().user
    return user.name if user else "someone"


acts_on_graph(ChatState, attribute="graph_id")
