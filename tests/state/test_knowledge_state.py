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
