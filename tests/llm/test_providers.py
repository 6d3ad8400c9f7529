"""nodeflow_app/llm/providers: references, provider status, building Agno models with one shared HTTP client."""

from __future__ import annotations

import subprocess
import sys

import httpx
import pytest

from nodeflow_app.llm import providers
from nodeflow_app.llm.providers import ModelConfigError, build_model, parse_ref, provider_status

KEY_ENVS = ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "GROQ_API_KEY", "OPENROUTER_API_KEY",
            providers.COMPATIBLE_API_KEY_ENV, providers.COMPATIBLE_BASE_URL_ENV, providers.MAX_RETRIES_ENV,
            providers.OLLAMA_HOST_ENV]


@pytest.fixture(autouse=True)
def no_keys(monkeypatch):
    for name in KEY_ENVS:
        monkeypatch.delenv(name, raising=False)


def test_importing_providers_imports_no_sdk():
    code = ("import sys, nodeflow_app.llm.providers as p; p.provider_status(); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('agno', 'openai', 'anthropic', 'httpx')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("text, provider, model", [
    ("openai:gpt-4o-mini", "openai", "gpt-4o-mini"),
    ("ollama:llama3.2:3b", "ollama", "llama3.2:3b"),
    (" anthropic : claude-sonnet-4-5 ", "anthropic", "claude-sonnet-4-5"),
])
def test_parse_ref(text, provider, model):
    ref = parse_ref(text)
    assert (ref.provider, ref.model, ref.ref) == (provider, model, f"{provider}:{model}")


def test_parse_a_model_selector_dict():
    ref = parse_ref({"ref": "openai-compatible:qwen", "provider": "openai-compatible", "model": "qwen",
                     "base_url": "http://x/v1", "temperature": 0.3})
    assert (ref.provider, ref.model, ref.base_url, ref.temperature) == ("openai-compatible", "qwen", "http://x/v1", 0.3)


@pytest.mark.parametrize("value, message", [
    ("gpt-4o-mini", "a model is written provider:model"),
    ("mistral:large", "unknown provider 'mistral'"),
    ("openai:", "choose a model for provider 'openai'"),
    (42, "a model is written provider:model"),
    ({"provider": "openai", "model": "gpt-4o", "temperature": "hot"},
     r"a model's temperature is a number from 0 to 2, got 'hot'"),  # a reference an expression built
])
def test_bad_refs(value, message):
    with pytest.raises(ModelConfigError, match=message):
        parse_ref(value)


def test_status_says_how_to_configure(monkeypatch):
    status = {row["name"]: row for row in provider_status()}
    assert set(status) == set(providers.PROVIDERS)
    # A web user adds keys on the Settings page; the environment variable is the install-wide way.
    assert status["openai"]["configured"] is False and status["openai"]["steps"] == [
        "enter an API key under OpenAI on the Settings page (or set OPENAI_API_KEY for the whole install)"]
    assert status["openai-compatible"]["steps"] == [
        "enter a base URL under OpenAI-compatible URL on the Settings page (or set "
        f"{providers.COMPATIBLE_BASE_URL_ENV} for the whole install, or give a base URL in a Model Selector)"]
    # Ollama needs no key, but is set up only once someone said where it runs.
    assert status["ollama"]["configured"] is False and status["ollama"]["steps"][-1] == (
        "enter a base URL under Ollama on the Settings page (or set OLLAMA_HOST for the whole install)")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv(providers.COMPATIBLE_BASE_URL_ENV, "http://x/v1")
    monkeypatch.setenv(providers.OLLAMA_HOST_ENV, "http://ollama.internal:11434")
    status = {row["name"]: row for row in provider_status()}
    assert status["openai"]["configured"] and status["openai"]["how"] == ""
    assert status["openai-compatible"]["configured"]
    assert status["ollama"]["steps"] in ([], ["pip install ollama"])


@pytest.mark.parametrize("base_url", [None, "http://ollama.internal:11434"])
def test_ollama_gets_no_key_and_stays_on_its_own_host(monkeypatch, base_url):
    """Agno's Ollama reads OLLAMA_API_KEY itself and takes any key as "use ollama.com": neither may happen."""
    monkeypatch.setenv("OLLAMA_API_KEY", "sk-install-ollama")
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    model = build_model("ollama:llama3.2:3b", base_url=base_url)
    client = model.get_client()._client  # the httpx client the ollama package built
    assert str(client.base_url).rstrip("/") == (base_url or "http://127.0.0.1:11434")
    # The package puts the environment's key on its client; what matters is what leaves with a request.
    sent = []
    client._transport = httpx.MockTransport(lambda request: sent.append(request) or httpx.Response(200, json={}))
    client.get("/api/version")
    assert sent[0].url.host == httpx.URL(base_url or "http://127.0.0.1:11434").host
    assert "authorization" not in sent[0].headers and "sk-install-ollama" not in str(sent[0].headers)
    # A URL written in a graph was checked by the SSRF guard; its client must not follow a redirect elsewhere.
    assert client.follow_redirects is (base_url is None)


async def test_an_ollama_host_that_resolves_inside_when_connecting_is_refused(monkeypatch):
    """The check before the call saw a public address; the ollama package's own client connects through the
    guard's transport, which resolves the name again and refuses loopback (DNS rebinding)."""
    import socket

    from nodeflow_app.net import guard

    answers = iter([["93.184.216.34"]])

    async def resolver(host: str, port: int) -> list[str]:
        return next(answers, ["127.0.0.1"])  # public for the first look-up, loopback afterwards

    monkeypatch.setattr(guard, "system_resolver", resolver)
    monkeypatch.setenv(guard.ALLOWLIST_ENV, "")
    with socket.socket() as listener:  # what the name points at by then: it must never see a connection
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.setblocking(False)
        url = f"http://rebind.example:{listener.getsockname()[1]}"
        await guard.check_url(url)  # as a run does before the call
        model = build_model("ollama:llama3.2:3b", base_url=url)
        with pytest.raises(httpx.ConnectError, match="rebind.example is a loopback address"):
            await model.get_async_client()._client.get("/api/version")
        with pytest.raises(BlockingIOError):
            listener.accept()


def test_status_names_a_missing_package(monkeypatch):
    monkeypatch.setattr(providers.importlib.util, "find_spec", lambda name: None)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    row = next(r for r in provider_status() if r["name"] == "anthropic")
    assert row["steps"] == ["pip install anthropic"]


def test_openai_model_reads_the_key_when_built(monkeypatch):
    with pytest.raises(ModelConfigError, match=r"OpenAI is not configured: enter an API key under OpenAI on the "
                                               r"Settings page \(or set OPENAI_API_KEY for the whole install\)"):
        build_model("openai:gpt-4o-mini")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    model = build_model("openai:gpt-4o-mini", temperature=0.2, max_retries=0, max_tokens=50)
    assert type(model).__name__ == "OpenAIChat"
    assert (model.id, model.api_key, model.temperature, model.max_retries, model.max_tokens) == (
        "gpt-4o-mini", "sk-test", 0.2, 0, 50)


def test_openai_compatible_needs_a_base_url(monkeypatch):
    with pytest.raises(ModelConfigError, match=r"needs a base URL \(for example http://localhost:8000/v1\): enter "
                                               r"a base URL under OpenAI-compatible URL on the Settings page \(or "
                                               "set NODEFLOW_OPENAI_COMPATIBLE_BASE_URL for the whole install"):
        build_model("openai-compatible:qwen")
    monkeypatch.setenv(providers.COMPATIBLE_BASE_URL_ENV, "http://env:1/v1")
    monkeypatch.setenv(providers.MAX_RETRIES_ENV, "0")
    model = build_model("openai-compatible:qwen")
    assert type(model).__name__ == "OpenAILike"
    assert (model.base_url, model.api_key, model.max_retries) == ("http://env:1/v1", "not-provided", 0)
    model = build_model({"provider": "openai-compatible", "model": "qwen", "base_url": "http://sel/v1",
                         "temperature": 0.5}, api_key="k")
    assert (model.base_url, model.api_key, model.temperature) == ("http://sel/v1", "k", 0.5)


async def test_one_shared_http_client_per_provider_and_base_url(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    a = build_model("openai:gpt-4o-mini")
    b = build_model("openai:gpt-4o")
    c = build_model({"provider": "openai-compatible", "model": "m", "base_url": "http://one/v1"})
    d = build_model({"provider": "openai-compatible", "model": "m", "base_url": "http://two/v1"})
    assert a.http_client is b.http_client
    assert c.http_client is not a.http_client and c.http_client is not d.http_client
    await providers.close_http_clients()
    assert a.http_client.is_closed


def test_no_shared_client_outside_an_event_loop(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert build_model("openai:gpt-4o-mini").http_client is None


def test_a_missing_sdk_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    real = providers.importlib.import_module

    def refuse(name, *args):
        if name == "agno.models.anthropic":
            raise ImportError("No module named 'anthropic'")
        return real(name, *args)

    monkeypatch.setattr(providers.importlib, "import_module", refuse)
    with pytest.raises(ModelConfigError, match="Anthropic models need a package: pip install anthropic"):
        build_model("anthropic:claude-sonnet-4-5")


def test_a_setting_the_model_class_does_not_take_is_refused_not_dropped(monkeypatch):
    import dataclasses

    @dataclasses.dataclass
    class NoTokenLimit:  # like Ollama: sampling settings, no max_tokens field
        id: str
        api_key: str | None = None
        base_url: str | None = None
        temperature: float | None = None

    monkeypatch.setattr(providers, "_model_class", lambda spec, ref: NoTokenLimit)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert build_model("openai:m", temperature=0.5, max_tokens=None).temperature == 0.5
    with pytest.raises(ModelConfigError, match=r"^OpenAI models do not take max_tokens, reasoning_effort; clear them"):
        build_model("openai:m", max_tokens=5, reasoning_effort="low")
