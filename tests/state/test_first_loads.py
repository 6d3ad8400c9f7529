"""A list's first load that fails: the list's place says what failed (components/loading.py shows it with a
Retry, which sends the load again), instead of a spinner that never ends beside an error toast. Later loads that
fail keep the list and toast."""

from __future__ import annotations

import pytest

import nodeflow_app.nodeflow_app  # noqa: F401 - registers every state class of the app
from nodeflow_app.knowledge.workspace import workspace_store
from nodeflow_app.state import access
from nodeflow_app.state.first_load import first_load
from nodeflow_app.state.graph_list_state import GraphListState
from nodeflow_app.state.knowledge_state import KnowledgeState
from nodeflow_app.state.settings_state import SettingsState
from nodeflow_app.state.workspace_state import WorkspaceState

from .test_graph_list_off_loop import stores  # noqa: F401 - the fixture

WORKSPACE = "ws-1"


@pytest.fixture
def caller():
    token = access._current.set(access.Access(None, WORKSPACE, "owner"))
    yield
    access._current.reset(token)


async def test_the_knowledge_pages_first_load_failing_says_what_and_retry_loads(tmp_path, monkeypatch, caller):
    monkeypatch.setenv("NODEFLOW_DATA_DIR", str(tmp_path))
    store = workspace_store(WORKSPACE)
    store.create("faq")
    settings = store.root / "faq.json"
    kept = settings.read_text()
    settings.write_text("{not json")  # a collection's settings file broken on disk
    page = KnowledgeState(_reflex_internal_init=True)

    answer = await KnowledgeState.load.fn(page)
    assert answer is None  # no toast: the list's place says it
    assert not page.loaded
    assert page.load_error.startswith("Could not load the collections: "), page.load_error

    settings.write_text(kept)
    await KnowledgeState.load.fn(page)  # the Retry button
    assert page.loaded and page.load_error == "" and [c.name for c in page.collections] == ["faq"]

    settings.write_text("{not json")  # once listed, a failing refresh keeps the list and says it in a toast
    assert "Could not load the collections" in str(await KnowledgeState.load.fn(page))
    assert page.loaded and page.load_error == "" and [c.name for c in page.collections] == ["faq"]


async def test_the_graph_lists_first_load_failing_says_what_and_retry_loads(stores):  # noqa: F811
    graphs, *_ = stores
    with graphs.engine.begin() as connection:  # the database answers, without the graphs' table
        connection.exec_driver_sql("ALTER TABLE graph RENAME TO graph_away")
    page = GraphListState(_reflex_internal_init=True)

    assert await GraphListState.load.fn(page) is None
    assert not page.loaded and page.load_error.startswith("Could not load the graphs: "), page.load_error

    with graphs.engine.begin() as connection:
        connection.exec_driver_sql("ALTER TABLE graph_away RENAME TO graph")
    await GraphListState.load.fn(page)
    assert page.loaded and page.load_error == "" and [row.name for row in page.rows] == ["Orders"]


@pytest.mark.parametrize("state_cls", [WorkspaceState, SettingsState])
async def test_a_first_load_that_raises_is_kept_as_what_failed_a_later_one_raises(state_cls):
    """The workspace and credentials pages' loads raised into Reflex's generic toast, the spinner stayed."""
    page = state_cls(_reflex_internal_init=True)

    async def unreachable() -> None:
        raise ConnectionError("connection refused")

    await first_load(page, "the members", unreachable)
    assert page.load_error == "Could not load the members: connection refused" and not page.loaded

    async def answers() -> None:
        page.loaded = True

    await first_load(page, "the members", answers)
    assert page.loaded and page.load_error == ""
    with pytest.raises(ConnectionError):
        await first_load(page, "the members", unreachable)
