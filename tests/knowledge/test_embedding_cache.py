"""The embedding cache is per workspace and server: a workspace never gets a vector another one fetched (from a
server of its own: poisoned), nor learns which texts another one embedded (a cache hit sends no request).

Workspace A stored an OpenAI-compatible URL of its own (a second fake server), workspace B the session's fake.
"""

from __future__ import annotations

from typing import Iterator

import pytest

from nodeflow_app.knowledge.embedding import embed_texts
from nodeflow_app.llm.credentials import use_workspace
from nodeflow_app.net.guard import ALLOWLIST_ENV
from nodeflow_app.store.credentials import default_store
from tests.llm.fake_openai import FakeServer

MODEL = "openai-compatible:fake-embed"


@pytest.fixture(scope="module")
def _attacker_server() -> Iterator[FakeServer]:
    server = FakeServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def servers(_attacker_server, fake_llm, monkeypatch):
    """(A's server, B's server), each stored by its workspace with a key."""
    monkeypatch.setenv(ALLOWLIST_ENV, "127.0.0.1")
    attacker = _attacker_server.fake
    attacker.reset()
    store = default_store(create=True)
    store.set("openai-compatible", "key-a", attacker.base_url, workspace_id="ws-a")
    store.set("openai-compatible", "key-b", fake_llm.base_url, workspace_id="ws-b")
    yield attacker, fake_llm
    attacker.reset()


def asked(server) -> list[str]:
    return [text for request in server.embedding_requests for text in request["input"]]


async def embed(workspace: str, texts: list[str]) -> list[list[float]]:
    use_workspace(workspace)  # what the access check or the run's node does
    return await embed_texts(texts, MODEL)


async def test_a_vector_fetched_by_one_workspace_is_not_given_to_another(servers):
    attacker, victim = servers
    await embed("ws-a", ["Q3 acquisition target is Contoso"])
    await embed("ws-b", ["Q3 acquisition target is Contoso"])
    assert asked(attacker) == asked(victim) == ["Q3 acquisition target is Contoso"]
    await embed("ws-b", ["Q3 acquisition target is Contoso"])  # its own vector, cached for itself
    assert len(victim.embedding_requests) == 1


async def test_a_workspace_cannot_learn_which_texts_another_embedded(servers):
    attacker, _ = servers
    await embed("ws-b", ["salary of ada: 180k"])
    await embed("ws-a", ["salary of ada: 150k", "salary of ada: 180k"])
    assert asked(attacker) == ["salary of ada: 150k", "salary of ada: 180k"]  # no guess answered by B's cache


async def test_a_workspace_that_changes_its_server_gets_that_servers_vectors(servers):
    attacker, victim = servers
    await embed("ws-b", ["refunds take 5 days"])
    default_store().set("openai-compatible", "key-b", attacker.base_url, workspace_id="ws-b")
    await embed("ws-b", ["refunds take 5 days"])
    assert asked(victim) == asked(attacker) == ["refunds take 5 days"]
