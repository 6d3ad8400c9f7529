"""Runs nobody starts from a page act in their graph's workspace: a webhook call and a schedule run a graph of
workspace B with B's stored provider key, in every node that reads one (the model node and the Embedding node).

    Webhook / Schedule --> Edit Fields --> Embedding --> LLM Completion     (openai-compatible: B stored its key)

Webhook and schedule runs have no signed-in caller that picks a workspace for the provider keys; the Embedding
node looked up the keys of workspace "" (the install's URL without a key) instead of B's.
"""

from __future__ import annotations

import asyncio

import pytest

from nodeflow_app.llm.providers import COMPATIBLE_API_KEY_ENV
from nodeflow_app.net.guard import ALLOWLIST_ENV
from nodeflow_app.store.credentials import default_store
from nodeflow_app.triggers.scheduler import Scheduler
from nodeflow_app.triggers.webhooks import hook_id
from tests.llm.conftest import _fake_server, fake_llm  # noqa: F401  (the fake OpenAI server, per session)
from tests.llm.fake_openai import text
from tests.llm.graphs import graph
from tests.triggers.test_scheduler import Clock
from tests.triggers.test_webhooks import settled

B_KEY = "sk-workspace-b-0123456789"


def keyed(trigger: tuple[str, str, dict]) -> dict:
    """The Embedding node comes first: a model node before it in the same task used to lend it its workspace."""
    fields = {"include_input": False, "fields": [{"name": "text", "value": "hi"}]}
    return graph([trigger, ("text", "edit-fields", fields),
                  ("embed", "embedding", {"model": "openai-compatible:fake-embed"}),
                  ("llm", "llm-completion", {"model": "openai-compatible:fake-model", "prompt": "hi"})],
                 [f"{trigger[0]}.output -> text.input", "text.output -> embed.input", "embed.output -> llm.input"])


@pytest.fixture
def workspace_b(fake_llm, monkeypatch):
    """Workspace B stored its key with the fake's URL (guarded: the allowlist lets it reach 127.0.0.1); the
    install has the same URL without a key."""
    monkeypatch.delenv(COMPATIBLE_API_KEY_ENV, raising=False)
    monkeypatch.setenv(ALLOWLIST_ENV, "127.0.0.1")
    default_store(create=True).set("openai-compatible", B_KEY, fake_llm.base_url, workspace_id="w-b")
    fake_llm.script(text("hello from B"))
    return fake_llm


def authorizations(fake) -> list[str]:
    return [headers.get("authorization") for headers in fake.embedding_headers + fake.headers]


async def test_a_webhook_run_uses_its_graphs_workspace_keys(hooks, workspace_b):
    graph_id = hooks.graphs.create("B's hook", keyed(("hook", "webhook-trigger", {})), workspace_id="w-b").id
    hooks.activation.activate(graph_id)
    async with hooks.client() as client:
        answer = await client.post(f"/api/hooks/{hook_id(graph_id, 'hook')}", json={})
    run = await settled(hooks, answer.headers["x-run-id"])
    assert run["status"] == "completed", run["error"]
    assert authorizations(workspace_b) == [f"Bearer {B_KEY}"] * 2


async def test_a_scheduled_run_uses_its_graphs_workspace_keys(hooks, workspace_b):
    schedule = {"mode": "interval", "every": 10, "unit": "seconds"}
    graph_id = hooks.graphs.create("B's clock", keyed(("clock", "schedule-trigger", schedule)), workspace_id="w-b").id
    hooks.activation.activate(graph_id)
    clock = Clock(1_000_000_005.0)
    scheduler = Scheduler(hooks.launcher, hooks.triggers, hooks.graphs, clock=clock)
    await scheduler.tick_once()
    clock.now = 1_000_000_011.0
    [run_id] = await scheduler.tick_once()
    run = await settled(hooks, run_id)
    assert run["status"] == "completed", run["error"]
    assert authorizations(workspace_b) == [f"Bearer {B_KEY}"] * 2
