"""Embedding failures say why without the key: a provider may echo the key it was sent (OpenAI's 401 does)."""

from __future__ import annotations

import json
import logging

import pytest

from nodeflow_app.contract import NodeError
from nodeflow_app.knowledge.embedding import embed_texts
from nodeflow_app.llm import providers
from nodeflow_app.llm.credentials import use_workspace
from nodeflow_app.net.guard import ALLOWLIST_ENV, MAX_BODY_ENV
from nodeflow_app.store.credentials import default_store
from tests.net.answering_server import answering

KEY = "sk-SECRET-abcdef1234567890"


@pytest.mark.parametrize("status", [401, 500])
async def test_a_provider_error_that_echoes_the_key_is_shown_without_it(fake_llm, monkeypatch, status):
    monkeypatch.setenv(providers.COMPATIBLE_API_KEY_ENV, KEY)
    fake_llm.embedding_failure = (status, f"Incorrect API key provided: {KEY}. You sent Authorization: Bearer {KEY}")
    with pytest.raises(NodeError) as failure:
        await embed_texts(["refunds take 5 days"], "openai-compatible:fake-embed")
    message = str(failure.value)
    assert KEY not in message and "Incorrect API key provided: [hidden]" in message, message
    assert message.startswith("embedding model openai-compatible:fake-embed: ")


async def test_agnos_own_log_of_the_failure_holds_no_key(fake_llm, monkeypatch):
    """Agno logs the provider's error body as it came: the server's log held the key."""
    monkeypatch.setenv(providers.COMPATIBLE_API_KEY_ENV, KEY)
    fake_llm.embedding_failure = (401, f"Incorrect API key provided: {KEY}")
    seen: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(self.format(record))

    keep = Keep()
    loggers = [logging.getLogger(name) for name in providers.AGNO_LOGGERS]
    for logger in loggers:
        logger.addHandler(keep)
    try:
        with pytest.raises(NodeError):
            await embed_texts(["refunds take 5 days"], "openai-compatible:fake-embed")
    finally:
        for logger in loggers:
            logger.removeHandler(keep)
    assert any("Incorrect API key provided: [hidden]" in line for line in seen), seen
    assert not any(KEY in line for line in seen)


async def test_openai_embeddings_come_as_base64_and_read_as_the_same_floats(fake_llm, monkeypatch):
    """As floats, the SDK built each of 1,536 numbers per vector on the event loop: 0.3 s per batch of 64."""
    from nodeflow_app.knowledge import embedding
    from tests.llm.fake_openai import fake_embedding

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setattr(embedding, "base_url_for", lambda provider: fake_llm.base_url)  # the install's own URL
    texts = ["refunds take 5 days", "gift cards never expire"]
    vectors = await embed_texts(texts, "openai:text-embedding-3-small")
    assert [request.get("encoding_format") for request in fake_llm.embedding_requests] == ["base64"]
    dimensions = fake_llm.embedding_requests[0]["dimensions"]
    for text, vector in zip(texts, vectors):
        assert vector == pytest.approx(fake_embedding(text, dimensions), abs=1e-6)  # float32, as the cache keeps


async def test_a_refused_key_ends_the_batch_instead_of_one_request_per_text(fake_llm, monkeypatch):
    """Agno falls back to one request per text when a batch fails: 300 texts against a 401 made 101 requests."""
    monkeypatch.setenv(providers.COMPATIBLE_API_KEY_ENV, KEY)
    fake_llm.embedding_failure = (401, "Incorrect API key provided")
    with pytest.raises(NodeError, match="Incorrect API key provided"):
        await embed_texts([f"text {n}" for n in range(300)], "openai-compatible:fake-embed", batch_size=100)
    assert len(fake_llm.embedding_requests) == 2  # the batch, then the first text alone


def test_an_ollama_nobody_pointed_to_still_embeds_against_localhost(monkeypatch):
    """Ollama counts as set up (for new nodes' defaults) only once someone said where it runs, but its package
    falls back to localhost: an embedding model of it still runs, as it did."""
    from nodeflow_app.knowledge.embedding import check_ref

    monkeypatch.delenv(providers.OLLAMA_HOST_ENV, raising=False)
    assert providers.missing_steps("ollama")  # not "configured"
    assert check_ref("ollama:nomic-embed-text").provider == "ollama"
    monkeypatch.delenv(providers.COMPATIBLE_BASE_URL_ENV, raising=False)
    with pytest.raises(NodeError, match="base URL"):
        check_ref("openai-compatible:fake-embed")  # it has no default to fall back to


async def test_a_body_past_the_limit_from_a_workspaces_url_says_so(fake_llm, monkeypatch):
    """A URL a workspace stored is guarded: its answer stops at NODEFLOW_HTTP_MAX_RESPONSE_MB, and the error says
    that, not the SDK's "Connection error."."""
    huge = json.dumps({"object": "list", "data": [{"object": "embedding", "index": 0,
                                                   "embedding": [0.5] * 600_000}]}).encode()
    monkeypatch.setenv(ALLOWLIST_ENV, "127.0.0.1")
    monkeypatch.setenv(MAX_BODY_ENV, "1")
    with answering(lambda request: (200, huge)) as url:
        default_store(create=True).set("openai-compatible", "key-w", url, workspace_id="w")
        use_workspace("w")
        with pytest.raises(NodeError, match=r"the response from 127\.0\.0\.1 is larger than 1 MB; NodeFlow stopped"):
            await embed_texts(["refunds take 5 days"], "openai-compatible:fake-embed")
