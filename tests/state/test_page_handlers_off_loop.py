"""Page handlers that read or write the database, or format a whole value, do it in a thread, not on the event
loop every run and tab shares: saving a graph as a template, copying or moving it to another workspace, the
editor's active switch on load, the pin editor's text."""

from __future__ import annotations

import threading
import time

import nodeflow_app.nodeflow_app  # noqa: F401 - registers every state class of the app
from nodeflow_app.editor.document import GraphDocument
from nodeflow_app.runtime.graph import Graph
from nodeflow_app.state import access, graph_room, run_history_state, template_state, transfer_state
from nodeflow_app.state.graph_room import GraphRoom
from nodeflow_app.state.run_history_state import RunHistoryState
from nodeflow_app.state.template_state import TemplateSaveState
from nodeflow_app.state.transfer_state import TargetOption, TransferState
from tests.nodes.loop_ticks import loop_ticks


class Slow:
    """Stands for a store whose every call takes 0.3 s; `calls` records what was asked."""

    def __init__(self, answers: dict):
        self.answers, self.calls = answers, []

    def __getattr__(self, name: str):
        def call(*args, **kwargs):
            time.sleep(0.3)
            self.calls.append(name)
            return self.answers.get(name)
        return call


def _as(user_id: str, workspace: str):
    user = type("User", (), {"id": user_id, "name": "Ann"})()
    return access._current.set(access.Access(user, workspace, "owner"))


async def test_saving_as_a_template_leaves_the_loop_free(monkeypatch):
    graphs = Slow({"get": type("Stored", (), {"graph": {"nodes": []}})(), "workspace_of": "w1"})
    templates = Slow({"save": type("Template", (), {"name": "Mine"})()})
    monkeypatch.setattr(template_state, "graph_store", lambda: graphs)
    monkeypatch.setattr(template_state, "template_store", lambda: templates)
    state = TemplateSaveState(_reflex_internal_init=True)
    state._graph_id = "g1"
    token = _as("u1", "w1")
    try:
        async with loop_ticks() as ticks:
            await TemplateSaveState.event_handlers["save"].fn(state, {"name": "Mine"})
    finally:
        access._current.reset(token)
    assert ticks[0] >= 20, ticks
    assert (templates.calls, state.open) == (["save"], False)


async def test_copying_to_another_workspace_leaves_the_loop_free(monkeypatch):
    done = []

    def slow_transfer(*args):
        time.sleep(0.3)
        done.append(args[2:])

    monkeypatch.setattr(transfer_state, "transfer", slow_transfer)
    monkeypatch.setattr(transfer_state, "graph_store", lambda: None)
    monkeypatch.setattr(transfer_state, "account_store", lambda: None)
    state = TransferState(_reflex_internal_init=True)
    state._graph_id, state.mode, state.open = "g1", "move", True
    state.targets, state.target_id = [TargetOption("w2", "Team")], "w2"
    token = _as("u1", "w1")
    try:
        async with loop_ticks() as ticks:
            await TransferState.event_handlers["confirm"].fn(state)
    finally:
        access._current.reset(token)
    assert ticks[0] >= 10, ticks
    assert (done, state.open) == ([("u1", "g1", "w2", "move")], False)


async def test_the_editor_reads_whether_its_graph_is_active_off_the_loop(monkeypatch):
    """(On a page load the room rereads it: EditorState._room.)"""
    triggers = Slow({"active_version": 3})
    monkeypatch.setattr(graph_room, "trigger_store", lambda: triggers)
    room = GraphRoom(_reflex_internal_init=True)
    room._doc = GraphDocument.from_graph(Graph(id="g1", name="G"), history=False)
    async with loop_ticks() as ticks:
        await room._reread_live()
    assert ticks[0] >= 10, ticks
    assert (room.live_version, triggers.calls) == (3, ["active_version"])


async def test_the_pin_editor_formats_a_large_output_off_the_loop(monkeypatch):
    def slow_pretty(value, limit):
        time.sleep(0.3)
        return f"{len(value)} items on the loop" if threading.current_thread() is threading.main_thread() else (
            f"{len(value)} items")

    monkeypatch.setattr(run_history_state, "pretty", slow_pretty)
    monkeypatch.setattr(run_history_state, "run_service", lambda: Slow({"pinned": {}}))
    state = RunHistoryState(_reflex_internal_init=True)
    state._graph_id, state._outputs = "g1", {"n1": list(range(5))}
    async with loop_ticks() as ticks:
        await RunHistoryState.event_handlers["edit_pin"].fn(state, "n1")
    assert ticks[0] >= 30, ticks  # the pins read, then the text
    assert (state.pin_node_id, state.pin_text) == ("n1", "5 items")
