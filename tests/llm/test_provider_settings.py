"""nodeflow_app/provider_settings.py: what the Settings page shows (never a key) and its connection test."""

from __future__ import annotations

import json

from nodeflow_app import provider_settings
from nodeflow_app.llm.providers import COMPATIBLE_API_KEY_ENV, api_key_for

KEY = "sk-stored-0123456789abcd"


def row(name: str) -> dict:
    return next(r for r in provider_settings.provider_rows() if r["name"] == name)


async def test_every_provider_is_listed_configured_or_with_how_to_configure(fake_llm, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    rows = provider_settings.provider_rows()
    assert [r["name"] for r in rows] == ["openai", "anthropic", "google", "groq", "ollama", "openrouter",
                                         "openai-compatible"]
    assert row("openai-compatible")["configured"] and row("openai-compatible")["base_url"] == fake_llm.base_url
    openai = row("openai")
    assert not openai["configured"] and "set OPENAI_API_KEY" in openai["how"] and not openai["key_set"]


async def test_a_stored_key_shows_as_set_with_its_last_four_characters_only(fake_llm, monkeypatch):
    monkeypatch.delenv(COMPATIBLE_API_KEY_ENV, raising=False)
    provider_settings.save_credential("openai-compatible", KEY, "")
    shown = row("openai-compatible")
    assert (shown["key_set"], shown["key_hint"], shown["key_source"]) == (True, "••••abcd", "stored")
    assert KEY not in json.dumps(provider_settings.provider_rows())
    provider_settings.save_credential("openai-compatible", "", "http://elsewhere:1/v1")  # empty key: kept
    assert api_key_for("openai-compatible") == KEY
    assert provider_settings.delete_credential("openai-compatible") is True
    assert row("openai-compatible")["key_set"] is False


def test_short_keys_show_no_characters():
    assert provider_settings.key_hint("abcdef") == "••••"
    assert provider_settings.key_hint(None) == ""


async def test_the_connection_test_lists_the_models_with_the_stored_key(fake_llm, monkeypatch):
    monkeypatch.delenv(COMPATIBLE_API_KEY_ENV, raising=False)
    provider_settings.save_credential("openai-compatible", KEY, "")
    result = await provider_settings.check_connection("openai-compatible")
    assert (result.ok, result.message, result.models) == (True, "connected: 1 model(s)", ("fake-model",))


async def test_a_failed_connection_test_says_why(monkeypatch, tmp_path):
    monkeypatch.setenv("NODEFLOW_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("REFLEX_DB_URL", f"sqlite:///{tmp_path / 'n.db'}")
    monkeypatch.setenv("NODEFLOW_OPENAI_COMPATIBLE_BASE_URL", "http://127.0.0.1:9/v1")
    result = await provider_settings.check_connection("openai-compatible")
    assert not result.ok and result.message.startswith("cannot reach http://127.0.0.1:9/v1/models")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert (await provider_settings.check_connection("openai")).message == "OpenAI needs an API key first"
