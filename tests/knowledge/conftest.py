"""Knowledge tests: a temporary data folder per test; the fake OpenAI server (embeddings too) from tests/llm."""

from __future__ import annotations

import pytest

from tests.llm.conftest import _fake_server, fake_llm  # noqa: F401  (fixtures shared with the LLM tests)


@pytest.fixture(autouse=True)
def private_data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("NODEFLOW_DATA_DIR", str(tmp_path))
    return tmp_path
