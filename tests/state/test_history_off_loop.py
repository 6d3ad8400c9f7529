"""The run history, History and chat states call the store in a thread: on the event loop, a big run, two graph
versions being diffed or a long chat held every other tab and every run (runs execute on the same loop)."""

from __future__ import annotations

import threading
import time
from typing import Any

from nodeflow_app.chat.service import ChatUpdate
from nodeflow_app.state import chat_state, history_state, run_history_state
from nodeflow_app.state.chat_state import ChatState
from nodeflow_app.state.history_state import HistoryState
from nodeflow_app.state.run_history_state import RunHistoryState
from nodeflow_app.state.run_view_state import RunViewState
from nodeflow_app.store.chats import ChatHistory, ChatMessage, ChatSummary
from nodeflow_app.store.graphs import StoredGraph, VersionSummary
from tests.nodes.loop_ticks import loop_ticks

SLOW = 0.3  # seconds a slow store call takes here; a loop that ticks every 10 ms meanwhile was not blocked


class Slow:
    """A fake store whose calls named in `slow_calls` take SLOW seconds."""

    def __init__(self, *slow_calls: str):
        self.slow_calls, self.calls, self.on_the_loop = slow_calls, [], []

    def answer(self, call: str, value: Any) -> Any:
        self.calls.append(call)
        if threading.current_thread() is threading.main_thread():  # where the event loop runs here
            self.on_the_loop.append(call)
        if call in self.slow_calls:
            time.sleep(SLOW)
        return value


RUN = {"id": "r1", "graph_id": "g1", "status": "completed", "duration_ms": 12.0, "graph_version": 3,
       "started_at": time.time(), "trigger_id": "n1", "error": None, "parent_run_id": None,
       "nodes": [{"node_id": "n1", "node_name": "Start", "node_type": "manual-trigger", "status": "completed",
                  "duration_ms": 1.0, "cached": False, "inputs": {}, "outputs": {"out": 1}, "error": None}]}


class Runs(Slow):
    """The run service, with one run of graph g1."""

    def get_run(self, run_id: str) -> dict[str, Any] | None:
        return self.answer("get_run", RUN if run_id == RUN["id"] else None)

    def list_runs(self, graph_id: str) -> list[dict[str, Any]]:
        return self.answer("list_runs", [RUN])

    def child_links(self, run_id: str) -> dict[str, dict[str, str]]:
        return {}

    def parent_link(self, run: dict[str, Any]) -> dict[str, str]:
        return {}

    def stop(self, run_id: str) -> bool:
        return self.answer("stop", False)

    def pinned(self, graph_id: str) -> dict[str, Any]:
        return {}

    def unpin(self, graph_id: str, node_id: str) -> None:
        self.answer("unpin", None)


def run_history(monkeypatch, runs: Runs) -> RunHistoryState:
    monkeypatch.setattr(run_history_state, "run_service", lambda: runs)
    state = RunHistoryState(_reflex_internal_init=True)
    state._graph_id = "g1"
    return state


async def test_choosing_a_run_reads_and_formats_it_off_the_event_loop(monkeypatch):
    state = run_history(monkeypatch, Runs("get_run"))
    async with loop_ticks() as ticks:
        await state.select_run("r1")
    assert ticks[0] >= 10, ticks
    assert state.run_id == "r1" and [n["name"] for n in state.nodes] == ["Start"] and state._steps[0]["node_id"] == "n1"
    await state.select_run("gone")
    assert state.run_id == "" and state.nodes == [] and state.run == {}


async def test_the_run_list_is_read_off_the_event_loop(monkeypatch):
    state = run_history(monkeypatch, Runs("list_runs"))
    async with loop_ticks() as ticks:
        await state.toggle_panel()
    assert ticks[0] >= 10, ticks
    assert [r["id"] for r in state.runs] == ["r1"]


async def test_stop_and_unpin_call_the_store_off_the_event_loop(monkeypatch):
    """Stop flushes the run store and reads the run's owner (and may publish to Redis); unpinning is a write."""
    state = run_history(monkeypatch, Runs("stop", "unpin"))
    state.run_id = "r1"
    async with loop_ticks() as ticks:
        await state.stop_run()
    assert ticks[0] >= 10, ticks
    async with loop_ticks() as ticks:
        await state.unpin("n1")
    assert ticks[0] >= 10, ticks


def graph(*names: str) -> dict[str, Any]:
    return {"id": "g1", "name": "G", "edges": [], "nodes": [
        {"id": name, "type": "manual-trigger", "name": name, "position": {"x": 0, "y": 0}, "parameters": {}}
        for name in names]}


class Graphs(Slow):
    """The graph store, with versions 1 (node a) and 2 (nodes a and b) of graph g1."""

    def get_version(self, graph_id: str, version: int) -> StoredGraph | None:
        names = {1: ("a",), 2: ("a", "b")}.get(version)
        return self.answer("get_version", StoredGraph(graph_id, "G", version, graph(*names), 0.0) if names else None)

    def versions(self, graph_id: str) -> list[VersionSummary]:
        return self.answer("versions", [VersionSummary(2, 2, time.time(), "saved"), VersionSummary(1, 1, 0.0, "created")])

    def run_counts(self, graph_id: str) -> dict[int, int]:
        return {2: 1}

    def restore(self, graph_id: str, version: int, author: str | None = None, author_name: str = "") -> int:
        return self.answer("restore", 3)

    def label_version(self, graph_id: str, version: int, label: str) -> str:
        return self.answer("label_version", label)


def history(monkeypatch, graphs: Graphs) -> HistoryState:
    monkeypatch.setattr(history_state, "graph_store", lambda: graphs)

    async def editor_graph(self) -> str:  # EditorState's graph: no state tree here
        return "g1"

    async def freeze(self, frozen: bool) -> None:
        pass

    monkeypatch.setattr(HistoryState, "_graph_id", editor_graph)
    monkeypatch.setattr(HistoryState, "_freeze_editor", freeze)
    return HistoryState(_reflex_internal_init=True)


async def test_comparing_two_versions_reads_and_diffs_them_off_the_event_loop(monkeypatch):
    state = history(monkeypatch, Graphs("get_version"))
    state.picked = ["2", "1"]
    async with loop_ticks() as ticks:
        assert await state.compare() is None
    assert ticks[0] >= 20, ticks  # both versions read in the thread
    assert state.diff_title == "v1 → v2" and state.canvas_view["mode"] == "diff"
    assert [(r["name"], r["status"]) for r in state.diff_rows if r["kind"] == "node"] == [("b", "added")]


async def test_the_version_list_is_read_off_the_event_loop(monkeypatch):
    state = history(monkeypatch, Graphs("versions"))
    state.panel_open = True
    async with loop_ticks() as ticks:
        await state.refresh()
    assert ticks[0] >= 10, ticks
    assert [e["version"] for e in state.entries] == ["2", "1"] and state.entries[0]["runs"] == "1 run"


async def test_opening_a_version_reads_it_off_the_event_loop(monkeypatch):
    state = history(monkeypatch, Graphs("get_version"))
    async with loop_ticks() as ticks:
        assert await state.open_version("2") is None
    assert ticks[0] >= 10, ticks
    assert state.viewing == 2 and [n["id"] for n in state.canvas_view["graph"]["nodes"]] == ["a", "b"]


class Editor:
    """EditorState as History's restore uses it."""

    _doc = StoredGraph("g1", "G", 2, graph("a", "b"), 0.0)

    async def _save_pending(self) -> None:
        pass

    async def _reopen(self) -> None:
        pass


async def test_restoring_and_naming_a_version_write_off_the_event_loop(monkeypatch):
    state = history(monkeypatch, Graphs("restore", "label_version"))

    async def get_state(self, cls):
        return Editor()

    monkeypatch.setattr(HistoryState, "get_state", get_state)
    async with loop_ticks() as ticks:
        await state.restore("1")
    assert ticks[0] >= 10, ticks
    state.naming = "2"
    async with loop_ticks() as ticks:
        assert await state.save_name({"label": "before the rewrite"}) is None
    assert ticks[0] >= 10, ticks
    assert state.naming == ""


CHAT = ChatSummary("c1", "g1", "Hello", 0.0, 0.0)


def message(message_id: str, parent_id: str | None) -> ChatMessage:
    role = "user" if message_id.startswith("u") else "assistant"
    return ChatMessage(message_id, "c1", parent_id, role, [{"type": "text", "text": message_id}], "complete", None, 0.0)


class Chats(Slow):
    """The chat service, with chat c1: u1 <- a1 <- u2 (each the parent of the next)."""

    def __init__(self, *slow_calls: str):
        super().__init__(*slow_calls)
        self.stored = [message("u1", None), message("a1", "u1"), message("u2", "a1")]

    def history(self, chat_id: str) -> ChatHistory:
        messages = {m.id: m for m in self.stored}
        children: dict[str | None, list[str]] = {}
        for m in self.stored:
            children.setdefault(m.parent_id, []).append(m.id)
        return self.answer("history", ChatHistory(CHAT, messages, children, list(messages)))

    def get_chat(self, chat_id: str) -> ChatSummary | None:
        return self.answer("get_chat", CHAT if chat_id == CHAT.id else None)

    def list_chats(self, graph_id: str, user_id: str | None = None) -> list[ChatSummary]:
        return self.answer("list_chats", [CHAT])

    def create_chat(self, graph_id: str, user_id: str | None = None) -> ChatSummary:
        return self.answer("create_chat", CHAT)  # (reads the graph to check it exists)

    def stop(self, run_id: str) -> bool:
        return self.answer("stop", True)


def chat(monkeypatch, chats: Chats) -> ChatState:
    monkeypatch.setattr(chat_state, "chat_service", lambda: chats)
    run_view = RunViewState(_reflex_internal_init=True)

    async def get_state(self, cls):  # no state tree here
        assert cls is RunViewState
        return run_view

    monkeypatch.setattr(ChatState, "get_state", get_state)
    state = ChatState(_reflex_internal_init=True)
    state.graph_id, state.chat_id = "g1", "c1"
    return state


async def test_applying_a_new_exchange_reads_the_chat_off_the_event_loop(monkeypatch):
    """A sent message (`user`) and a retried answer (`start`) show the branch through them: the whole chat is read."""
    chats = Chats("history", "list_chats")
    state = chat(monkeypatch, chats)
    async with loop_ticks() as ticks:
        await state._apply(ChatUpdate("user", "u2", "complete", message=chats.stored[2]), chats)
    assert ticks[0] >= 20, ticks  # the history, then the chat list (a first message names the chat)
    assert [m["id"] for m in state.messages] == ["u1", "a1", "u2"] and state.chats[0]["id"] == "c1"
    chats.stored.append(message("a2", "u2"))
    async with loop_ticks() as ticks:
        await state._apply(ChatUpdate("start", "a2", "streaming", message=chats.stored[3], run_id="r1"), chats)
    assert ticks[0] >= 10, ticks
    assert [m["id"] for m in state.messages] == ["u1", "a1", "u2"]
    assert state.stream_head == {"message_id": "a2", "status": "streaming", "siblings": ["a2"], "index": 0}
    assert chats.on_the_loop == []


async def test_opening_a_chat_and_switching_branches_read_it_off_the_event_loop(monkeypatch):
    state = chat(monkeypatch, Chats("history"))
    async with loop_ticks() as ticks:
        assert await state.select_chat("c1") is None
    assert ticks[0] >= 10, ticks
    assert [m["id"] for m in state.messages] == ["u1", "a1", "u2"]
    async with loop_ticks() as ticks:
        assert await state.show_branch({"message_id": "a1"}) is None
    assert ticks[0] >= 10, ticks
    assert [m["id"] for m in state.messages] == ["u1", "a1", "u2"]


async def test_a_new_chat_and_stop_call_the_store_off_the_event_loop(monkeypatch):
    state = chat(monkeypatch, Chats("create_chat", "stop"))
    state.chat_id = ""
    async with loop_ticks() as ticks:
        assert await state.new_chat() is None
    assert ticks[0] >= 10, ticks
    assert state.chat_id == "c1" and [m["id"] for m in state.messages] == ["u1", "a1", "u2"]
    state._run_id = "r1"
    async with loop_ticks() as ticks:
        await state.stop()
    assert ticks[0] >= 10, ticks
    assert state._stop_requested
