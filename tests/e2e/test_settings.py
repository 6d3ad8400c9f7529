"""The workspace's credentials page in Chromium (the owner's personal workspace here): set a provider key (the page
shows "set ••••abcd", never the key), test the connection (it lists the fake server's models), and, as the
instance admin, see the install's environment settings; docs/screenshot-settings.png is taken here."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from playwright.sync_api import expect

from nodeflow_app.llm.providers import package_missing
from nodeflow_app.store.accounts import AccountError, AccountStore
from nodeflow_app.store.graphs import GraphStore

from .server import Server

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-e2e-settings-0123456789abcd"


def test_set_a_key_see_it_as_set_and_list_models(page, nodeflow_server: Server, fake_llm) -> None:
    page.goto(nodeflow_server.url + "/")
    page.get_by_test_id("settings-link").click()
    page.wait_for_url("**/workspace/credentials")
    assert page.get_by_test_id("settings-title").inner_text() == "Credentials of Admin's workspace"
    install = page.get_by_test_id("install-settings")  # the owner of this install is its admin
    install.get_by_text("NODEFLOW_OPENAI_COMPATIBLE_BASE_URL").wait_for()
    card = page.get_by_test_id("provider-openai-compatible")
    card.wait_for()
    assert page.get_by_test_id("status-openai-compatible").inner_text() == "configured"  # its base URL is set
    assert page.get_by_test_id("status-openai").inner_text() == "not configured"
    # The pip line is the instance admin's (the owner here); others read that the admin must add the package.
    lacks = "this install lacks the anthropic package: pip install anthropic on the server, then restart NodeFlow"
    assert (lacks in page.get_by_test_id("provider-anthropic").inner_text()) == package_missing("anthropic")
    # On the Settings page itself: the field is below (not "on the Settings page").
    assert ("To configure: enter an API key below (or set OPENAI_API_KEY for the whole install)"
            in page.get_by_test_id("provider-openai").inner_text())
    # The install's URL for the admin, in plain sight (not only as an input's placeholder).
    assert page.get_by_test_id("url-openai-compatible").inner_text() == (
        f"Base URL: {fake_llm.base_url} (from NODEFLOW_OPENAI_COMPATIBLE_BASE_URL)")
    assert page.get_by_test_id("key-openai-compatible").inner_text() == "Key: not set"

    page.get_by_test_id("api-key-openai-compatible").fill(KEY)
    page.get_by_test_id("save-openai-compatible").click()
    key_line = page.get_by_test_id("key-openai-compatible")
    page.wait_for_function("() => document.querySelector('[data-testid=key-openai-compatible]')"
                           ".innerText.includes('••••abcd')")
    assert key_line.inner_text() == "Key: set ••••abcd (stored)"
    assert page.get_by_test_id("api-key-openai-compatible").input_value() == ""

    page.get_by_test_id("check-openai-compatible").click()
    page.get_by_test_id("models-openai-compatible").get_by_text("fake-model").wait_for()
    assert page.get_by_test_id("test-openai-compatible").inner_text() == "connected: 1 model(s)"

    page.reload()
    page.get_by_test_id("key-openai-compatible").wait_for()
    assert KEY not in page.content()  # the browser never gets the stored key back
    stored = sqlite3.connect(nodeflow_server.data_dir / "nodeflow.db").execute(
        "select secret from credential where provider = 'openai-compatible'").fetchone()[0]  # one workspace has it
    assert KEY not in stored  # encrypted at rest

    page.get_by_test_id("check-openai-compatible").click()
    page.get_by_test_id("models-openai-compatible").get_by_text("fake-model").wait_for()
    page.get_by_test_id("provider-openai-compatible").scroll_into_view_if_needed()
    page.screenshot(path=str(ROOT / "docs" / "screenshot-settings.png"))

    page.get_by_test_id("delete-openai-compatible").click()
    page.wait_for_function("() => document.querySelector('[data-testid=key-openai-compatible]')"
                           ".innerText === 'Key: not set'")


def test_test_connection_uses_the_key_and_url_typed_in_the_form(page, nodeflow_server: Server, fake_llm) -> None:
    """Before saving: a typed key is the one sent, a typed URL the one tried (under the SSRF guard, as saving it
    would be); nothing is stored by testing."""
    try:
        page.goto(nodeflow_server.url + "/workspace/credentials")
        page.get_by_test_id("api-key-openai-compatible").fill(KEY)
        page.get_by_test_id("check-openai-compatible").click()
        expect(page.get_by_test_id("test-openai-compatible")).to_have_text("connected: 1 model(s)")
        assert fake_llm.models_headers[-1]["authorization"] == f"Bearer {KEY}"  # the install has no key for it
        assert page.get_by_test_id("key-openai-compatible").inner_text() == "Key: not set"  # not saved

        page.get_by_test_id("base-url-openai-compatible").fill("http://127.0.0.1:9/v1")  # not the install's URL
        page.get_by_test_id("check-openai-compatible").click()
        expect(page.get_by_test_id("test-openai-compatible")).to_have_text(
            "cannot reach http://127.0.0.1:9/v1/models: refused 127.0.0.1: 127.0.0.1 is a loopback address "
            "(127.0.0.1); only public addresses can be reached unless NODEFLOW_HTTP_ALLOWLIST lists the host")
        assert len(fake_llm.models_headers) == 1
        page.reload()
        page.get_by_test_id("key-openai-compatible").wait_for()
        assert KEY not in page.content()
        expect(page.get_by_test_id("url-openai-compatible")).to_have_text(
            f"Base URL: {fake_llm.base_url} (from NODEFLOW_OPENAI_COMPATIBLE_BASE_URL)")
    finally:  # the test at the install's URL kept its models for the workspace: later tests start without them
        database = sqlite3.connect(nodeflow_server.data_dir / "nodeflow.db")
        with database:
            database.execute("delete from credential where provider = 'openai-compatible'")
        database.close()


def test_the_stored_key_is_not_sent_to_a_url_typed_with_an_empty_key_field(page, nodeflow_server: Server,
                                                                           fake_llm) -> None:
    """A co-owner cannot see the stored key: Test connection and Save with another URL ask for it again, and the
    other server never receives it."""
    try:
        page.goto(nodeflow_server.url + "/workspace/credentials")
        page.get_by_test_id("api-key-openai").fill(KEY)  # saved for OpenAI's own API
        page.get_by_test_id("save-openai").click()
        expect(page.get_by_test_id("key-openai")).to_have_text("Key: set ••••abcd (stored)")
        page.get_by_test_id("base-url-openai").fill(fake_llm.base_url)  # a server of the co-owner's
        page.get_by_test_id("check-openai").click()
        expect(page.get_by_test_id("test-openai")).to_contain_text(
            "type the API key again: it is only sent to the URL it was saved with")
        page.get_by_test_id("base-url-openai").fill("https://8.8.8.8/v1")  # public: the SSRF guard lets it pass
        page.get_by_test_id("save-openai").click()
        page.locator("[data-sonner-toast]").filter(has_text=(
            "Not saved: type the API key again: it is only sent to the URL it was saved with")).wait_for()
        expect(page.get_by_test_id("url-openai")).to_have_text("Base URL: the provider's own")
        assert fake_llm.models_headers == []
    finally:  # later tests of the session see the install as it was
        database = sqlite3.connect(nodeflow_server.data_dir / "nodeflow.db")
        with database:
            database.execute("delete from credential where provider = 'openai'")
        database.close()


def new_agent_model(page, server: Server) -> str:
    """The model a new Agent node gets in a new graph (a palette click adds it, selected)."""
    graphs = GraphStore(server.db_url)
    try:
        graph_id = graphs.create("Providers").id
    finally:
        graphs.engine.dispose()
    page.goto(f"{server.url}/graph/{graph_id}")
    page.wait_for_function("window.__nodeflowCanvas && window.__nodeflowCanvas.rev() > 0")
    page.get_by_test_id("palette-node-agent").click()
    page.get_by_test_id("inspector-form-agent").wait_for()
    model = page.get_by_test_id("inspector-form-agent").get_by_test_id("field-model")
    expect(model).not_to_have_value("")
    return model.input_value()


def test_a_new_model_node_gets_a_provider_the_workspace_set_up(page, nodeflow_server: Server, fake_llm) -> None:
    """The server's environment sets up only the OpenAI-compatible URL; Ollama's package is installed, but nobody
    said where an Ollama runs. Models a connection test listed become the suggestions, a key stored on the
    Settings page counts for new nodes, and a URL every run would refuse is refused when saved."""
    settings = nodeflow_server.url + "/workspace/credentials"
    try:
        page.goto(settings)
        assert page.get_by_test_id("status-ollama").inner_text() == "not configured"
        assert new_agent_model(page, nodeflow_server) == "openai-compatible:local-model"
        # A provider whose package the install lacks is offered as such, after those one can set up.
        missing = package_missing("anthropic")
        anthropic = page.locator("#nodeflow-model-refs option[value='anthropic:claude-sonnet-4-5']")
        expect(anthropic).to_have_text("Anthropic (not installed)" if missing else "Anthropic (not configured)")

        page.goto(settings)
        page.get_by_test_id("check-openai-compatible").click()
        page.get_by_test_id("models-openai-compatible").get_by_text("fake-model").wait_for()
        assert new_agent_model(page, nodeflow_server) == "openai-compatible:fake-model"
        options = page.locator("#nodeflow-model-refs option")
        assert options.first.get_attribute("value") == "openai-compatible:fake-model"

        page.goto(settings)
        page.get_by_test_id("api-key-openai").fill(KEY)
        page.get_by_test_id("save-openai").click()
        expect(page.get_by_test_id("status-openai")).to_have_text("configured")
        assert new_agent_model(page, nodeflow_server) == "openai:gpt-4o-mini"

        page.goto(settings)
        url_field = page.get_by_test_id("base-url-groq")
        url_field.fill("http://127.0.0.1:9/openai/v1")
        page.get_by_test_id("save-groq").click()
        page.locator("[data-sonner-toast]").filter(has_text=(
            "Not saved: refused http://127.0.0.1:9/openai/v1: 127.0.0.1 is a loopback address (127.0.0.1); only "
            "public addresses can be reached unless NODEFLOW_HTTP_ALLOWLIST lists the host")).wait_for()
        assert page.get_by_test_id("url-groq").inner_text() == "Base URL: the provider's own"
        url_field.fill("https://8.8.8.8/openai/v1")
        page.get_by_test_id("save-groq").click()
        expect(page.get_by_test_id("url-groq")).to_have_text("Base URL: https://8.8.8.8/openai/v1 (stored)")
        expect(page.get_by_test_id("base-url-groq")).to_have_value("https://8.8.8.8/openai/v1")
        page.reload()
        expect(page.get_by_test_id("url-groq")).to_have_text("Base URL: https://8.8.8.8/openai/v1 (stored)")
        expect(page.get_by_test_id("base-url-groq")).to_have_value("https://8.8.8.8/openai/v1")
        assert KEY not in page.content()
    finally:  # later tests of the session see the install as it was
        database = sqlite3.connect(nodeflow_server.data_dir / "nodeflow.db")
        with database:
            database.execute("delete from credential where provider in ('openai', 'groq', 'openai-compatible')")
        database.close()


def test_the_instance_admin_resets_a_password_and_the_person_is_signed_out(page, nodeflow_server: Server):
    """The accounts of the install, on the admin's credentials page: a reset shows a new password once, ends the
    person's sessions, and the new password signs them in (the old one does not)."""
    accounts = AccountStore(nodeflow_server.db_url)
    try:
        accounts.create_user("Rita Reset", "rita@example.org", "rita's old password")
        old_session, _ = accounts.sign_in("rita@example.org", "rita's old password")
    finally:
        accounts.engine.dispose()
    page.goto(f"{nodeflow_server.url}/workspace/credentials")
    listed = page.get_by_test_id("accounts")
    expect(listed).to_contain_text("rita@example.org")
    expect(listed).to_contain_text("instance admin")  # the owner
    page.get_by_test_id("reset-password-rita@example.org").click()
    new_password = page.get_by_test_id("new-password").inner_text()
    assert len(new_password) >= 12
    accounts = AccountStore(nodeflow_server.db_url)
    try:
        assert accounts.user_for_session(old_session) is None  # signed out everywhere
        assert accounts.sign_in("rita@example.org", new_password)[1].email == "rita@example.org"
        with pytest.raises(AccountError):  # the old password no longer signs in
            accounts.sign_in("rita@example.org", "rita's old password")
    finally:
        accounts.engine.dispose()
