"""Fixtures for the LLM tests: one fake OpenAI-compatible server per session, reset for each test."""

from __future__ import annotations

import os
from typing import AsyncIterator, Iterator

import pytest

from nodeflow_app.llm import providers
from tests.llm.fake_openai import FakeOpenAI, FakeServer

os.environ["AGNO_TELEMETRY"] = "false"


@pytest.fixture(scope="session")
def _fake_server() -> Iterator[FakeServer]:
    server = FakeServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture
async def fake_llm(_fake_server: FakeServer, monkeypatch, tmp_path) -> AsyncIterator[FakeOpenAI]:
    """The fake server with an empty script and no recorded requests; `.base_url` ends in /v1.

    `openai-compatible:<any model>` points at it, nothing retries, and the database (history) is temporary.
    """
    fake = _fake_server.fake
    fake.reset()
    monkeypatch.setenv(providers.COMPATIBLE_BASE_URL_ENV, fake.base_url)
    monkeypatch.setenv(providers.MAX_RETRIES_ENV, "0")
    monkeypatch.setenv("NODEFLOW_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("REFLEX_DB_URL", f"sqlite:///{tmp_path / 'nodeflow.db'}")
    yield fake
    await providers.close_http_clients()
    fake.reset()
