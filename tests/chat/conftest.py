"""The fake OpenAI server fixtures of tests/llm, for the chat service's end-to-end tests."""

from tests.llm.conftest import _fake_server, fake_llm  # noqa: F401
