"""Cancelling a run mid-stream stops the model call: the node is cancelled and the HTTP stream is abandoned.

    Chat Start --> Agent | LLM Completion     (run.cancel() after the first token)
"""

from __future__ import annotations

import asyncio

import pytest

from nodeflow_app.contract import CONVERSATION
from nodeflow_app.runtime.engine import start_run
from nodes._registry import default_registry
from tests.llm.fake_openai import text
from tests.llm.graphs import MODEL, graph


async def eventually(predicate, timeout: float = 5.0) -> bool:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            return False
        await asyncio.sleep(0.01)
    return True


@pytest.mark.parametrize("node_type", ["agent", "llm-completion"])
async def test_cancel_after_the_first_token(fake_llm, node_type):
    fake_llm.script(text([f"t{i} " for i in range(200)], delay=0.02))
    raw = graph([("chat", "chat-start", {}), ("n", node_type, {"model": MODEL})], ["chat.output -> n.input"])
    run = start_run(raw, default_registry(), payload="stream a lot", context={CONVERSATION: "chat-cancel"})
    seen = []
    async for event in run.events():
        seen.append(event)
        if event.event_type == "token" and len([e for e in seen if e.event_type == "token"]) == 1:
            run.cancel()
    assert run.status == "cancelled"
    tokens = [e for e in seen if e.event_type == "token"]
    assert 1 <= len(tokens) < 10
    assert [e.event_type for e in seen if e.node_id == "n"][-1] == "cancelled"
    # The server sees the client go away well before its 200 tokens (4 s) are out.
    assert await eventually(lambda: fake_llm.streams and fake_llm.streams[0].abandoned, timeout=2.0)
    assert fake_llm.streams[0].chunks_sent < 50
