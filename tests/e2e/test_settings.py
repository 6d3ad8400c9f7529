"""The workspace's credentials page in Chromium (the owner's personal workspace here): set a provider key (the page
shows "set ••••abcd", never the key), test the connection (it lists the fake server's models), and, as the
instance admin, see the install's environment settings; docs/screenshot-settings.png is taken here."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from playwright.sync_api import expect

from nodeflow_app.store.accounts import AccountError, AccountStore

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
    assert "set OPENAI_API_KEY" in page.get_by_test_id("provider-openai").inner_text()
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
