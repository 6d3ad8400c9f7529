"""A tab's states each keep a graph; the access check covers the one of the state whose event it checks. A handler
that reaches into another state (the run panel asking the editor to show a run's data, a webhook's test call
refreshing the run panel) must not act on the graph that other state keeps when it is another one: it can be a
graph its person no longer may open (removed from its workspace, or the graph moved to another), still kept by
the tab since they could."""

from __future__ import annotations

from typing import Any

from nodeflow_app.state import run_history_state, trigger_state
from nodeflow_app.state.editor_state import EditorState
from nodeflow_app.state.run_history_state import RunHistoryState
from nodeflow_app.state.trigger_state import TriggerState

OLD = "graph-they-lost"  # the graph the tab's editor (or run panel) kept from before
OWN = "graph-they-own"  # the graph of the page, which the check covered


class EditorTab:
    """The editor's part of a tab: the graph it keeps, a selected node, and what it read of that graph's runs."""

    _after_run = EditorState._after_run

    def __init__(self, graph_id: str):
        self._graph_id, self.selected_id, self.read = graph_id, "n1", []

    @property
    def _doc(self) -> object:
        return object()  # the room has the graph open

    async def _room(self):
        return None, None

    async def _load_run_data(self) -> None:
        self.read.append(self._graph_id)  # its last runs' outputs, shown in the inspector


class Runs:
    """The run service: each graph has one run."""

    def list_runs(self, graph_id: str, limit: int = 50) -> list[dict[str, Any]]:
        return [{"id": f"run-of-{graph_id}", "graph_id": graph_id, "status": "completed", "duration_ms": 1.0,
                 "graph_version": 1, "started_at": 0.0, "trigger_id": "n1", "error": None,
                 "parent_run_id": None, "started_by": "test"}]

    def get_run(self, run_id: str) -> None:
        return None

    def pinned(self, graph_id: str) -> dict[str, Any]:
        return {}


def run_panel(monkeypatch, graph_id: str, editor: EditorTab) -> RunHistoryState:
    monkeypatch.setattr(run_history_state, "run_service", lambda: Runs())

    async def get_state(self, cls):  # no state tree here
        assert cls is EditorState
        return editor

    monkeypatch.setattr(RunHistoryState, "get_state", get_state)
    panel = RunHistoryState(_reflex_internal_init=True)
    panel._graph_id = graph_id
    return panel


async def test_the_run_panels_refresh_reads_no_run_data_of_the_graph_the_editor_kept(monkeypatch):
    editor = EditorTab(OLD)
    await run_panel(monkeypatch, OWN, editor).refresh()
    assert editor.read == []
    same = EditorTab(OWN)
    await run_panel(monkeypatch, OWN, same).refresh()
    assert same.read == [OWN]  # the editor's own graph: the inspector shows what the run gave


class TriggerTab:
    """TriggerState in a background handler (`async with self` takes the tab's lock), on the page of OWN."""

    router = None
    listening_to = heard = heard_run = ""

    def __init__(self, states: dict[type, Any]):
        self.states = states

    async def __aenter__(self):
        return self

    async def __aexit__(self, *error) -> bool:
        return False

    async def get_state(self, cls):
        return self.states[cls]


class Call:
    called, payload, run_id = True, {"hello": 1}, "r-test"


class Hooks:
    """The trigger store: a test call came in at once."""

    def listen(self, *args) -> None:
        pass

    def test_listener(self, hook: str) -> Call:
        return Call()


class Editor:
    async def _save_pending_edits(self, graph_id: str) -> bool:
        return True


async def test_a_webhooks_test_call_shows_no_runs_of_the_graph_the_run_panel_kept(monkeypatch):
    panel = run_panel(monkeypatch, OLD, EditorTab(OLD))
    panel.panel_open = True
    monkeypatch.setattr(trigger_state.routes, "page_graph_id", lambda router: OWN)
    monkeypatch.setattr(trigger_state, "still_checked", lambda graph_id: graph_id == OWN)
    monkeypatch.setattr(trigger_state, "trigger_store", lambda: Hooks())
    tab = TriggerTab({EditorState: Editor(), RunHistoryState: panel})
    answer = await TriggerState.listen.fn(tab, "webhook")
    assert tab.heard_run == "r-test"
    assert panel.runs == []  # OLD's runs stayed out of the page
    # The panel refreshes through an event of its own, which the access check holds against the graph it keeps.
    assert answer is RunHistoryState.refresh


async def test_a_chat_answer_refreshes_the_run_panel_only_when_it_shows_the_chats_graph(monkeypatch):
    """On the chat page the tab's run panel may keep a graph of another workspace (an editor page opened
    before): the refresh each answer sent was refused by the access check, a 'Not found' toast per answer."""
    from nodeflow_app.state import chat_state
    from nodeflow_app.state.chat_state import ChatState

    class Service:
        async def send(self, chat_id: str, text: str):
            return
            yield  # an exchange with no update (nothing to stream here)

    async def locked(self):  # a background handler's `async with self`
        return self

    async def unlocked(self, *error) -> bool:
        return False

    async def no_pending_edits(self) -> None:
        pass

    panel = RunHistoryState(_reflex_internal_init=True)

    async def get_state(self, cls):
        assert cls is RunHistoryState
        return panel

    monkeypatch.setattr(chat_state, "chat_service", lambda: Service())
    monkeypatch.setattr(chat_state, "still_checked", lambda graph_id: graph_id == OWN)
    monkeypatch.setattr(ChatState, "__aenter__", locked, raising=False)
    monkeypatch.setattr(ChatState, "__aexit__", unlocked, raising=False)
    monkeypatch.setattr(ChatState, "_save_pending_edits", no_pending_edits)
    monkeypatch.setattr(ChatState, "get_state", get_state)
    chat = ChatState(_reflex_internal_init=True)
    chat.graph_id, chat.chat_id = OWN, "c1"
    for kept, refreshed in ((OLD, None), ("", None), (OWN, RunHistoryState.refresh)):
        panel._graph_id = kept
        assert await ChatState.send.fn(chat, {"message": "hello"}) is refreshed, kept
        assert not chat.busy
