"""Embedding failures say why without the key: a provider may echo the key it was sent (OpenAI's 401 does)."""

from __future__ import annotations

import logging

import pytest

from nodeflow_app.contract import NodeError
from nodeflow_app.knowledge.embedding import embed_texts
from nodeflow_app.llm import providers

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
