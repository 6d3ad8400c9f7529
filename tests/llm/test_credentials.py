"""nodeflow_app/llm/credentials and store/credentials: the encrypted store, its key, and providers.py reading keys from it."""

from __future__ import annotations

import contextvars
import stat
import subprocess
import sys

import pytest
from cryptography.fernet import Fernet
from sqlalchemy import text

from nodeflow_app.llm import credentials, providers
from nodeflow_app.llm.credentials import Credential, CredentialError
from nodeflow_app.store import credentials as credential_store
from nodeflow_app.store.credentials import CredentialStore, default_store
from nodeflow_app.store.db import make_engine

KEY_ENVS = ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "GROQ_API_KEY", "OPENROUTER_API_KEY",
            providers.COMPATIBLE_API_KEY_ENV, providers.COMPATIBLE_BASE_URL_ENV, "REFLEX_DB_URL",
            credentials.SECRET_KEY_ENV]
SECRET = "sk-live-0123456789abcdef"


@pytest.fixture(autouse=True)
def data_dir(monkeypatch, tmp_path):
    """A fresh data folder (database and key file) and no key in the environment."""
    for name in KEY_ENVS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NODEFLOW_DATA_DIR", str(tmp_path))
    return tmp_path


def test_round_trip_stores_only_ciphertext(data_dir):
    store = default_store(create=True)
    store.set("openai", SECRET)
    store.set("openai-compatible", "local-key", base_url="http://llm.internal:8000/v1")
    assert store.get("openai") == Credential(SECRET, None)
    assert store.get("openai-compatible") == ("local-key", "http://llm.internal:8000/v1")
    assert store.get("groq") is None
    # The database holds neither the key nor the URL in the clear.
    raw = (data_dir / "nodeflow.db").read_bytes() + b"".join(p.read_bytes() for p in data_dir.glob("nodeflow.db-*"))
    assert SECRET.encode() not in raw and b"llm.internal" not in raw
    with store.engine.connect() as connection:
        secret = connection.execute(text("SELECT secret FROM credential WHERE provider = 'openai'")).scalar_one()
    assert SECRET not in secret and secret.startswith("gAAAA")  # a Fernet token
    # list() says which fields are set, never their values.
    listed = store.list()
    assert [(r["provider"], r["api_key"], r["base_url"]) for r in listed] == [
        ("openai", True, False), ("openai-compatible", True, True)]
    assert SECRET not in repr(listed)


def test_the_key_file_is_created_once_with_mode_0600(data_dir):
    assert default_store() is None  # nothing on disk yet: a lookup creates nothing
    assert not (data_dir / "secret.key").exists() and not (data_dir / "nodeflow.db").exists()
    default_store(create=True).set("groq", "gsk-1")
    key_file = data_dir / "secret.key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    before = key_file.read_bytes()
    default_store().set("anthropic", "a-1")
    assert key_file.read_bytes() == before and default_store().get("groq").api_key == "gsk-1"


def test_set_replaces_and_delete_removes(data_dir):
    store = default_store(create=True)
    store.set("openai", "one", base_url="http://proxy/v1")
    store.set("openai", "two")
    assert store.get("openai") == ("two", None)
    assert store.delete("openai") is True and store.delete("openai") is False
    assert store.get("openai") is None and store.list() == []
    with pytest.raises(CredentialError, match="nothing to store"):
        store.set("openai", "  ", base_url=None)


def test_a_replaced_key_file_is_a_clear_error(data_dir):
    default_store(create=True).set("openai", SECRET)
    (data_dir / "secret.key").write_bytes(Fernet.generate_key())
    with pytest.raises(CredentialError) as raised:
        providers.api_key_for("openai")
    message = str(raised.value)
    assert "cannot decrypt the stored credential for 'openai'" in message
    assert str(data_dir / "secret.key") in message and "NODEFLOW_SECRET_KEY" in message
    assert SECRET not in message


def test_a_missing_or_garbled_key_file_is_a_clear_error(data_dir):
    default_store(create=True).set("openai", SECRET)
    (data_dir / "secret.key").write_text("not a key")
    with pytest.raises(CredentialError, match="does not hold a Fernet key"):
        default_store().get("openai")
    (data_dir / "secret.key").unlink()
    with pytest.raises(CredentialError, match="key file .* is missing"):
        default_store().get("openai")


def test_the_secret_key_variable_is_used_and_checked(data_dir, monkeypatch):
    key = Fernet.generate_key().decode()
    monkeypatch.setenv(credentials.SECRET_KEY_ENV, key)
    default_store(create=True).set("openai", SECRET)
    assert not (data_dir / "secret.key").exists()
    assert CredentialStore(make_engine(credential_store.default_url()), key=key).get("openai").api_key == SECRET
    monkeypatch.setenv(credentials.SECRET_KEY_ENV, Fernet.generate_key().decode())
    with pytest.raises(CredentialError, match="another key than NODEFLOW_SECRET_KEY"):
        default_store().get("openai")
    monkeypatch.setenv(credentials.SECRET_KEY_ENV, "short")
    with pytest.raises(CredentialError, match="NODEFLOW_SECRET_KEY is not a Fernet key"):
        default_store().get("openai")


def test_a_token_moved_to_another_provider_is_refused(data_dir):
    store = default_store(create=True)
    store.set("openai", SECRET)
    store.set("groq", "gsk")
    with store.engine.begin() as connection:
        connection.execute(text("UPDATE credential SET secret = (SELECT secret FROM credential WHERE "
                                "provider = 'openai') WHERE provider = 'groq'"))
    with pytest.raises(CredentialError, match="belongs to 'openai'"):
        store.get("groq")


def test_the_workspace_key_comes_first_then_the_environment(monkeypatch):
    store = default_store(create=True)
    store.set("openai", "key-of-team-a", workspace_id="team-a")
    store.set("openai-compatible", None, "http://a.example/v1", workspace_id="team-a")
    monkeypatch.setenv("OPENAI_API_KEY", "from-env")
    monkeypatch.setenv(providers.COMPATIBLE_BASE_URL_ENV, "http://install.example/v1")
    contextvars.copy_context().run(_keys_seen_by_each_workspace)
    assert credentials.current_workspace() == ""  # the workspace was set in the copied context only


def _keys_seen_by_each_workspace() -> None:
    credentials.use_workspace("team-a")
    assert providers.api_key_for("openai") == "key-of-team-a"
    assert providers.base_url_for("openai-compatible") == "http://a.example/v1"
    credentials.use_workspace("team-b")  # nothing stored: the install's environment keys
    assert providers.api_key_for("openai") == "from-env"
    assert providers.base_url_for("openai-compatible") == "http://install.example/v1"
    assert default_store().list("team-b") == [] and [r["provider"] for r in default_store().list("team-a")] == [
        "openai", "openai-compatible"]


def test_a_token_copied_to_another_workspace_is_refused():
    store = default_store(create=True)
    store.set("openai", SECRET, workspace_id="team-a")
    with store.engine.begin() as conn:
        conn.execute(text("update credential set workspace_id = 'team-b'"))
    with pytest.raises(CredentialError, match="belongs to"):
        store.get("openai", "team-b")


def test_credentials_stored_before_accounts_join_the_owner_workspace():
    store = default_store(create=True)
    store.set("openai", "old-install-key")
    store.set("groq", "old-groq")
    store.set("groq", "owner-groq", workspace_id="w-owner")
    store.set("openai-compatible", None, models=("tested-model",))  # only what a connection test listed
    assert store.adopt("w-owner") == 2  # groq: the owner's own key stays
    assert store.list("") == []
    assert store.get("openai-compatible", "w-owner") == (None, None)
    assert store.models("openai-compatible", "w-owner") == ("tested-model",)
    assert store.get("openai", "w-owner").api_key == "old-install-key"
    assert store.get("groq", "w-owner").api_key == "owner-groq"


def test_provider_status_and_models_use_a_stored_key():
    status = {row["name"]: row for row in providers.provider_status()}
    assert status["openai"]["steps"] == [providers.key_step("openai")]
    store = default_store(create=True)
    store.set("openai", SECRET)
    store.set("openai-compatible", None, base_url="http://stored:1/v1")
    status = {row["name"]: row for row in providers.provider_status()}
    assert status["openai"]["configured"] and status["openai-compatible"]["configured"]
    assert not status["groq"]["configured"]
    model = providers.build_model("openai:gpt-4o-mini")
    assert model.api_key == SECRET
    compatible = providers.build_model("openai-compatible:qwen")
    assert (compatible.base_url, compatible.api_key) == ("http://stored:1/v1", "not-provided")


def test_lookups_happen_lazily_not_at_import(data_dir):
    code = ("import sys, nodeflow_app.llm.providers; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('cryptography', 'sqlalchemy'))); "
            "print(list(__import__('pathlib').Path(sys.argv[1]).iterdir()))")
    out = subprocess.run([sys.executable, "-c", code, str(data_dir)], capture_output=True, text=True,
                         check=True).stdout
    assert out.splitlines() == ["[]", "[]"]


def test_an_unreachable_database_is_a_clear_error(monkeypatch):
    pytest.importorskip("psycopg")
    monkeypatch.setenv("REFLEX_DB_URL", "postgresql+psycopg://nodeflow:pw@127.0.0.1:9/nodeflow")
    with pytest.raises(CredentialError, match=r"cannot read the credential store in postgresql\+psycopg://"
                                              r"nodeflow:\*\*\*@127\.0\.0\.1:9/nodeflow: OperationalError"):
        providers.api_key_for("openai")
