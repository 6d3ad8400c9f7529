"""nodeflow_app/provider_settings.py: what a workspace's credentials page shows (never a key), its connection
tests, and its named connections."""

from __future__ import annotations

import contextvars
import json
from typing import Iterator

import pytest

from nodeflow_app import provider_settings
from nodeflow_app.knowledge import embedding
from nodeflow_app.llm import providers
from nodeflow_app.llm.credentials import CredentialError, current_workspace, use_workspace
from nodeflow_app.llm.providers import (
    COMPATIBLE_API_KEY_ENV, COMPATIBLE_BASE_URL_ENV, OLLAMA_HOST_ENV, api_key_for,
)
from nodeflow_app.net.guard import ALLOWLIST_ENV, MAX_BODY_ENV
from tests.net.answering_server import answering

KEY = "sk-stored-0123456789abcd"
ENV_KEY = "sk-environment-key-9876"
WS = "w-team"


@pytest.fixture(autouse=True)
def data_dir(monkeypatch, tmp_path):
    """A database and key file of the test's own (fake_llm sets the same ones when a test uses it)."""
    monkeypatch.setenv("NODEFLOW_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("REFLEX_DB_URL", f"sqlite:///{tmp_path / 'nodeflow.db'}")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    return tmp_path


def row(name: str, workspace: str = WS, *, admin: bool = False) -> dict:
    return next(r for r in provider_settings.provider_rows(workspace, admin=admin) if r["name"] == name)


async def test_every_provider_is_listed_configured_or_with_how_to_configure(fake_llm, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    rows = provider_settings.provider_rows(WS, admin=True)
    assert [r["name"] for r in rows] == ["openai", "anthropic", "google", "groq", "ollama", "openrouter",
                                         "openai-compatible"]
    assert row("openai-compatible", admin=True)["configured"]
    assert row("openai-compatible", admin=True)["base_url"] == fake_llm.base_url
    assert row("openai-compatible")["base_url"] == ""  # the install's URL: the admin's to see
    openai = row("openai")
    assert not openai["configured"] and "set OPENAI_API_KEY" in openai["how"] and not openai["key_set"]


async def test_a_stored_key_shows_as_set_with_its_last_four_characters_only(fake_llm, monkeypatch):
    monkeypatch.delenv(COMPATIBLE_API_KEY_ENV, raising=False)
    provider_settings.save_credential("openai-compatible", KEY, "", WS)
    shown = row("openai-compatible")
    assert (shown["key_set"], shown["key_hint"], shown["key_source"]) == (True, "••••abcd", "stored")
    assert KEY not in json.dumps(provider_settings.provider_rows(WS, admin=True))
    assert row("openai-compatible", "w-other")["key_set"] is False  # another workspace's key is not theirs
    provider_settings.save_credential("openai-compatible", "", "", WS)  # empty key, same URL: kept
    use_workspace(WS)
    assert api_key_for("openai-compatible") == KEY
    assert provider_settings.delete_credential("openai-compatible", WS) is True
    assert row("openai-compatible")["key_set"] is False


async def test_the_environment_key_is_the_admins_to_see(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    owner, admin = row("openai"), row("openai", admin=True)
    assert (owner["key_set"], owner["key_hint"], owner["key_source"]) == (True, "", "the install's key")
    assert (admin["key_hint"], admin["key_source"]) == ("••••9876", "from OPENAI_API_KEY")
    assert {"provider": "OpenAI", "variable": "OPENAI_API_KEY", "value": "••••9876"} in (
        provider_settings.environment_rows())
    assert ENV_KEY not in json.dumps(provider_settings.provider_rows(WS, admin=True))
    provider_settings.save_credential("openai", KEY, "", WS)  # the workspace's own key wins
    assert row("openai")["key_source"] == "stored" and row("openai", "w-other")["key_source"] == "the install's key"


def test_new_nodes_get_a_provider_the_workspace_set_up_and_ollama_only_once_told_where_it_runs(monkeypatch):
    for name in ("OPENROUTER_API_KEY", COMPATIBLE_BASE_URL_ENV, OLLAMA_HOST_ENV):
        monkeypatch.delenv(name, raising=False)
    assert provider_settings.configured_providers(WS) == []  # Ollama's package alone sets nothing up
    assert provider_settings.default_model([], "openai:gpt-4o-mini") is None
    provider_settings.save_credential("openrouter", KEY, "", WS)  # on the Settings page
    configured = provider_settings.configured_providers(WS)
    assert configured == ["openrouter"] and current_workspace() == ""  # the caller's workspace is untouched
    assert provider_settings.default_model(configured, "openai:gpt-4o-mini") == "openrouter:openai/gpt-4o-mini"
    assert provider_settings.configured_providers("w-other") == []  # another workspace's key is not theirs
    provider_settings.save_credential("ollama", "", "https://ollama.example.org", "w-other")
    assert provider_settings.configured_providers("w-other") == ["ollama"]
    monkeypatch.setenv(OLLAMA_HOST_ENV, "http://127.0.0.1:11434")  # the install's own Ollama
    assert provider_settings.configured_providers(WS) == ["ollama", "openrouter"]
    assert row("ollama")["configured"] and row("ollama", admin=True)["base_url"] == "http://127.0.0.1:11434"
    assert {"provider": "Ollama", "variable": OLLAMA_HOST_ENV, "value": "http://127.0.0.1:11434"} in (
        provider_settings.environment_rows())


async def test_the_models_a_connection_test_listed_are_suggested_to_the_workspace(fake_llm, monkeypatch):
    monkeypatch.delenv(COMPATIBLE_API_KEY_ENV, raising=False)
    result = await provider_settings.check_connection("openai-compatible", WS)  # the install's URL, no row yet
    provider_settings.remember_models("openai-compatible", WS, result.models)
    suggested = provider_settings.suggested_models(WS)
    assert suggested["openai-compatible"] == ("fake-model",) and suggested["openai"][0] == "gpt-4o-mini"
    configured = provider_settings.configured_providers(WS)
    assert provider_settings.model_choices(configured, suggested)[0] == {
        "value": "openai-compatible:fake-model", "label": "OpenAI-compatible URL"}
    assert provider_settings.default_model(configured, "openai:gpt-4o-mini", suggested) == "openai-compatible:fake-model"
    assert provider_settings.suggested_models("w-other")["openai-compatible"] == ("local-model",)
    assert row("openai-compatible")["stored"] is False  # only the models: nothing to delete on the page
    provider_settings.save_credential("openai-compatible", KEY, "", WS)  # a key for the same URL: still listed
    assert provider_settings.suggested_models(WS)["openai-compatible"] == ("fake-model",)
    provider_settings.save_credential("openai-compatible", KEY, "http://elsewhere.example/v1", WS)  # another server
    assert provider_settings.suggested_models(WS)["openai-compatible"] == ("local-model",)
    provider_settings.remember_models("openai", WS, ("babbage-002", "gpt-4o"))  # a catalogue: its own list stays
    assert provider_settings.suggested_models(WS)["openai"][0] == "gpt-4o-mini"


async def test_an_internal_base_url_is_refused_when_saved_in_the_guards_words(monkeypatch):
    monkeypatch.delenv("NODEFLOW_HTTP_ALLOWLIST", raising=False)
    monkeypatch.setenv(COMPATIBLE_BASE_URL_ENV, "http://127.0.0.1:8000/v1")
    with pytest.raises(CredentialError, match=r"^refused http://10\.0\.0\.5:8000/v1: 10\.0\.0\.5 is a private address "
                                              r"\(10\.0\.0\.5\); only public addresses can be reached unless "
                                              r"NODEFLOW_HTTP_ALLOWLIST lists the host$"):
        await provider_settings.check_base_url("openai-compatible", "http://10.0.0.5:8000/v1")
    with pytest.raises(CredentialError, match="127.0.0.1 is a loopback address"):
        await provider_settings.check_base_url("ollama", " http://127.0.0.1:11434 ")
    await provider_settings.check_base_url("openai-compatible", "http://127.0.0.1:8000/v1/")  # the install's own
    await provider_settings.check_base_url("openai-compatible", "")  # clears the stored URL
    monkeypatch.setenv("NODEFLOW_HTTP_ALLOWLIST", "10.0.0.0/8")
    await provider_settings.check_base_url("openai-compatible", "http://10.0.0.5:8000/v1")


async def test_ollamas_connection_test_goes_where_its_runs_go_settings_then_ollama_host_then_the_default(
        monkeypatch):
    """The ollama package (and so every run) reads OLLAMA_HOST when no URL is set: the test must ask the same
    server, written as OLLAMA_HOST may be ("host:port", no scheme)."""
    asked = []

    def tags(request) -> tuple[int, bytes]:
        asked.append(request.path)
        return 200, json.dumps({"models": [{"name": "qwen3:0.6b"}, {"name": "llama3.2:3b"}]}).encode()

    with answering(tags) as url:
        host = url.removeprefix("http://").removesuffix("/v1")
        monkeypatch.setenv(OLLAMA_HOST_ENV, host)
        result = await provider_settings.check_connection("ollama", WS)
        assert (result.ok, result.models, result.current) == (True, ("llama3.2:3b", "qwen3:0.6b"), True)
        assert asked == ["/api/tags"]
        assert providers.base_url_for("ollama") == f"http://{host}"
        model = providers.build_model("ollama:qwen3:0.6b")  # the run: the same server
        assert str(model.get_client()._client.base_url).rstrip("/") == f"http://{host}"
        assert embedding._base_url(providers.parse_ref("ollama:nomic-embed-text")) == f"http://{host}/v1"
    monkeypatch.delenv(OLLAMA_HOST_ENV)
    assert providers.base_url_for("ollama") is None  # the package's own default, the test's too:
    assert provider_settings.PUBLIC_API["ollama"] == providers.OLLAMA_DEFAULT_URL == "http://127.0.0.1:11434"
    provider_settings.save_credential("ollama", "", "https://ollama.example.org", WS)  # Settings' URL wins
    in_workspace = contextvars.copy_context()
    in_workspace.run(use_workspace, WS)
    assert in_workspace.run(providers.base_url_for, "ollama") == "https://ollama.example.org"


@pytest.mark.parametrize("host, url", [
    ("0.0.0.0", "http://0.0.0.0:11434"), ("ollama.internal:8080", "http://ollama.internal:8080"),
    ("http://ollama.internal", "http://ollama.internal:80"), ("[::1]:9000", "http://[::1]:9000"),
    ("https://ollama.example.org/api/", "https://ollama.example.org:443/api"),
])
def test_ollama_host_is_read_as_the_ollama_package_reads_it(host, url):
    assert providers.ollama_host_url(host) == url


def test_short_keys_show_no_characters():
    assert provider_settings.key_hint("abcdef") == "••••"
    assert provider_settings.key_hint(None) == ""


async def test_the_connection_test_lists_the_models_with_the_stored_key(fake_llm, monkeypatch):
    monkeypatch.delenv(COMPATIBLE_API_KEY_ENV, raising=False)
    provider_settings.save_credential("openai-compatible", KEY, "", WS)
    result = await provider_settings.check_connection("openai-compatible", WS)
    assert (result.ok, result.message, result.models) == (True, "connected: 1 model(s)", ("fake-model",))


async def test_a_failed_connection_test_says_why(monkeypatch, tmp_path):
    monkeypatch.setenv("NODEFLOW_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("REFLEX_DB_URL", f"sqlite:///{tmp_path / 'n.db'}")
    monkeypatch.setenv("NODEFLOW_OPENAI_COMPATIBLE_BASE_URL", "http://127.0.0.1:9/v1")
    result = await provider_settings.check_connection("openai-compatible", WS)
    assert not result.ok and result.message.startswith("cannot reach http://127.0.0.1:9/v1/models")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert (await provider_settings.check_connection("openai", WS)).message == "OpenAI needs an API key first"


async def test_the_connection_test_uses_the_typed_key_and_url_as_saving_would_keep_them(fake_llm, monkeypatch):
    monkeypatch.delenv(COMPATIBLE_API_KEY_ENV, raising=False)
    monkeypatch.delenv(ALLOWLIST_ENV, raising=False)
    check = provider_settings.check_connection
    typed = await check("openai-compatible", WS, KEY, "")  # a key typed, not saved; the install's URL
    assert (typed.ok, typed.models, typed.current) == (True, ("fake-model",), True)
    assert fake_llm.models_headers[-1]["authorization"] == f"Bearer {KEY}"
    assert row("openai-compatible")["key_set"] is False  # testing stores nothing
    # A typed URL is the workspace's choice: the guard refuses it as saving would (not "connected" elsewhere).
    elsewhere = await check("openai-compatible", WS, "", "http://127.0.0.1:9/v1")
    assert (elsewhere.ok, elsewhere.message) == (False, (
        "cannot reach http://127.0.0.1:9/v1/models: refused 127.0.0.1: 127.0.0.1 is a loopback address "
        "(127.0.0.1); only public addresses can be reached unless NODEFLOW_HTTP_ALLOWLIST lists the host"))
    assert "10.0.0.5 is a private address" in (await check("openai", WS, KEY, "http://10.0.0.5/v1")).message
    assert (await check("openai", WS, KEY, "http://[::1")).message.startswith("cannot reach http://[::1/models")
    monkeypatch.setenv(ALLOWLIST_ENV, "127.0.0.1")
    openai = await check("openai", WS, KEY, fake_llm.base_url)  # "OpenAI needs an API key first" before
    assert (openai.ok, openai.message, openai.current) == (True, "connected: 1 model(s)", False)
    assert fake_llm.models_headers[-1]["authorization"] == f"Bearer {KEY}"
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)  # the install's key never goes to a URL a workspace chose
    assert (await check("openai", WS, "", fake_llm.base_url)).message == "OpenAI needs an API key first"
    provider_settings.save_credential("openai", KEY, fake_llm.base_url, WS)  # nor the stored key, but to its own
    assert (await check("openai", WS, "", fake_llm.base_url + "/")).ok
    assert fake_llm.models_headers[-1]["authorization"] == f"Bearer {KEY}"
    # An empty URL field is the install's URL (saving it clears the stored one), not the stored URL.
    provider_settings.save_credential("openai-compatible", "", "http://127.0.0.1:9/v1", WS)
    assert not (await check("openai-compatible", WS)).ok  # None: the stored URL
    cleared = await check("openai-compatible", WS, "", "")
    assert (cleared.ok, cleared.current) == (True, False)  # its models are not the stored server's


@pytest.fixture
def collector(monkeypatch) -> Iterator[tuple[str, list[str]]]:
    """A server of a co-owner's choosing on 127.0.0.1 (allowlisted): (its URL, the Authorization headers it got)."""
    received: list[str] = []

    def record(request) -> tuple[int, bytes]:
        received.append(request.headers.get("Authorization") or "")
        return 200, json.dumps({"data": [{"id": "collected"}]}).encode()

    monkeypatch.setenv(ALLOWLIST_ENV, "127.0.0.1")
    with answering(record) as url:
        yield url, received


@pytest.mark.parametrize("provider, stored_url", [("openai-compatible", "https://models.example.org/v1"),
                                                  ("openai", "")])
async def test_a_connection_test_never_sends_the_stored_key_to_a_url_typed_for_it(collector, provider, stored_url):
    """A co-owner cannot see the workspace's key: a URL typed with an empty key field would otherwise send it to a
    server of theirs. Typed again, the key goes there; the stored URL (however written) still gets it."""
    url, received = collector
    provider_settings.save_credential(provider, KEY, stored_url, WS)
    result = await provider_settings.check_connection(provider, WS, "", url)
    assert received == []  # not even asked without the key
    assert not result.ok
    assert result.message.startswith("type the API key again: it is only sent to the URL it was saved with")
    assert (await provider_settings.check_connection(provider, WS, "sk-typed-again-0001", url)).ok
    assert received == ["Bearer sk-typed-again-0001"]
    provider_settings.save_credential(provider, "sk-typed-again-0001", url, WS)  # saved with that URL
    provider_settings.save_credential(provider, "", url + "/", WS)  # the same URL: an empty key field keeps it
    assert (await provider_settings.check_connection(provider, WS)).ok
    assert (await provider_settings.check_connection(provider, WS, "", url + "/")).ok
    assert received[1:] == ["Bearer sk-typed-again-0001"] * 2


async def test_saving_a_new_url_with_an_empty_key_field_is_refused_and_keeps_the_stored_credential(collector):
    """Else the stored key would follow the new URL to every run and test."""
    url, received = collector
    provider_settings.save_credential("openai-compatible", KEY, "https://models.example.org/v1", WS)
    for new_url in (url, ""):  # a server of the co-owner's, or the install's URL (the field cleared)
        with pytest.raises(CredentialError, match="^type the API key again: it is only sent to the URL it was "
                                                  "saved with"):
            provider_settings.save_credential("openai-compatible", "", new_url, WS)
    use_workspace(WS)
    assert (api_key_for("openai-compatible"), providers.base_url_for("openai-compatible")) == (
        KEY, "https://models.example.org/v1")
    assert received == []
    provider_settings.save_credential("openai-compatible", "sk-typed-again-0001", url, WS)  # typed again: saved
    assert api_key_for("openai-compatible") == "sk-typed-again-0001"
    provider_settings.delete_credential("openai-compatible", WS)  # no key to follow: a URL alone is saved
    provider_settings.save_credential("openai-compatible", "", url, WS)
    provider_settings.save_credential("ollama", "", "https://ollama.example.org", WS)  # no key: URLs change freely
    provider_settings.save_credential("ollama", "", "https://other.example.org", WS)


async def test_a_connection_test_of_an_unknown_provider_says_so():
    result = await provider_settings.check_connection("nope", WS)
    assert (result.ok, result.message) == (False, "unknown provider 'nope'; use one of: openai, anthropic, google, "
                                                   "groq, ollama, openrouter, openai-compatible")


async def test_a_typed_key_a_server_echoes_is_hidden(monkeypatch):
    """A typed key is not one the credential store or the environment knows: the test hides it itself."""
    def echo(request) -> tuple[int, bytes]:
        return 401, f"Incorrect API key provided: {request.headers['Authorization'][7:]}".encode()

    monkeypatch.setenv(ALLOWLIST_ENV, "127.0.0.1")
    with answering(echo) as url:
        result = await provider_settings.check_connection("openai-compatible", WS, KEY, url)
    assert result.message == "OpenAI-compatible URL answered HTTP 401: Incorrect API key provided: [hidden]"


def test_the_settings_page_says_below_and_a_missing_package_is_the_admins_to_add(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    for module in (providers, provider_settings):  # as on an install without the anthropic package
        monkeypatch.setattr(module, "package_missing", lambda provider: provider == "anthropic")
    assert row("openai")["how"] == "enter an API key below (or set OPENAI_API_KEY for the whole install)"
    assert row("anthropic")["how"] == ("this install lacks the anthropic package: the instance admin must add it; "
                                       "enter an API key below (or set ANTHROPIC_API_KEY for the whole install)")
    assert row("anthropic", admin=True)["how"].startswith(
        "this install lacks the anthropic package: pip install anthropic on the server, then restart NodeFlow; ")
    choices = provider_settings.model_choices(["openai-compatible"])
    assert choices[0]["label"] == "OpenAI-compatible URL"
    assert {"value": "openai:gpt-4o", "label": "OpenAI (not configured)"} in choices
    assert choices[-1]["value"].startswith("anthropic:")  # last: nobody here can set it up
    assert {c["label"] for c in choices if c["value"].startswith("anthropic:")} == {"Anthropic (not installed)"}


async def test_the_connection_test_of_a_stored_url_stops_reading_past_the_body_limit(monkeypatch):
    """A workspace stores any URL: its server's model list is read only up to NODEFLOW_HTTP_MAX_RESPONSE_MB."""
    monkeypatch.setenv(ALLOWLIST_ENV, "127.0.0.1")
    monkeypatch.setenv(MAX_BODY_ENV, "1")
    with answering(lambda request: (200, b'{"data": [{"id": "' + b"m" * (2 * 1024 * 1024) + b'"}]}')) as url:
        provider_settings.save_credential("openai-compatible", KEY, url, WS)
        result = await provider_settings.check_connection("openai-compatible", WS)
    assert not result.ok
    assert result.message == (f"cannot reach {url}/models: the response from 127.0.0.1 is larger than 1 MB; "
                              f"NodeFlow stopped reading it ({MAX_BODY_ENV} sets the limit)")


async def test_a_workspace_connection_is_listed_without_values_and_tested(data_dir):
    import sqlite3

    from nodeflow_app.llm.credentials import CredentialError

    tmp_path = data_dir
    sqlite3.connect(tmp_path / "shop.db").execute("create table t (x)").connection.close()
    with pytest.raises(CredentialError, match="only the instance admin may store a SQLite connection"):
        provider_settings.save_connection(WS, "shop", "sqlite", f"path={tmp_path / 'shop.db'}\n", admin=False)
    provider_settings.save_connection(WS, "shop", "sqlite", f"path={tmp_path / 'shop.db'}\n", admin=True)
    provider_settings.save_connection(WS, "api", "http_bearer", "token=s3cret-token", admin=False)
    assert provider_settings.connection_rows(WS) == [{"name": "api", "kind": "http_bearer", "fields": "token"},
                                                     {"name": "shop", "kind": "sqlite", "fields": "path"}]
    unbound = await provider_settings.check_named_connection(WS, "api")
    assert not unbound.ok and "names no hosts, so an HTTP Request node will not send it" in unbound.message
    provider_settings.save_connection(WS, "api", "http_bearer", "token=s3cret-token\nhosts=API.example.com",
                                      admin=False)
    assert provider_settings.connection_rows(WS)[0] == {
        "name": "api", "kind": "http_bearer", "fields": "hosts, token (sent only to api.example.com)"}
    assert provider_settings.connection_rows("w-other") == []
    assert "s3cret-token" not in json.dumps(provider_settings.connection_rows(WS))
    assert (await provider_settings.check_named_connection(WS, "shop")).message == "connected to the sqlite database"
    bound = await provider_settings.check_named_connection(WS, "api")
    assert bound.ok and "goes only to api.example.com" in bound.message
    assert not (await provider_settings.check_named_connection("w-other", "shop")).ok
    with pytest.raises(CredentialError, match="name=value"):
        provider_settings.save_connection(WS, "bad", "http_bearer", "token", admin=True)
    assert provider_settings.delete_connection(WS, "api") is True
    assert [r["name"] for r in provider_settings.connection_rows(WS)] == ["shop"]


async def test_a_sqlite_connection_of_the_older_format_says_who_must_store_it_again(data_dir):
    from nodeflow_app.store.connections import default_store
    from nodeflow_app.store.models import ConnectionRow

    store = default_store(create=True)
    store.set("made", "http_bearer", {"token": "t"}, WS)  # the table
    store.delete("made", WS)
    old = {"workspace_id": WS, "name": "theirs", "kind": "sqlite", "fields": {"path": "theirs.db"}}
    with store._session() as session:  # as the version before wrote it: no format
        session.merge(ConnectionRow(workspace_id=WS, name="theirs", kind="sqlite",
                                    secret=store._fernet(create=True).encrypt(json.dumps(old).encode()).decode()))
        session.commit()

    with store._session() as session:  # a row whose secret cannot be read (another key), listed before a good one
        session.merge(ConnectionRow(workspace_id=WS, name="broken", kind="http_bearer", secret="not a token"))
        session.commit()
    store.set("zz", "http_bearer", {"token": "t"}, WS)

    assert provider_settings.connection_rows(WS) == [
        {"name": "broken", "kind": "http_bearer", "fields": "cannot be decrypted"},
        {"name": "theirs", "kind": "sqlite", "fields": (
            "the SQLite connection 'theirs' was stored before only the instance admin could store one (its file "
            "lies in the data folder every workspace shares): the instance admin must store it again on the "
            "Settings page")},
        {"name": "zz", "kind": "http_bearer", "fields": "token"}]
    result = await provider_settings.check_named_connection(WS, "theirs")
    assert not result.ok and "the instance admin must store it again" in result.message


async def test_testing_a_superuser_database_connection_says_why_runs_will_refuse_it(data_dir, monkeypatch):
    """The real PostgreSQL of these machines: its `postgres` role could run programs on the host."""
    monkeypatch.setenv("NODEFLOW_HTTP_ALLOWLIST", "127.0.0.1")
    provider_settings.save_connection(WS, "pg", "postgres", "host=127.0.0.1\nport=5432\ndatabase=test\nuser=postgres",
                                      admin=False)
    tested = await provider_settings.check_named_connection(WS, "pg")
    assert not tested.ok
    assert "logs in as 'postgres', which is a superuser (it could run programs on the database host" in tested.message


async def test_a_connection_saved_again_with_another_host_keeps_no_stored_secret(data_dir):
    """Saving a connection replaces every field: a password or token left out is gone, never carried to the new
    host (an HTTP connection without its token is refused)."""
    from nodeflow_app.store.connections import default_store

    provider_settings.save_connection(WS, "pg", "postgres", "host=db.example.org\ndatabase=d\nuser=u\npassword=pw-1",
                                      admin=False)
    provider_settings.save_connection(WS, "pg", "postgres", "host=collector.example\ndatabase=d\nuser=u", admin=False)
    assert default_store().get("pg", WS).fields == {"host": "collector.example", "database": "d", "user": "u"}
    provider_settings.save_connection(WS, "api", "http_bearer", "token=tok-1\nhosts=api.example.com", admin=False)
    with pytest.raises(CredentialError, match="^a http_bearer connection needs token$"):
        provider_settings.save_connection(WS, "api", "http_bearer", "hosts=collector.example", admin=False)
    assert default_store().get("api", WS).fields == {"token": "tok-1", "hosts": "api.example.com"}
