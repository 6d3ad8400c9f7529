"""History's handlers take version numbers from the browser; a forged event sends anything there (text, a dict,
None, a number no database column holds). Each is refused with a toast, as a version that does not exist is,
never a crashed handler, and nothing of it is kept to crash a later handler (Compare, Name)."""

from __future__ import annotations

import pytest

from nodeflow_app.state import history_state
from nodeflow_app.state.history_state import HistoryState
from nodeflow_app.store.graphs import GraphStore

FORGED = ["abc", {"version": 1}, None, [1], 10**30, "9" * 30, "-1", "1e3"]


@pytest.fixture
def state(tmp_path, monkeypatch) -> HistoryState:
    store = GraphStore(f"sqlite:///{tmp_path / 'nodeflow.db'}")
    graph_id = store.create("Flow").id
    monkeypatch.setattr(history_state, "graph_store", lambda: store)

    async def editor_graph(self) -> str:  # EditorState's graph: no state tree here
        return graph_id

    async def freeze(self, frozen: bool) -> None:
        pass

    class Editor:
        _doc = store.get(graph_id)

        async def _save_pending(self) -> None:
            pass

        async def _reopen(self) -> None:
            pass

    async def get_state(self, cls):
        return Editor()

    monkeypatch.setattr(HistoryState, "_graph_id", editor_graph)
    monkeypatch.setattr(HistoryState, "_freeze_editor", freeze)
    monkeypatch.setattr(HistoryState, "get_state", get_state)
    yield HistoryState(_reflex_internal_init=True)
    store.engine.dispose()


def _refused(answer) -> bool:
    return "toast" in str(answer).lower() and "error" in str(answer).lower()


@pytest.mark.parametrize("forged", FORGED, ids=repr)
async def test_a_forged_version_is_refused_not_a_crash(state, forged):
    assert _refused(await state.open_version(forged))
    assert _refused(await state.open_run_version(f"v{forged}"))
    assert _refused(await state.restore(forged))
    assert state.viewing == 0 and state.canvas_view.get("mode", "") == ""
    state.ask_restore(forged)
    assert state.restoring == 0


@pytest.mark.parametrize("forged", FORGED, ids=repr)
async def test_a_forged_version_is_not_kept_for_compare_or_name(state, forged):
    state.toggle_pick("1")
    state.toggle_pick(forged)
    assert state.picked == ["1"]
    assert _refused(await state.compare())  # "tick two versions", not a crash on the forged one
    state.start_naming(forged, "label")
    assert state.naming == ""
    assert await state.save_name({"label": "x"}) is not None  # refused with its toast ("Not named: ...")


async def test_a_real_version_still_opens(state):
    assert await state.open_version("1") is None and state.viewing == 1
    assert await state.open_run_version("v1") is None and state.viewing == 1
    state.ask_restore(1)
    assert state.restoring == 1
