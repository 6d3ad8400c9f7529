"""Chat with a graph (SPEC 8): every message runs the graph from its Chat Start; the answer streams as block patches.

No reflex here. A UI's background handler iterates `send` / `edit` / `retry` / `resume`: each yields a
`user` update (the stored user message), a `start` (the assistant message and its run id), `patch`
batches (at most one per `interval`: the run is driven by a task of its own, so tokens keep arriving
while the consumer applies a batch) and an `end` (the last ops and the stored message). A consumer that
stops early (`aclose`, a cancelled task) stops the run: the answer is kept as `stopped`. Runs go through
the one runtime path (`start_run` with the RunStore hooks), so a paused run can be resumed by any process.
Each stream that relays another closes it with `aclosing`, so stopping happens at once, not at GC.
"""

from __future__ import annotations

import time
from contextlib import aclosing
from dataclasses import dataclass, field, replace
from typing import Any, AsyncIterator, Literal

from sqlalchemy import Engine

from nodeflow_app.chat.adapter import MessageBuilder
from nodeflow_app.chat.blocks import TextBlock
from nodeflow_app.chat.pump import Pump
from nodeflow_app.runs.caches import recording_cache
from nodeflow_app.runtime.engine import start_run
from nodeflow_app.runtime.graph import GraphInvalid
from nodeflow_app.runtime.run import Run, RunError
from nodeflow_app.store.chats import DEFAULT_TITLE, ChatHistory, ChatMessage, ChatNotFound, ChatStore, ChatSummary
from nodeflow_app.store.db import make_engine, process_wide
from nodeflow_app.store.graphs import GraphNotFound, GraphStore
from nodeflow_app.store.runs import RunNotFound, RunStore
from nodes._registry import default_registry
from nodeflow_app.contract import NodeEvent

CHAT_START = "chat-start"


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

    def __init__(self, engine_or_url: Engine | str | None = None, *, registry: Any = None,
                 interval: float = 0.05, save_interval: float = 1.0):
        self._owns_engine = not isinstance(engine_or_url, Engine)
        self.engine = engine_or_url if isinstance(engine_or_url, Engine) else make_engine(engine_or_url)
        self.chats, self.graphs, self.runs = ChatStore(self.engine), GraphStore(self.engine), RunStore(self.engine)
        self.registry = registry if registry is not None else default_registry()
        self.interval, self.save_interval = interval, save_interval
        self._active: dict[str, Run] = {}  # runs streaming in this process, by run id

    def close(self) -> None:
        self.runs.close()
        if self._owns_engine:
            self.engine.dispose()

    def recover(self) -> list[str]:
        """At startup: runs a dead process left running become interrupted, their answers failed (their ids)."""
        self.runs.mark_interrupted()
        return self.chats.mark_interrupted()

    # -- chats ---------------------------------------------------------------------------------------

    def create_chat(self, graph_id: str, title: str = DEFAULT_TITLE) -> ChatSummary:
        if self.graphs.get(graph_id) is None:
            raise GraphNotFound(f"no graph '{graph_id}' in the database")
        return self.chats.create_chat(graph_id, title)

    def list_chats(self, graph_id: str) -> list[ChatSummary]:
        return self.chats.list_chats(graph_id)

    def rename_chat(self, chat_id: str, title: str) -> None:
        self.chats.rename_chat(chat_id, title)

    def delete_chat(self, chat_id: str) -> None:
        self.chats.delete_chat(chat_id)

    def history(self, chat_id: str) -> ChatHistory:
        return self.chats.history(chat_id)

    # -- conversation --------------------------------------------------------------------------------

    async def send(self, chat_id: str, text: str, parent_id: str | None = None) -> AsyncIterator[ChatUpdate]:
        """Store `text` after `parent_id` (default: the end of the latest branch) and stream the answer."""
        history = self.chats.history(chat_id)
        if parent_id is None:
            parent_id = history.path[-1] if history.path else None
        elif parent_id not in history.messages:
            raise ChatNotFound(f"no message '{parent_id}' in chat '{chat_id}'")
        async with aclosing(self._ask(history.chat, text, parent_id)) as updates:
            async for update in updates:
                yield update

    async def edit(self, message_id: str, text: str) -> AsyncIterator[ChatUpdate]:
        """A new user message beside `message_id` (same parent), then its answer."""
        old = self._message(message_id)
        if old.role != "user":
            raise ChatError("only a user's message can be edited; retry an answer instead")
        async with aclosing(self._ask(self._chat(old.chat_id), text, old.parent_id)) as updates:
            async for update in updates:
                yield update

    async def retry(self, message_id: str) -> AsyncIterator[ChatUpdate]:
        """A new answer beside the assistant message `message_id` (or to the user message `message_id`)."""
        message = self._message(message_id)
        user = message if message.role == "user" else self._message(message.parent_id or "")
        async with aclosing(self._answer(self._chat(user.chat_id), user)) as updates:
            async for update in updates:
                yield update

    async def resume(self, chat_id: str, message_id: str, node_id: str, decision: str, note: str | None = None,
                     who: str | None = None) -> AsyncIterator[ChatUpdate]:
        """Answer the approval card of `node_id` in a paused answer; the run goes on in the same message."""
        message = self._message(message_id)
        if message.chat_id != chat_id or message.status != "paused" or message.run_id is None:
            raise ChatError(f"message '{message_id}' of chat '{chat_id}' is not waiting for an answer")
        card = next((b for b in message.blocks if b.get("type") == "approval" and b.get("node_id") == node_id
                     and b.get("decision") is None), None)
        if card is None:
            raise ChatError(f"node '{node_id}' is not waiting for an answer in message '{message_id}'")
        if decision not in card["options"]:
            raise ChatError(f"answer one of {', '.join(card['options'])}, not {decision!r}")
        if message.run_id in self._active:
            raise ChatError("this run is already going on")
        try:
            run = self.runs.load_run(message.run_id, self.registry)
        except RunNotFound as error:
            raise ChatError(f"the run of this answer is gone: {error}") from error
        builder = MessageBuilder(_names(run), blocks=message.blocks)
        payload = {"decision": decision, "note": note, "by": who, "at": time.time()}
        self.chats.update_message(message.id, status="streaming")
        start = ChatUpdate("start", message.id, "streaming", message=replace(message, status="streaming"),
                           run_id=run.run_id)
        async with aclosing(self._stream(start, run, run.resume(node_id, payload), builder)) as updates:
            async for update in updates:
                yield update

    def stop(self, run_id: str) -> bool:
        """Cancel a run streaming in this process (False if there is none); its answer keeps what arrived."""
        run = self._active.get(run_id)
        if run is None:
            return False
        run.cancel()
        return True

    # -- steps -----------------------------------------------------------------------------------------

    async def _ask(self, chat: ChatSummary, text: str, parent_id: str | None) -> AsyncIterator[ChatUpdate]:
        if not text.strip():
            raise ChatError("a message needs some text")
        user = self.chats.add_message(chat.id, "user", [TextBlock(text=text).model_dump()], parent_id=parent_id)
        if chat.title == DEFAULT_TITLE:
            self.chats.rename_chat(chat.id, text[:60])
        yield ChatUpdate("user", user.id, user.status, message=user)
        async with aclosing(self._answer(chat, user)) as updates:
            async for update in updates:
                yield update

    async def _answer(self, chat: ChatSummary, user: ChatMessage) -> AsyncIterator[ChatUpdate]:
        try:
            run = self._start(chat, user.text)
        except (GraphInvalid, ChatError) as error:  # the answer says why nothing ran
            builder = MessageBuilder()
            builder.finish("failed", str(error))
            failed = self.chats.add_message(chat.id, "assistant", builder.snapshot(), parent_id=user.id,
                                            status="failed")
            yield ChatUpdate("end", failed.id, failed.status, message=failed)
            return
        message = self.chats.add_message(chat.id, "assistant", [], parent_id=user.id, status="streaming",
                                         run_id=run.run_id)
        start = ChatUpdate("start", message.id, message.status, message=message, run_id=run.run_id)
        async with aclosing(self._stream(start, run, run.events(), MessageBuilder(_names(run)))) as updates:
            async for update in updates:
                yield update

    def _start(self, chat: ChatSummary, text: str) -> Run:
        stored = self.graphs.get(chat.graph_id)
        if stored is None:
            raise ChatError(f"the graph of this chat ('{chat.graph_id}') no longer exists")
        starts = [n for n in stored.graph.get("nodes", []) if n.get("type") == CHAT_START]
        if len(starts) != 1:
            raise ChatError("add a Chat Start node to chat with this graph" if not starts else
                            f"this graph has {len(starts)} Chat Start nodes; keep one to chat with it")
        payload = {"message": text, "chat_id": chat.id, "attachments": []}
        # Outputs go into the graph's cache for the editor's test runs; a chat answer itself always runs.
        return start_run(stored.graph, self.registry, trigger=starts[0]["id"], payload=payload,
                         hooks=self.runs.hooks(recording_cache(chat.graph_id)), chat_id=chat.id)

    async def _stream(self, start: ChatUpdate, run: Run, events: AsyncIterator[NodeEvent],
                      builder: MessageBuilder) -> AsyncIterator[ChatUpdate]:
        """Yield `start`, drive `events` into `builder` from a task, yield a patch at most every `interval`.

        The answer is persisted now and then, and whatever happens at the end (also when the consumer left
        right after `start`: the run is then stopped, never left behind).
        """
        message_id = start.message_id
        self._active[run.run_id] = run
        pump = Pump(run, events, builder)
        saved = time.monotonic()
        try:
            yield start
            async with aclosing(pump.batches(self.interval)) as batches:
                async for ops in batches:
                    yield ChatUpdate("patch", message_id, "streaming", ops=ops, run_id=run.run_id)
                    if time.monotonic() - saved >= self.save_interval:  # a crash loses at most this much
                        self.chats.update_message(message_id, blocks_json=builder.to_json())
                        saved = time.monotonic()
        except RunError as error:
            raise ChatError(str(error)) from error
        finally:
            await pump.stop()
            self._active.pop(run.run_id, None)
            status = builder.finish(run.status, run.error)
            self.chats.update_message(message_id, blocks_json=builder.to_json(), status=status)
        yield ChatUpdate("end", message_id, status, ops=builder.flush(), message=self._message(message_id),
                         run_id=run.run_id)

    def _chat(self, chat_id: str) -> ChatSummary:
        chat = self.chats.get_chat(chat_id)
        if chat is None:
            raise ChatNotFound(f"no chat '{chat_id}' in the database")
        return chat

    def _message(self, message_id: str) -> ChatMessage:
        message = self.chats.get_message(message_id)
        if message is None:
            raise ChatNotFound(f"no message '{message_id}' in the database")
        return message


# The process's ChatService on the app database, opened on first use (never at import time).
chat_service = process_wide(ChatService)


def _names(run: Run) -> dict[str, str]:
    return {node_id: pn.node.name for node_id, pn in run.plan.nodes.items()}
