"""`nodeflow providers` and `nodeflow credentials set|list|delete`: in-process through `main([...])`, once as a process.

Every test has its own data folder (database and key file) and no provider key in the environment.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys

import pytest
from cryptography.fernet import Fernet

from nodeflow_app.cli import main
from nodeflow_app.llm import providers
from nodeflow_app.llm.credentials import SECRET_KEY_ENV
from nodeflow_app.store.credentials import default_store

SECRET = "sk-cli-secret-value-42"
KEY_ENVS = ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "GROQ_API_KEY", "OPENROUTER_API_KEY",
            providers.COMPATIBLE_API_KEY_ENV, providers.COMPATIBLE_BASE_URL_ENV, "REFLEX_DB_URL", SECRET_KEY_ENV]


@pytest.fixture(autouse=True)
def data_dir(monkeypatch, tmp_path):
    for name in KEY_ENVS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NODEFLOW_DATA_DIR", str(tmp_path))
    return tmp_path


def rows(out: str) -> dict[str, str]:
    """The providers table by provider name (each line without its name)."""
    header, *lines = out.splitlines()
    assert header.split() == ["PROVIDER", "LABEL", "STATUS", "TO", "CONFIGURE"]
    return {line.split()[0]: line for line in lines}


def test_providers_says_how_to_configure_each(capsys):
    assert main(["providers"]) == 0
    table = rows(capsys.readouterr().out)
    assert set(table) == set(providers.PROVIDERS)
    assert "not configured" in table["openai"]
    assert table["openai"].endswith("enter an API key under OpenAI on the Settings page or with `nodeflow "
                                    "credentials set openai` (or set OPENAI_API_KEY for the whole install)")
    assert "on the Settings page or with `nodeflow credentials set openai-compatible --base-url URL`" in (
        table["openai-compatible"])


def test_providers_shows_a_missing_package(capsys, monkeypatch):
    monkeypatch.setattr(providers.importlib.util, "find_spec", lambda name: None)
    assert main(["providers"]) == 0
    assert "pip install anthropic" in rows(capsys.readouterr().out)["anthropic"]


def test_set_from_stdin_then_providers_list_and_delete(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(SECRET + "\n"))
    assert main(["credentials", "set", "openai"]) == 0
    assert main(["credentials", "set", "openai-compatible", "--base-url", "http://llm:9/v1", "--key", "k2"]) == 0
    assert default_store().get("openai") == (SECRET, None)
    said = capsys.readouterr().out
    assert said.splitlines() == ["stored the API key for openai (encrypted)",
                                 "stored the API key and base URL for openai-compatible (encrypted)"]
    assert main(["providers"]) == 0
    table = rows(capsys.readouterr().out)
    assert "  configured" in table["openai"] and "  configured" in table["openai-compatible"]
    assert "not configured" in table["groq"]
    assert main(["credentials", "list"]) == 0
    listed = capsys.readouterr().out
    assert listed.splitlines() == ["PROVIDER           API KEY  BASE URL", "openai             set      -",
                                   "openai-compatible  set      set"]
    assert SECRET not in said + listed and "http://llm:9/v1" not in listed
    assert main(["credentials", "delete", "openai"]) == 0
    assert default_store().get("openai") is None
    assert main(["credentials", "delete", "openai"]) == 2
    assert "no stored credential for openai" in capsys.readouterr().err


def test_unknown_provider_and_empty_key_are_refused(capsys, monkeypatch):
    assert main(["credentials", "set", "mistral", "--key", SECRET]) == 2
    assert "unknown provider 'mistral'" in capsys.readouterr().err
    monkeypatch.setattr(sys, "stdin", io.StringIO("\n"))
    assert main(["credentials", "set", "openai"]) == 2
    assert "nothing to store" in capsys.readouterr().err


def test_list_with_nothing_stored_creates_nothing(capsys, data_dir):
    assert main(["credentials", "list"]) == 0
    assert capsys.readouterr().out == "no stored credentials\n"
    assert list(data_dir.iterdir()) == []


def test_a_wrong_key_is_a_clear_message_not_a_traceback(capsys, data_dir):
    assert main(["credentials", "set", "openai", "--key", SECRET]) == 0
    (data_dir / "secret.key").write_bytes(Fernet.generate_key())
    capsys.readouterr()
    assert main(["providers"]) == 2
    out, err = capsys.readouterr()
    assert err.startswith("nodeflow providers: cannot decrypt the stored credential for 'openai'")
    assert str(data_dir / "secret.key") in err and "Traceback" not in err and SECRET not in out + err


def test_as_a_process_reading_the_key_from_a_pipe(data_dir):
    env = {k: v for k, v in os.environ.items() if k not in KEY_ENVS} | {"NODEFLOW_DATA_DIR": str(data_dir)}
    done = subprocess.run([sys.executable, "-m", "nodeflow_app.cli", "credentials", "set", "groq"],
                          input=SECRET + "\n", capture_output=True, text=True, env=env, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, "stored the API key for groq (encrypted)\n", "")
    done = subprocess.run([sys.executable, "-m", "nodeflow_app.cli", "providers"],
                          capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0 and SECRET not in done.stdout
    groq = rows(done.stdout)["groq"]  # still "not configured" when the groq package is missing, but not for its key
    assert "  configured" in groq or ("pip install groq" in groq and "GROQ_API_KEY" not in groq)
    assert oct((data_dir / "secret.key").stat().st_mode & 0o777) == "0o600"
