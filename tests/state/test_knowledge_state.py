"""The Knowledge page's store calls: in a thread, their failures explained."""

from __future__ import annotations

import time

import pytest

from nodeflow_app.contract import NodeError
from nodeflow_app.state.knowledge_state import _call, _Failed
from tests.nodes.loop_ticks import loop_ticks


async def test_a_store_call_runs_off_the_event_loop():
    """LanceDB reads files, and the first call of a process imports it (~1.8 s): every page and run waited."""
    async with loop_ticks() as ticks:
        assert await _call("list", lambda: time.sleep(0.3) or ["faq"]) == ["faq"]
    assert ticks[0] >= 10, ticks


async def test_a_failing_store_call_is_a_message():
    def refused():
        raise NodeError("no knowledge collection named 'faq'")

    with pytest.raises(_Failed, match="^no knowledge collection named 'faq'$"):
        await _call("read the chunks", refused)
    with pytest.raises(_Failed, match="^Could not read the chunks: disk full$"):
        await _call("read the chunks", lambda: (_ for _ in ()).throw(OSError("disk full")))


async def test_a_search_longer_than_the_cap_is_refused_before_it_is_embedded(monkeypatch):
    """Any viewer may search: a 1 MB query was embedded and searched whole."""
    import nodeflow_app.nodeflow_app  # noqa: F401 - registers every state class of the app
    from nodeflow_app.state import access, knowledge_state
    from nodeflow_app.state.knowledge_state import KnowledgeState

    searched = []

    async def search(store, collection, query, **options):
        searched.append(query)
        return []

    monkeypatch.setattr(knowledge_state, "search", search)
    monkeypatch.setattr(knowledge_state, "workspace_store", lambda workspace: None)
    token = access._current.set(access.Access(None, "ws-1", "viewer"))
    try:
        state = KnowledgeState(_reflex_internal_init=True)
        state.selected = "faq"
        run_search = KnowledgeState.event_handlers["run_search"].fn
        refused = await run_search(state, {"query": "x" * 1_000_000})
        assert "A search is at most 2,000 characters; this one has 1,000,000" in str(refused)
        assert searched == [] and state.query == ""
        await run_search(state, {"query": "y" * 2_000})  # at the cap: searched
        assert searched == ["y" * 2_000] and state.searched
    finally:
        access._current.reset(token)
