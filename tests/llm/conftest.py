"""Fixtures for the LLM tests: one fake OpenAI-compatible server per session, reset for each test."""

from __future__ import annotations

import os
from typing import Iterator

import pytest

from tests.llm.fake_openai import FakeOpenAI, FakeServer

os.environ["AGNO_TELEMETRY"] = "false"


@pytest.fixture(scope="session")
def _fake_server() -> Iterator[FakeServer]:
    server = FakeServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def fake_llm(_fake_server: FakeServer) -> Iterator[FakeOpenAI]:
    """The fake server with an empty script and no recorded requests; `.base_url` ends in /v1."""
    fake = _fake_server.fake
    fake.reset()
    yield fake
    fake.reset()
