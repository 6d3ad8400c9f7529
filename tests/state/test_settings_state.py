"""The Settings page's provider form: saving a server's base URL also reads its models for the editor (through
the same guarded client a connection test uses); a server that does not answer never blocks the save."""

from __future__ import annotations

import nodeflow_app.nodeflow_app  # noqa: F401 - registers every state class of the app
from nodeflow_app import provider_settings
from nodeflow_app.llm.providers import COMPATIBLE_API_KEY_ENV, COMPATIBLE_BASE_URL_ENV
from nodeflow_app.net.guard import ALLOWLIST_ENV
from nodeflow_app.state import access
from nodeflow_app.state.settings_state import SettingsState
from tests.llm.conftest import _fake_server, fake_llm  # noqa: F401

WS = "w-team"


def _as_owner():
    user = type("User", (), {"id": "u1", "name": "Ann", "is_admin": False})()
    return access._current.set(access.Access(user, WS, "owner"))


async def save(provider: str, base_url: str) -> list:
    """The Save button of `provider`'s form, then the events it queues after itself (as the browser would)."""
    state = SettingsState(_reflex_internal_init=True)
    events = await SettingsState.event_handlers["save"].fn(state, provider, {"api_key": "", "base_url": base_url})
    events = events if isinstance(events, list) else [events]
    handlers = {handler.fn for handler in SettingsState.event_handlers.values()}
    queued = [event for event in events if getattr(event.handler, "fn", None) in handlers]
    for event in queued:
        await event.handler.fn(state, *[value._var_value for _, value in event.args])
    return [event.handler.fn.__name__ for event in queued]


async def test_saving_a_servers_url_makes_its_models_the_suggestions(fake_llm, monkeypatch):
    monkeypatch.delenv(COMPATIBLE_API_KEY_ENV, raising=False)
    monkeypatch.delenv(COMPATIBLE_BASE_URL_ENV)  # the workspace's own server, not the install's
    monkeypatch.setenv(ALLOWLIST_ENV, "127.0.0.1")
    token = _as_owner()
    try:
        assert provider_settings.suggested_models(WS)["openai-compatible"] == ("local-model",)
        assert await save("openai-compatible", fake_llm.base_url) == ["list_saved_models"]
        assert provider_settings.suggested_models(WS)["openai-compatible"] == ("fake-model",)
        configured = provider_settings.configured_providers(WS)
        assert provider_settings.default_model(configured, "openai:gpt-4o-mini",
                                               provider_settings.suggested_models(WS)) == "openai-compatible:fake-model"
        # A server that does not answer: saved all the same, the suggestion is the usual one (no stale list).
        await save("openai-compatible", "http://127.0.0.1:9/v1")
        [row] = [r for r in provider_settings.provider_rows(WS, admin=False) if r["name"] == "openai-compatible"]
        assert row["stored_base_url"] == "http://127.0.0.1:9/v1"
        assert provider_settings.suggested_models(WS)["openai-compatible"] == ("local-model",)
    finally:
        access._current.reset(token)


async def test_a_co_owner_cannot_send_the_stored_key_to_a_url_of_theirs(fake_llm, monkeypatch):
    """Test connection and Save with another URL and the key field left empty: the key goes nowhere, and the
    page says which field to fill."""
    monkeypatch.setenv(ALLOWLIST_ENV, "127.0.0.1")
    token = _as_owner()
    try:
        provider_settings.save_credential("openai", "sk-stored-0123456789abcd", "", WS)  # OpenAI's own API
        state = SettingsState(_reflex_internal_init=True)
        form = {"api_key": "", "base_url": fake_llm.base_url}  # a server of the co-owner's
        await SettingsState.event_handlers["check"].fn(state, "openai", form)
        assert state.tests["openai"]["message"].startswith("type the API key again: it is only sent to the URL it "
                                                           "was saved with")
        assert (state.testing, fake_llm.models_headers) == ("", [])
        toast = await SettingsState.event_handlers["save"].fn(state, "openai", form)
        assert "Not saved: type the API key again" in str(toast)
        [row] = [r for r in provider_settings.provider_rows(WS, admin=False) if r["name"] == "openai"]
        assert row["stored_base_url"] == ""
    finally:
        access._current.reset(token)


async def test_testing_an_unknown_provider_is_refused_and_blocks_no_later_test(fake_llm, monkeypatch):
    monkeypatch.delenv(COMPATIBLE_API_KEY_ENV, raising=False)
    token = _as_owner()
    try:
        state = SettingsState(_reflex_internal_init=True)
        check = SettingsState.event_handlers["check"].fn
        refused = await check(state, "no-such-provider", {})
        assert "Cannot test 'no-such-provider'" in str(refused) and state.testing == ""
        assert "Cannot test" in str(await check(state, "openai", "not a form"))
        await check(state, "openai-compatible", {"api_key": ""})  # the next test runs
        assert state.tests["openai-compatible"]["message"] == "connected: 1 model(s)" and state.testing == ""
    finally:
        access._current.reset(token)
