"""`nodeflow users create|list|reset-password` as a subprocess: passwords from stdin, never echoed, clear errors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def nodeflow(tmp_path, *args: str, stdin: str = "") -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NODEFLOW_DATA_DIR": str(tmp_path),
           "REFLEX_DB_URL": f"sqlite:///{tmp_path / 'nodeflow.db'}"}
    return subprocess.run([sys.executable, "-m", "nodeflow_app.cli", "users", *args], input=stdin, env=env,
                          cwd=ROOT, capture_output=True, text=True, timeout=60)


def test_create_list_and_reset_a_password(tmp_path):
    created = nodeflow(tmp_path, "create", "Ada@Example.org", "--name", "Ada", stdin="first password\n")
    assert created.returncode == 0 and created.stdout.strip() == "created ada@example.org (instance admin)"
    assert nodeflow(tmp_path, "create", "bob@example.org", stdin="bob password\n").stdout.strip() == \
        "created bob@example.org"
    listed = nodeflow(tmp_path, "list")
    assert listed.returncode == 0 and "ada@example.org" in listed.stdout and "yes" in listed.stdout
    assert "first password" not in listed.stdout + created.stdout + created.stderr
    reset = nodeflow(tmp_path, "reset-password", "ada@example.org", stdin="second password\n")
    assert reset.returncode == 0 and "their sessions ended" in reset.stdout
    from nodeflow_app.store.accounts import AccountStore

    store = AccountStore(f"sqlite:///{tmp_path / 'nodeflow.db'}")
    assert store.sign_in("ada@example.org", "second password")[1].name == "Ada"
    store.engine.dispose()


def test_errors_are_one_line_and_exit_2(tmp_path):
    short = nodeflow(tmp_path, "create", "ada@example.org", stdin="short\n")
    assert (short.returncode, short.stderr.strip()) == (
        2, "nodeflow users: a password needs at least 8 characters")
    missing = nodeflow(tmp_path, "reset-password", "nobody@example.org", stdin="whatever long\n")
    assert (missing.returncode, missing.stderr.strip()) == (2, "nodeflow users: no account with nobody@example.org")
    assert "Traceback" not in short.stderr + missing.stderr
