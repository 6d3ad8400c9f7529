"""Keys go only where they belong (issue 12, SPEC 12): a base URL written in a graph gets no key unless one is
chosen for it, and passes the SSRF guard; a provider's error never shows a key.

    Chat Start --> LLM Completion      (Model Selector ==model==> LLM.model)

The install's server is the session's fake (NODEFLOW_OPENAI_COMPATIBLE_BASE_URL); the "foreign" server is a
second fake on another port, written in the graph: a recording server on 127.0.0.1 that the allowlist lets
the request reach, so the test can look at the headers it received.
"""

from __future__ import annotations

from typing import Iterator

import pytest

from nodeflow_app.llm import providers
from nodeflow_app.llm.credentials import Credential
from nodeflow_app.llm.providers import COMPATIBLE_API_KEY_ENV, ModelConfigError, ModelRef, describe_failure
from nodeflow_app.net.guard import ALLOWLIST_ENV, MAX_BODY_ENV
from tests.llm.fake_openai import FakeOpenAI, FakeServer, http_error, text
from tests.llm.graphs import graph, of, run_graph

INSTALL_KEY = "sk-install-0123456789abcd"
OPENAI_KEY = "sk-openai-0123456789wxyz"


@pytest.fixture(scope="module")
def _foreign_server() -> Iterator[FakeServer]:
    server = FakeServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def foreign(_foreign_server: FakeServer, fake_llm, monkeypatch) -> Iterator[FakeOpenAI]:
    monkeypatch.setenv(COMPATIBLE_API_KEY_ENV, INSTALL_KEY)
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    monkeypatch.setenv(ALLOWLIST_ENV, "127.0.0.1")
    fake = _foreign_server.fake
    fake.reset()
    yield fake
    fake.reset()


def selector_graph(**selector) -> dict:
    return graph([("chat", "chat-start", {}),
                  ("sel", "model-selector", {"provider": "openai-compatible", "model_id": "m", **selector}),
                  ("llm", "llm-completion", {"model": "openai:never-used"})],
                 ["chat.output -> llm.input", "sel.model => llm.model"])


def carries_a_key(headers: dict[str, str]) -> bool:
    return "authorization" in headers or any(key in value for value in headers.values()
                                             for key in (INSTALL_KEY, OPENAI_KEY))


async def test_a_base_url_written_in_a_graph_receives_no_key(foreign, fake_llm):
    for provider in ("openai-compatible", "openai"):
        run, _ = await run_graph(selector_graph(provider=provider, base_url=foreign.base_url), payload="hi")
        assert run.status == "completed", run.error
    assert len(foreign.headers) == 2 and fake_llm.headers == []
    assert [carries_a_key(headers) for headers in foreign.headers] == [False, False], foreign.headers


async def test_an_answer_past_the_body_limit_from_a_graphs_url_stops_the_node_saying_why(foreign, monkeypatch):
    """A model URL a graph names streamed one 300 MB event, and the SDK held it all (37 MB -> 1.3 GB): the guarded
    client stops any body at NODEFLOW_HTTP_MAX_RESPONSE_MB, and the node's error says so, not "Connection error"."""
    monkeypatch.setenv(MAX_BODY_ENV, "1")
    foreign.script(text(["word " * 200] * 2000))  # ~2.5 MB of SSE
    run, events = await run_graph(selector_graph(base_url=foreign.base_url), payload="hi")
    assert run.status == "failed"
    assert ("model openai-compatible:m: the response from 127.0.0.1 is larger than 1 MB; NodeFlow stopped reading it"
            in of(events, "llm", "error")[0].data["error"])


async def test_the_installs_own_url_receives_its_key(foreign, fake_llm):
    run, _ = await run_graph(selector_graph(), payload="hi")  # no base URL: the install's
    assert run.status == "completed", run.error
    run, _ = await run_graph(selector_graph(base_url=fake_llm.base_url + "/"), payload="hi")  # the same URL, written
    assert run.status == "completed", run.error
    assert [h["authorization"] for h in fake_llm.headers] == [f"Bearer {INSTALL_KEY}"] * 2
    assert foreign.headers == []


async def test_a_key_chosen_for_a_graph_url_goes_there_only_if_it_was_stored_with_that_url(foreign, monkeypatch):
    """A graph may name a key for its URL ('Key for this URL'), but an editor chooses the URL: the key goes
    there only when the workspace stored it with that very URL, never the install's environment key."""
    run, events = await run_graph(selector_graph(base_url=foreign.base_url, credential="openai-compatible"),
                                  payload="hi")
    assert run.status == "failed" and foreign.headers == []
    assert "the openai-compatible key goes only to the URL stored with it" in of(events, "llm", "error")[0].data["error"]
    stored = {"openai": Credential("sk-stored-for-foreign-0001", foreign.base_url)}
    monkeypatch.setattr(providers, "_stored", lambda provider: stored.get(provider) or Credential(None, None))
    run, _ = await run_graph(selector_graph(base_url=foreign.base_url, credential="openai"), payload="hi")
    assert run.status == "completed", run.error
    assert foreign.headers[0]["authorization"] == "Bearer sk-stored-for-foreign-0001"


def test_the_environment_key_never_goes_to_a_url_a_workspace_stored_without_a_key(foreign, monkeypatch):
    """Any account owns a workspace and may store a URL for a provider: without a key stored with it, the
    install's OPENAI_API_KEY is not sent there; the install's own URL keeps getting it."""
    monkeypatch.setattr(providers, "_stored", lambda provider: Credential(None, "https://collector.example/v1"))
    assert providers.api_key_for("openai") is None
    with pytest.raises(ModelConfigError, match="the workspace's URL for it has no key stored with it"):
        providers.build_model("openai:gpt-4o")
    monkeypatch.setattr(providers, "_stored", lambda provider: Credential(None, None))
    assert providers.api_key_for("openai") == OPENAI_KEY


async def test_a_graph_url_to_an_internal_address_is_refused_before_any_request(foreign, monkeypatch):
    monkeypatch.delenv(ALLOWLIST_ENV)
    run, events = await run_graph(selector_graph(base_url=foreign.base_url), payload="hi")
    assert run.status == "failed"
    [error] = of(events, "llm", "error")
    assert error.data["error"] == (
        f"model openai-compatible:m: refused {foreign.base_url}: 127.0.0.1 is a loopback address (127.0.0.1); "
        f"only public addresses can be reached unless {ALLOWLIST_ENV} lists the host")
    assert foreign.headers == []


async def test_a_base_url_that_does_not_parse_is_named(foreign, fake_llm):
    run, events = await run_graph(selector_graph(base_url="http://[::1"), payload="hi")
    [error] = of(events, "llm", "error")
    assert "model openai-compatible:m: base URL 'http://[::1' is not a URL (" in error.data["error"]
    assert fake_llm.requests == [] and foreign.headers == []


async def test_a_provider_error_never_shows_a_key(foreign, fake_llm):
    fake_llm.script(http_error(401, f"bad key; you sent Authorization: Bearer {INSTALL_KEY} and "
                                    f"{{'x-api-key': '{OPENAI_KEY}'}} and {INSTALL_KEY} again"))
    run, events = await run_graph(selector_graph(), payload="hi")
    [error] = of(events, "llm", "error")
    message = error.data["error"]
    assert INSTALL_KEY not in message and OPENAI_KEY not in message
    assert message == ("model openai-compatible:m failed (HTTP 401): bad key; you sent Authorization: [hidden] and "
                       "{'x-api-key': '[hidden]'} and [hidden] again")


def test_describe_failure_hides_the_keys_of_the_model_and_its_chosen_credential(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    ref = ModelRef("openai-compatible", "m", "https://llm.example/v1", credential="openai")
    assert describe_failure(ref, f"echo {OPENAI_KEY}", []) == "model openai-compatible:m failed: echo [hidden]"


async def test_a_name_that_resolves_to_an_internal_address_at_connect_time_is_refused_and_said(foreign, monkeypatch):
    """The check before the call saw a public address; the connection resolves the name again and is refused
    (DNS rebinding): the error says why instead of the SDK's "Connection error."."""
    from nodeflow_app.net import guard

    answers = iter([["93.184.216.34"]])

    async def resolver(host: str, port: int) -> list[str]:
        return next(answers, ["127.0.0.1"])  # public for the first look-up, loopback afterwards

    monkeypatch.setattr(guard, "system_resolver", resolver)
    monkeypatch.setenv(ALLOWLIST_ENV, "")
    port = foreign.base_url.split(":")[2].split("/")[0]
    run, events = await run_graph(selector_graph(base_url=f"http://rebind.example:{port}/v1"), payload="hi")
    [error] = of(events, "llm", "error")
    assert error.data["error"] == (
        "model openai-compatible:m: refused rebind.example: rebind.example is a loopback address (127.0.0.1); "
        f"only public addresses can be reached unless {ALLOWLIST_ENV} lists the host")
    assert foreign.headers == []


# -- a base URL a workspace stored: any account owns a workspace, so it is guarded like a graph's ------------

def llm_graph() -> dict:
    return graph([("chat", "chat-start", {}), ("llm", "llm-completion", {"model": "openai-compatible:m"})],
                 ["chat.output -> llm.input"])


async def test_a_url_a_workspace_stored_passes_the_ssrf_guard(foreign, monkeypatch):
    stored = Credential("sk-workspace-own-0001", foreign.base_url)
    monkeypatch.setattr(providers, "_stored", lambda provider: stored if provider == "openai-compatible"
                        else Credential(None, None))
    monkeypatch.delenv(ALLOWLIST_ENV)
    run, events = await run_graph(llm_graph(), payload="hi")
    assert run.status == "failed"
    assert of(events, "llm", "error")[0].data["error"] == (
        f"model openai-compatible:m: refused {foreign.base_url}: 127.0.0.1 is a loopback address (127.0.0.1); "
        f"only public addresses can be reached unless {ALLOWLIST_ENV} lists the host")
    assert foreign.headers == []
    monkeypatch.setenv(ALLOWLIST_ENV, "127.0.0.1")  # the admin lets it through: the workspace's own key goes
    run, _ = await run_graph(llm_graph(), payload="hi")
    assert run.status == "completed"
    assert foreign.headers[-1]["authorization"] == "Bearer sk-workspace-own-0001"


async def test_a_stored_url_that_resolves_to_an_internal_address_at_connect_time_is_refused(foreign, monkeypatch):
    from nodeflow_app.net import guard

    answers = iter([["93.184.216.34"]])

    async def resolver(host: str, port: int) -> list[str]:
        return next(answers, ["127.0.0.1"])  # public for the check before the call, loopback when connecting

    port = foreign.base_url.split(":")[2].split("/")[0]
    stored = Credential("sk-workspace-own-0001", f"http://rebind.example:{port}/v1")
    monkeypatch.setattr(providers, "_stored", lambda provider: stored if provider == "openai-compatible"
                        else Credential(None, None))
    monkeypatch.setattr(guard, "system_resolver", resolver)
    monkeypatch.setenv(ALLOWLIST_ENV, "")
    run, events = await run_graph(llm_graph(), payload="hi")
    assert "refused rebind.example: rebind.example is a loopback address" in of(events, "llm", "error")[0].data["error"]
    assert foreign.headers == []


async def test_the_settings_test_of_a_stored_url_passes_the_ssrf_guard_and_the_installs_url_need_not(
        foreign, fake_llm, monkeypatch):
    from nodeflow_app import provider_settings

    monkeypatch.delenv(ALLOWLIST_ENV)
    provider_settings.save_credential("openai-compatible", "sk-workspace-own-0001", foreign.base_url, "w-team")
    result = await provider_settings.check_connection("openai-compatible", "w-team")
    assert not result.ok and result.message == (
        f"cannot reach {foreign.base_url}/models: refused 127.0.0.1: 127.0.0.1 is a loopback address (127.0.0.1); "
        f"only public addresses can be reached unless {ALLOWLIST_ENV} lists the host")
    assert foreign.headers == []
    # The install's own URL (NODEFLOW_OPENAI_COMPATIBLE_BASE_URL, the session's fake on 127.0.0.1) is the admin's.
    assert (await provider_settings.check_connection("openai-compatible", "w-other")).ok
