"""Chat with a graph (SPEC 8): every message runs the graph from its Chat Start; the answer streams as block patches.

No reflex here. A UI's background handler iterates `send` / `edit` / `retry` / `resume`: each yields a
`user` update (the stored user message), a `start` (the assistant message and its run id), `patch`
batches (at most one per `interval`: the run is driven by a task of its own, so tokens keep arriving
while the consumer applies a batch) and an `end` (the last ops and the stored message). A consumer that
stops early (`aclose`, a cancelled task) stops the run: the answer is kept as `stopped`. Runs start
through the process's RunLauncher (started by `chat`, outputs recorded for test runs, the chat's id in
the run's context), so any process can stop them or resume a paused one. The answer is saved every
`save_interval` seconds while it streams (a crash loses at most that much). Database calls run in a
worker thread, never on the event loop. Each stream that relays another closes it with `aclosing`, so
stopping happens at once, not at GC.
"""

from __future__ import annotations

import asyncio
import time
from contextlib import aclosing, suppress
from dataclasses import dataclass, field, replace
from typing import Any, AsyncIterator, Literal

from sqlalchemy import Engine

from nodeflow_app.chat.adapter import MessageBuilder
from nodeflow_app.chat.answer import answer_nodes
from nodeflow_app.chat.blocks import TextBlock
from nodeflow_app.runs.pump import Pump
from nodeflow_app.contract import CONVERSATION, NodeEvent
from nodeflow_app.runs.graph_runner import final_nodes, final_output
from nodeflow_app.runs.launcher import AnswerRefused, RunBusy, RunLauncher, run_launcher
from nodeflow_app.runtime.graph import GraphInvalid
from nodeflow_app.runtime.run import Run, RunError
from nodeflow_app.store.chats import DEFAULT_TITLE, ChatHistory, ChatMessage, ChatNotFound, ChatStore, ChatSummary
from nodeflow_app.store.db import process_wide
from nodeflow_app.store.graphs import GraphNotFound, GraphStore

STARTED_BY = "chat"  # the entry point: a Chat Start's definition lists it in `started_by`


def starts_chats(registry: Any, node_type: str) -> bool:
    """Whether chat messages start runs at a node of `node_type` (its definition lists `chat` in started_by)."""
    definition = registry.definition(node_type)
    return definition is not None and STARTED_BY in definition.started_by


class ChatError(Exception):
    """A request the chat refuses (nothing to resume, not a user's message, ...); the message says why."""


@dataclass(frozen=True)
class ChatUpdate:
    """One thing for the UI to apply. `ops` are MessageBuilder patch operations on the assistant message."""

    kind: Literal["user", "start", "patch", "end"]
    message_id: str
    status: str
    ops: list[dict[str, Any]] = field(default_factory=list)
    message: ChatMessage | None = None  # on user, start and end
    run_id: str | None = None


class ChatService:
    """Chats of graphs and the runs that answer their messages."""

    def __init__(self, engine_or_url: Engine | str | None = None, *, launcher: RunLauncher | None = None,
                 interval: float = 0.05, save_interval: float = 1.0, **launcher_options: Any):
        self._owns_launcher = launcher is None
        self.launcher = launcher if launcher is not None else RunLauncher(engine_or_url, **launcher_options)
        self.engine = self.launcher.engine
        self.chats, self.graphs, self.runs = ChatStore(self.engine), GraphStore(self.engine), self.launcher.store
        self.registry = self.launcher.registry
        self.interval, self.save_interval = interval, save_interval

    def close(self) -> None:
        if self._owns_launcher:
            self.launcher.close()

    def recover(self) -> list[str]:
        """At startup: runs whose process is gone become interrupted; the answers they were streaming are
        kept as they were saved, `paused` when their run still waits for an answer, else `failed` (their ids)."""
        self.launcher.recover()
        return self.chats.mark_interrupted()

    # -- chats ---------------------------------------------------------------------------------------

    def create_chat(self, graph_id: str, title: str = DEFAULT_TITLE, user_id: str | None = None) -> ChatSummary:
        if self.graphs.get(graph_id) is None:
            raise GraphNotFound(f"no graph '{graph_id}' in the database")
        return self.chats.create_chat(graph_id, title, user_id)

    def list_chats(self, graph_id: str, user_id: str | None = None) -> list[ChatSummary]:
        return self.chats.list_chats(graph_id, user_id)

    def get_chat(self, chat_id: str) -> ChatSummary | None:
        return self.chats.get_chat(chat_id)

    def rename_chat(self, chat_id: str, title: str) -> None:
        self.chats.rename_chat(chat_id, title)

    def delete_chat(self, chat_id: str) -> None:
        """Delete a chat and stop the runs its answers still stream or wait on: a paused answer's run would
        otherwise go on when its Wait is due, or stay answerable, for a conversation nobody can see any more."""
        for run_id in self.chats.open_runs(chat_id):
            self.launcher.stop(run_id)
        self.chats.delete_chat(chat_id)

    def history(self, chat_id: str) -> ChatHistory:
        return self.chats.history(chat_id)

    # -- conversation --------------------------------------------------------------------------------

    async def send(self, chat_id: str, text: str, parent_id: str | None = None) -> AsyncIterator[ChatUpdate]:
        """Store `text` after `parent_id` (default: the end of the latest branch) and stream the answer."""
        history = await asyncio.to_thread(self.chats.history, chat_id)  # the whole chat: off the event loop
        if parent_id is None:
            parent_id = history.path[-1] if history.path else None
        elif parent_id not in history.messages:
            raise ChatNotFound(f"no message '{parent_id}' in chat '{chat_id}'")
        async with aclosing(self._ask(history.chat, text, parent_id)) as updates:
            async for update in updates:
                yield update

    async def edit(self, chat_id: str, message_id: str, text: str) -> AsyncIterator[ChatUpdate]:
        """A new user message beside `message_id` (same parent), then its answer."""
        old = await asyncio.to_thread(self._message, message_id, chat_id)
        if old.role != "user":
            raise ChatError("only a user's message can be edited; retry an answer instead")
        chat = await asyncio.to_thread(self._chat, old.chat_id)
        async with aclosing(self._ask(chat, text, old.parent_id)) as updates:
            async for update in updates:
                yield update

    async def retry(self, chat_id: str, message_id: str) -> AsyncIterator[ChatUpdate]:
        """A new answer beside the assistant message `message_id` (or to the user message `message_id`)."""
        user, chat = await asyncio.to_thread(self._asked, message_id, chat_id)
        async with aclosing(self._answer(chat, user)) as updates:
            async for update in updates:
                yield update

    async def resume(self, chat_id: str, message_id: str, node_id: str, decision: str, note: str | None = None,
                     who: str | None = None) -> AsyncIterator[ChatUpdate]:
        """Answer the approval card of `node_id` in a paused answer; the run goes on in the same message."""
        message = await asyncio.to_thread(self._message, message_id)
        if message.chat_id != chat_id or message.status != "paused" or message.run_id is None:
            raise ChatError(f"message '{message_id}' of chat '{chat_id}' is not waiting for an answer")
        card = next((b for b in message.blocks if b.get("type") == "approval" and b.get("node_id") == node_id
                     and b.get("decision") is None), None)
        if card is None:
            raise ChatError(f"node '{node_id}' is not waiting for an answer in message '{message_id}'")
        if decision not in card["options"]:
            raise ChatError(f"answer one of {', '.join(card['options'])}, not {decision!r}")
        payload = {"decision": decision, "note": note, "by": who, "at": time.time()}
        try:
            # The card is checked against the run's record, not only the message: answered elsewhere (`nodeflow
            # resume`, a crash before the message was saved), the run is refused and given back, not left claimed.
            run = await asyncio.to_thread(self.launcher.restore, message.run_id, node_id, payload)
        except AnswerRefused as error:
            raise ChatError(str(error)) from error
        except RunBusy as error:
            raise ChatError(f"this run cannot take an answer now: {error}") from error
        except LookupError as error:
            raise ChatError(f"the run of this answer is gone: {error}") from error
        builder = MessageBuilder(_names(run), blocks=message.blocks, answers=answer_nodes(run.plan))
        await asyncio.to_thread(self.chats.update_message, message.id, status="streaming")
        start = ChatUpdate("start", message.id, "streaming", message=replace(message, status="streaming"),
                           run_id=run.run_id)
        async with aclosing(self._stream(start, run, run.resume(node_id, payload), builder)) as updates:
            async for update in updates:
                yield update

    def stop(self, run_id: str) -> bool:
        """Stop a run, in this process or another (False if it is not going on); its answer keeps what arrived."""
        return self.launcher.stop(run_id)

    # -- steps -----------------------------------------------------------------------------------------

    async def _ask(self, chat: ChatSummary, text: str, parent_id: str | None) -> AsyncIterator[ChatUpdate]:
        if not text.strip():
            raise ChatError("a message needs some text")
        user = await asyncio.to_thread(self.chats.add_message, chat.id, "user", [TextBlock(text=text).model_dump()],
                                       parent_id=parent_id)
        if chat.title == DEFAULT_TITLE:
            await asyncio.to_thread(self.chats.rename_chat, chat.id, text[:60])
        yield ChatUpdate("user", user.id, user.status, message=user)
        async with aclosing(self._answer(chat, user)) as updates:
            async for update in updates:
                yield update

    async def _answer(self, chat: ChatSummary, user: ChatMessage) -> AsyncIterator[ChatUpdate]:
        try:
            run = await asyncio.to_thread(self._start, chat, user.text)
        except (GraphInvalid, ChatError) as error:  # the answer says why nothing ran
            builder = MessageBuilder()
            builder.finish("failed", _reason(error))
            failed = await asyncio.to_thread(self.chats.add_message, chat.id, "assistant", builder.snapshot(),
                                             parent_id=user.id, status="failed")
            yield ChatUpdate("end", failed.id, failed.status, message=failed)
            return
        message = await asyncio.to_thread(self.chats.add_message, chat.id, "assistant", [], parent_id=user.id,
                                          status="streaming", run_id=run.run_id)
        start = ChatUpdate("start", message.id, message.status, message=message, run_id=run.run_id)
        builder = MessageBuilder(_names(run), answers=answer_nodes(run.plan))
        async with aclosing(self._stream(start, run, run.events(), builder)) as updates:
            async for update in updates:
                yield update

    def _start(self, chat: ChatSummary, text: str) -> Run:
        stored = self.graphs.get(chat.graph_id)
        if stored is None:
            raise ChatError(f"the graph of this chat ('{chat.graph_id}') no longer exists")
        plan = self.launcher.plan(stored.graph)
        # The message text is the payload; the chat's trigger turns it into its own payload shape.
        # Outputs go into the graph's cache for the editor's test runs; a chat answer itself always runs.
        return self.launcher.start(plan, started_by=STARTED_BY, trigger=self.launcher.entry_trigger(plan, STARTED_BY),
                                   payload=text, cache="record", graph_id=chat.graph_id,
                                   context={CONVERSATION: chat.id})

    async def _stream(self, start: ChatUpdate, run: Run, events: AsyncIterator[NodeEvent],
                      builder: MessageBuilder) -> AsyncIterator[ChatUpdate]:
        """Yield `start`, drive `events` into `builder` from a task, yield a patch at most every `interval`.

        The answer is persisted now and then, and whatever happens at the end (also when the consumer left
        right after `start`: the run is then stopped, never left behind).
        """
        message_id = start.message_id
        pump = Pump(run, events, builder)
        autosave = asyncio.create_task(self._autosave(message_id, builder))
        try:
            yield start
            async with aclosing(pump.batches(self.interval)) as batches:
                async for ops in batches:
                    yield ChatUpdate("patch", message_id, "streaming", ops=ops, run_id=run.run_id)
        except RunError as error:
            raise ChatError(str(error)) from error
        finally:
            autosave.cancel()
            with suppress(asyncio.CancelledError):
                await autosave
            await pump.stop()
            if run.status == "completed":  # unless an answering node streamed it, the answer is the final value
                ends = final_nodes(run)
                builder.answer_with(final_output(run), ends[0] if len(ends) == 1 else None)
            status = builder.finish(run.status, run.error)
            await asyncio.to_thread(self.chats.update_message, message_id, blocks_json=builder.to_json(),
                                    status=status)
        message = await asyncio.to_thread(self._message, message_id)
        yield ChatUpdate("end", message_id, status, ops=builder.flush(), message=message, run_id=run.run_id)

    async def _autosave(self, message_id: str, builder: MessageBuilder) -> None:
        """Save the answer every `save_interval` while it changes, also when no batch is sent (a quiet stream),
        so a crash loses at most that much and never leaves the answer empty."""
        saved = builder.to_json()
        while True:
            await asyncio.sleep(self.save_interval)
            current = builder.to_json()
            if current != saved:
                await asyncio.to_thread(self.chats.update_message, message_id, blocks_json=current)
                saved = current

    def _chat(self, chat_id: str) -> ChatSummary:
        chat = self.chats.get_chat(chat_id)
        if chat is None:
            raise ChatNotFound(f"no chat '{chat_id}' in the database")
        return chat

    def _asked(self, message_id: str, chat_id: str) -> tuple[ChatMessage, ChatSummary]:
        """The user message `message_id` is (or answers), and its chat."""
        message = self._message(message_id, chat_id)
        user = message if message.role == "user" else self._message(message.parent_id or "", chat_id)
        return user, self._chat(user.chat_id)

    def _message(self, message_id: str, chat_id: str | None = None) -> ChatMessage:
        """The message; with `chat_id`, only if it is one of that chat's (ids come from the browser)."""
        message = self.chats.get_message(message_id)
        if message is None or (chat_id is not None and message.chat_id != chat_id):
            raise ChatNotFound(f"no message '{message_id}' in " + (f"chat '{chat_id}'" if chat_id else "the database"))
        return message


def _process_chat_service() -> ChatService:
    return ChatService(launcher=run_launcher())


# The process's ChatService (on the process's launcher), opened on first use (never at import time).
chat_service = process_wide(_process_chat_service)


def _reason(error: Exception) -> str:
    if isinstance(error, GraphInvalid):
        return "; ".join(issue.message for issue in error.issues)
    return str(error)


def _names(run: Run) -> dict[str, str]:
    return {node_id: pn.node.name for node_id, pn in run.plan.nodes.items()}
