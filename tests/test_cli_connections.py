"""`nodeflow connections set|list|delete`: named HTTP and database connections, encrypted, never printed back."""

from __future__ import annotations

import io

import pytest

from nodeflow_app.cli import main
from nodeflow_app.llm.credentials import SECRET_KEY_ENV
from nodeflow_app.store.connections import default_store


@pytest.fixture(autouse=True)
def data_dir(monkeypatch, tmp_path):
    monkeypatch.delenv("REFLEX_DB_URL", raising=False)
    monkeypatch.delenv(SECRET_KEY_ENV, raising=False)
    monkeypatch.setenv("NODEFLOW_DATA_DIR", str(tmp_path))
    return tmp_path


def test_set_list_and_delete(capsys, monkeypatch, data_dir):
    monkeypatch.setattr("sys.stdin", io.StringIO("pa55word\n"))
    assert main(["connections", "set", "warehouse", "postgres", "host=db.internal", "database=shop",
                 "user=reader", "password=-"]) == 0
    assert main(["connections", "set", "api", "http_bearer", "token=t0ken", "--workspace", "team"]) == 0
    assert main(["connections", "list"]) == 0
    out = capsys.readouterr().out
    assert "stored the postgres connection 'warehouse' (encrypted)" in out
    assert out.splitlines()[-2:] == ["NAME       KIND", "warehouse  postgres"]
    assert "pa55word" not in out and b"pa55word" not in (data_dir / "nodeflow.db").read_bytes()
    stored = default_store().get("warehouse")
    assert (stored.kind, stored.fields["password"], stored.fields["host"]) == ("postgres", "pa55word", "db.internal")
    assert "pa55word" not in repr(stored)
    assert default_store().get("api") is None and default_store().get("api", "team").fields == {"token": "t0ken"}

    assert main(["connections", "delete", "warehouse"]) == 0
    assert main(["connections", "list"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "no connections in workspace 'default'"


def test_bad_input_is_named(capsys):
    assert main(["connections", "set", "x", "http_basic", "username=ada"]) == 2
    assert "a http_basic connection needs password" in capsys.readouterr().err
    assert main(["connections", "set", "x", "sqlite", "path=a.db", "host=h"]) == 2
    assert "a sqlite connection has no field host; its fields are: path" in capsys.readouterr().err
    assert main(["connections", "set", "x", "sqlite", "path"]) == 2
    assert "expected FIELD=VALUE, got 'path'" in capsys.readouterr().err
    assert main(["connections", "delete", "nope"]) == 2
    assert "no connection 'nope' in workspace 'default'" in capsys.readouterr().err


def test_once_an_owner_exists_the_default_workspace_is_the_owners(capsys, data_dir):
    """Not a "default" workspace nobody has: the owner's personal one, which the owner's runs use."""
    from nodeflow_app.store.accounts import AccountStore
    from nodeflow_app.store.credentials import default_store as credential_store

    assert main(["connections", "set", "early", "http_bearer", "token=t1"]) == 0  # before any account
    accounts = AccountStore(f"sqlite:///{data_dir / 'nodeflow.db'}")
    owner = accounts.create_user("Olga", "olga@example.org", "owner password")
    workspace = accounts.personal_workspace(owner.id).id
    accounts.engine.dispose()
    assert main(["connections", "set", "api", "http_bearer", "token=t2"]) == 0
    assert main(["credentials", "set", "openai", "--key", "sk-owner-0000"]) == 0
    assert default_store().get("api", workspace).fields == {"token": "t2"}
    assert default_store().get("api") is None and default_store().get("early").fields == {"token": "t1"}
    assert credential_store().get("openai", workspace).api_key == "sk-owner-0000"
    assert default_store().adopt(workspace) == 1  # what the server does at start (adopt_unowned_graphs)
    assert main(["connections", "list"]) == 0
    assert capsys.readouterr().out.splitlines()[-3:] == ["NAME   KIND", "api    http_bearer", "early  http_bearer"]


def test_the_list_names_a_sqlite_connection_of_the_older_format(capsys):
    """Any workspace owner could store one then: it is not opened until the instance admin stores it again."""
    import json

    from nodeflow_app.store.models import ConnectionRow

    assert main(["connections", "set", "new", "sqlite", "path=shop.db"]) == 0
    store = default_store()
    old = {"workspace_id": "default", "name": "old", "kind": "sqlite", "fields": {"path": "theirs.db"}}
    with store._session() as session:  # as the version before wrote it: no format
        session.merge(ConnectionRow(workspace_id="default", name="old", kind="sqlite",
                                    secret=store._fernet(create=True).encrypt(json.dumps(old).encode()).decode()))
        session.commit()

    assert main(["connections", "list"]) == 0
    assert capsys.readouterr().out.splitlines()[-3:] == [
        "NAME  KIND", "new   sqlite",
        "old   sqlite (not opened: stored before only the instance admin could; store it again)"]
