"""The chat repository: chats of a graph and their messages, a tree (retry and edit add siblings).

Blocks are stored as one JSON list per message (nodeflow_app.chat.blocks); an answer being streamed is
rewritten as a whole when it pauses, ends, or now and then while it streams (the caller decides when).
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, Table, delete, insert, select, update

from nodeflow_app.store.db import create_all, make_engine
from nodeflow_app.store.encoding import json_text, storable_json
from nodeflow_app.store.models import ChatMessageRow, ChatRow, RunRow
from nodeflow_app.store.runs import waits_for_answer

CHATS: Table = ChatRow.__table__  # type: ignore[attr-defined]
MESSAGES: Table = ChatMessageRow.__table__  # type: ignore[attr-defined]
RUNS: Table = RunRow.__table__  # type: ignore[attr-defined]

TITLE_MAX = 120
DEFAULT_TITLE = "New chat"


class ChatNotFound(KeyError):
    """No chat or message with this id in the database."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "chat not found"


@dataclass(frozen=True)
class ChatSummary:
    id: str
    graph_id: str
    title: str
    created_at: float
    updated_at: float
    user_id: str | None = None  # whose chat


@dataclass(frozen=True)
class ChatMessage:
    id: str
    chat_id: str
    parent_id: str | None
    role: str  # user | assistant
    blocks: list[dict[str, Any]]
    status: str  # complete | streaming | stopped | failed | paused
    run_id: str | None
    created_at: float

    @property
    def text(self) -> str:
        """The message's text blocks joined (a user's message is one)."""
        return "".join(b.get("text", "") for b in self.blocks if b.get("type") == "text")


@dataclass(frozen=True)
class ChatHistory:
    """All messages of a chat; `children[parent]` in creation order; `path` is the latest branch, root first."""

    chat: ChatSummary
    messages: dict[str, ChatMessage]
    children: dict[str | None, list[str]]
    path: list[str]

    def siblings(self, message_id: str) -> list[str]:
        """The alternatives of a message (itself included): what the UI's arrows switch between."""
        return self.children.get(self.messages[message_id].parent_id, [])

    def branch(self, message_id: str) -> list[str]:
        """The path through `message_id`: its ancestors, it, then its latest descendants."""
        path = [message_id]
        while (parent := self.messages[path[-1]].parent_id) is not None:
            path.append(parent)
        path.reverse()
        while self.children.get(path[-1]):
            path.append(self.children[path[-1]][-1])
        return path


class ChatStore:
    """Creates, lists, renames and deletes chats; adds, updates and reads their messages."""

    def __init__(self, engine_or_url: Engine | str | None = None):
        self.engine: Engine = engine_or_url if isinstance(engine_or_url, Engine) else make_engine(engine_or_url)
        create_all(self.engine)
        self._clock_lock = threading.Lock()
        self._last_time = 0.0

    # -- chats -----------------------------------------------------------------------------------------

    def create_chat(self, graph_id: str, title: str = DEFAULT_TITLE, user_id: str | None = None) -> ChatSummary:
        now, chat_id = self._now(), uuid.uuid4().hex[:16]
        title = clean_title(title)
        with self.engine.begin() as conn:
            conn.execute(insert(CHATS).values(id=chat_id, graph_id=graph_id, title=title, created_at=now,
                                              updated_at=now, user_id=user_id))
        return ChatSummary(chat_id, graph_id, title, now, now, user_id)

    def get_chat(self, chat_id: str) -> ChatSummary | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(CHATS).where(CHATS.c.id == chat_id)).mappings().first()
        return None if row is None else _chat(row)

    def list_chats(self, graph_id: str, user_id: str | None = None) -> list[ChatSummary]:
        """A graph's chats (only `user_id`'s when given: each member sees their own), last active first."""
        query = select(CHATS).where(CHATS.c.graph_id == graph_id).order_by(CHATS.c.updated_at.desc(), CHATS.c.id)
        if user_id is not None:
            query = query.where(CHATS.c.user_id == user_id)
        with self.engine.connect() as conn:
            return [_chat(row) for row in conn.execute(query).mappings()]

    def rename_chat(self, chat_id: str, title: str) -> None:
        with self.engine.begin() as conn:
            if conn.execute(update(CHATS).where(CHATS.c.id == chat_id).values(title=clean_title(title))).rowcount == 0:
                raise _not_found("chat", chat_id)

    def delete_chat(self, chat_id: str) -> None:
        """Delete a chat and its messages (explicitly: SQLite enforces foreign keys only with the pragma on)."""
        with self.engine.begin() as conn:
            conn.execute(delete(MESSAGES).where(MESSAGES.c.chat_id == chat_id))
            if conn.execute(delete(CHATS).where(CHATS.c.id == chat_id)).rowcount == 0:
                raise _not_found("chat", chat_id)

    # -- messages --------------------------------------------------------------------------------------

    def add_message(self, chat_id: str, role: str, blocks: list[dict[str, Any]], *, parent_id: str | None,
                    status: str = "complete", run_id: str | None = None) -> ChatMessage:
        """A new message (the chat becomes the last active one)."""
        message = ChatMessage(uuid.uuid4().hex, chat_id, parent_id, role, blocks, status, run_id, self._now())
        with self.engine.begin() as conn:
            if conn.execute(update(CHATS).where(CHATS.c.id == chat_id).values(
                    updated_at=message.created_at)).rowcount == 0:
                raise _not_found("chat", chat_id)
            conn.execute(insert(MESSAGES).values(
                id=message.id, chat_id=chat_id, parent_id=parent_id, role=role, blocks_json=_dumps(blocks),
                status=status, run_id=run_id, created_at=message.created_at))
        return message

    def update_message(self, message_id: str, *, blocks_json: str | None = None, status: str | None = None) -> None:
        values: dict[str, Any] = {}
        if blocks_json is not None:
            values["blocks_json"] = storable_json(blocks_json)  # an answer may hold a lone surrogate
        if status is not None:
            values["status"] = status
        with self.engine.begin() as conn:
            conn.execute(update(MESSAGES).where(MESSAGES.c.id == message_id).values(values))

    def get_message(self, message_id: str) -> ChatMessage | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(MESSAGES).where(MESSAGES.c.id == message_id)).mappings().first()
        return None if row is None else _message(row)

    def message_of_run(self, run_id: str) -> ChatMessage | None:
        """The assistant message a run writes (a chat's answer), or None: the run was not started by a chat."""
        with self.engine.connect() as conn:
            row = conn.execute(select(MESSAGES).where(MESSAGES.c.run_id == run_id)).mappings().first()
        return None if row is None else _message(row)

    def open_runs(self, chat_id: str) -> list[str]:
        """The runs of a chat's answers that are not over: still streaming, or paused for an answer."""
        query = select(MESSAGES.c.run_id).where(MESSAGES.c.chat_id == chat_id, MESSAGES.c.run_id.is_not(None),
                                                MESSAGES.c.status.in_(("streaming", "paused")))
        with self.engine.connect() as conn:
            return list(conn.execute(query).scalars())

    def history(self, chat_id: str) -> ChatHistory:
        chat = self.get_chat(chat_id)
        if chat is None:
            raise _not_found("chat", chat_id)
        query = select(MESSAGES).where(MESSAGES.c.chat_id == chat_id).order_by(MESSAGES.c.created_at, MESSAGES.c.id)
        with self.engine.connect() as conn:
            messages = {row["id"]: _message(row) for row in conn.execute(query).mappings()}
        children: dict[str | None, list[str]] = {}
        for message in messages.values():
            children.setdefault(message.parent_id, []).append(message.id)
        history = ChatHistory(chat, messages, children, [])
        if messages:
            history.path.extend(history.branch(next(reversed(messages))))
        return history

    def mark_interrupted(self) -> list[str]:
        """Answers left `streaming` whose run no longer runs (its process is gone, see RunControl.recover).

        Each keeps the blocks saved while it streamed. One whose run still waits for an answer (a paused
        node) becomes `paused`, so its approval card can be answered; the others become `failed`.
        """
        running = select(RUNS.c.id).where(RUNS.c.status == "running")  # a run no longer on record counts as over
        waiting = waits_for_answer(MESSAGES.c.run_id).label("waiting")
        query = select(MESSAGES.c.id, MESSAGES.c.blocks_json, waiting).where(
            MESSAGES.c.status == "streaming", (MESSAGES.c.run_id.is_(None)) | MESSAGES.c.run_id.not_in(running))
        error = {"type": "error", "node_id": None, "node_name": None,
                 "message": "the server stopped before this answer was finished"}
        with self.engine.begin() as conn:
            rows = conn.execute(query).all()
            for message_id, blocks_json, is_waiting in rows:
                blocks = json.loads(blocks_json)
                conn.execute(update(MESSAGES).where(MESSAGES.c.id == message_id).values(
                    status="paused", blocks_json=_dumps(blocks)) if is_waiting else update(MESSAGES).where(
                    MESSAGES.c.id == message_id).values(status="failed", blocks_json=_dumps([*blocks, error])))
        return [row[0] for row in rows]

    def _now(self) -> float:
        """Strictly increasing per store, so siblings created in the same tick keep their order."""
        with self._clock_lock:
            self._last_time = max(time.time(), self._last_time + 1e-6)
            return self._last_time


def clean_title(title: Any) -> str:
    """A chat title: one trimmed line, at most TITLE_MAX characters (longer ones are cut), never empty."""
    text = " ".join(str(title or "").split())
    return (text[:TITLE_MAX - 1] + "…" if len(text) > TITLE_MAX else text) or DEFAULT_TITLE


def _chat(row: Any) -> ChatSummary:
    return ChatSummary(row["id"], row["graph_id"], row["title"], row["created_at"], row["updated_at"], row["user_id"])


def _message(row: Any) -> ChatMessage:
    return ChatMessage(row["id"], row["chat_id"], row["parent_id"], row["role"], json.loads(row["blocks_json"]),
                       row["status"], row["run_id"], row["created_at"])


def _dumps(blocks: list[dict[str, Any]]) -> str:
    return json_text(blocks)


def _not_found(kind: str, key: str) -> ChatNotFound:
    return ChatNotFound(f"no {kind} '{key}' in the database")
