"""Migrations: a database made before them (the baseline schema, with data) upgrades in place and keeps its
graphs, chats and runs; a fresh database is created at the newest revision without running migrations.
On SQLite and on the real PostgreSQL."""

from __future__ import annotations

import json

import pytest
from alembic import command
from alembic.migration import MigrationContext
import sqlalchemy as sa
from sqlalchemy import inspect

from nodeflow_app.store import migrations
from nodeflow_app.store.chats import ChatStore
from nodeflow_app.store.db import make_engine
from nodeflow_app.store.graphs import GraphStore
from nodeflow_app.store.runs import RunStore
from tests.store.postgres import POSTGRES_URL, private_schema


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request, tmp_path):
    if request.param == "sqlite":
        engine = make_engine(f"sqlite:///{tmp_path / 'old.db'}")
        yield engine
        engine.dispose()
        return
    with private_schema() as schema:
        engine = make_engine(POSTGRES_URL).execution_options(schema_translate_map={None: schema})
        yield engine
        engine.dispose()


def _insert(conn, table: str, **values) -> None:
    # A Table (unlike raw SQL or sa.table) follows the engine's schema_translate_map (PostgreSQL tests).
    conn.execute(sa.Table(table, sa.MetaData(), *(sa.Column(k) for k in values)).insert().values(**values))


def old_database(engine) -> None:
    """The schema main had before migrations, holding a graph, a chat with a message and a run."""
    with engine.begin() as conn:
        command.upgrade(migrations._config(conn), migrations.BASELINE)
        sa.Table("alembic_version", sa.MetaData()).drop(conn)  # main never had one
        graph = json.dumps({"id": "g1", "name": "Old graph", "version": 1, "nodes": [], "edges": []})
        _insert(conn, "graph", id="g1", name="Old graph", graph_json=graph, node_count=0, version=1,
                created_at=1.0, updated_at=2.0)
        _insert(conn, "chat", id="c1", graph_id="g1", title="Old chat", created_at=1.0, updated_at=2.0)
        _insert(conn, "chat_message", id="m1", chat_id="c1", role="user", status="complete", created_at=1.0,
                blocks_json=json.dumps([{"type": "text", "text": "hi"}]))
        _insert(conn, "run", id="r1", graph_id="g1", graph_version=1, graph_json=graph, status="completed",
                started_at=1.0, chat_id="c1")
        _insert(conn, "node_run", run_id="r1", node_id="n1", node_type="chat-start", node_name="Chat", status="completed",
                sequence=1, cached=False, updated_at=1.0)
        AGNO_SESSIONS.create(conn)  # Agno's session storage shares the database: migrations leave it alone
        conn.execute(AGNO_SESSIONS.insert().values(session_id="c1:agent", session_data='{"runs": 1}'))


AGNO_SESSIONS = sa.Table("agno_sessions", sa.MetaData(), sa.Column("session_id", sa.String(64), primary_key=True),
                         sa.Column("session_data", sa.Text()))


def revision(engine) -> str | None:
    with engine.connect() as conn:
        return migrations.context(conn, engine).get_current_revision()


def test_an_old_database_upgrades_in_place_and_keeps_its_data(engine):
    old_database(engine)
    migrations._done.clear()
    store = GraphStore(engine)
    assert revision(engine) == migrations.head()
    assert [g.name for g in store.list()] == ["Old graph"]
    assert store.get("g1").graph["name"] == "Old graph"
    schema = (engine.get_execution_options().get("schema_translate_map") or {}).get(None)
    columns = {c["name"] for c in inspect(engine).get_columns("graph", schema=schema)}
    assert "workspace_id" in columns
    assert {"user_account", "workspace", "membership", "api_token"} <= set(
        inspect(engine).get_table_names(schema=schema))
    chats = ChatStore(engine)
    assert [c.title for c in chats.list_chats("g1")] == ["Old chat"]
    runs = RunStore(engine)
    old_run = runs.get_run("r1")
    assert (old_run["status"], old_run["started_by"], old_run["context"]) == ("completed", None, {"conversation": "c1"})
    assert [n["node_id"] for n in old_run["nodes"]] == ["n1"], "the node records survived the table copy"
    with engine.connect() as conn:
        assert conn.execute(sa.select(AGNO_SESSIONS)).all() == [("c1:agent", '{"runs": 1}')]


def test_sessions_made_before_the_cookie_was_httponly_end_and_accounts_stay(engine):
    import hashlib
    import time

    from nodeflow_app.store.accounts import AccountStore

    with engine.begin() as conn:
        command.upgrade(migrations._config(conn), "0010_workspace_templates")
        _insert(conn, "user_account", id="u1", email="ada@example.org", name="Ada", password_hash="x",
                is_admin=True, created_at=1.0)
        _insert(conn, "user_session", token_hash=hashlib.sha256(b"old-cookie").hexdigest(), user_id="u1",
                created_at=time.time(), expires_at=time.time() + 3600)
    migrations._done.clear()

    accounts = AccountStore(engine)  # upgrades to the newest revision

    assert revision(engine) == migrations.head()
    assert accounts.user_for_session("old-cookie") is None
    assert accounts.user("u1").email == "ada@example.org"


def test_failed_sign_ins_made_before_addresses_were_kept_stay_counted_per_email(engine):
    """Migration 0013: failed sign-ins keep the client's address; those made before have none and still count
    against their email's limit across addresses, and the limits count new ones by address."""
    import time

    from nodeflow_app.store import accounts as accounts_module
    from nodeflow_app.store.accounts import AccountError, AccountStore, SignInThrottled
    from nodeflow_app.store.models import SignInAttemptRow

    with engine.begin() as conn:
        command.upgrade(migrations._config(conn), "0012_run_graph_started_index")
        for _ in range(accounts_module.MAX_FAILED_FOR_EMAIL - 1):
            _insert(conn, "sign_in_attempt", email="ada@example.org", at=time.time())
    migrations._done.clear()

    accounts = AccountStore(engine)  # upgrades to the newest revision

    assert revision(engine) == migrations.head()
    with pytest.raises(AccountError, match="^wrong email or password$"):
        accounts.sign_in("ada@example.org", "guess", address="203.0.113.7")
    with engine.connect() as conn:
        kept = conn.execute(sa.select(SignInAttemptRow.address)).scalars().all()
    assert sorted(kept, key=str) == ["203.0.113.7"] + [None] * (accounts_module.MAX_FAILED_FOR_EMAIL - 1)
    with pytest.raises(SignInThrottled, match="from many addresses"):
        accounts.sign_in("ada@example.org", "guess", address="192.0.2.10")


def test_accounts_of_a_database_before_known_addresses_learn_theirs_at_their_next_sign_in(engine):
    """Migration 0014: the addresses each account signed in from are kept; none is known before the upgrade, and
    from the address of the next sign-in the account is not held up by failures for its email from elsewhere."""
    import time

    from nodeflow_app.store import accounts as accounts_module
    from nodeflow_app.store.accounts import AccountStore, SignInThrottled

    with engine.begin() as conn:
        command.upgrade(migrations._config(conn), "0013_sign_in_addresses")
        _insert(conn, "user_account", id="u1", email="ada@example.org", name="Ada", is_admin=True, created_at=1.0,
                password_hash=accounts_module._hasher().hash("correct horse"))
        for i in range(accounts_module.MAX_FAILED_FOR_EMAIL):
            _insert(conn, "sign_in_attempt", email="ada@example.org", address=f"198.51.100.{i // 4}", at=time.time())
    with engine.begin() as conn:  # the migrations alone (a store would add a missing table from the models)
        command.upgrade(migrations._config(conn), "head")
    schema = (engine.get_execution_options().get("schema_translate_map") or {}).get(None)
    assert "known_sign_in_address" in inspect(engine).get_table_names(schema=schema)
    migrations._done.clear()

    accounts = AccountStore(engine)

    assert revision(engine) == migrations.head()
    with pytest.raises(SignInThrottled, match="from many addresses"):  # no address known yet
        accounts.sign_in("ada@example.org", "correct horse", address="192.0.2.10")
    with engine.begin() as conn:
        conn.execute(sa.Table("sign_in_attempt", sa.MetaData()).delete())
    accounts.sign_in("ada@example.org", "correct horse", address="192.0.2.10")
    with engine.begin() as conn:
        for i in range(accounts_module.MAX_FAILED_FOR_EMAIL):
            _insert(conn, "sign_in_attempt", email="ada@example.org", address=f"198.51.100.{i // 4}", at=time.time())
    assert accounts.sign_in("ada@example.org", "correct horse", address="192.0.2.10")[1].id == "u1"
    with pytest.raises(SignInThrottled, match="from many addresses"):
        accounts.sign_in("ada@example.org", "correct horse", address="192.0.2.20")


def test_a_fresh_database_is_stamped_at_the_newest_revision(engine):
    migrations._done.clear()
    GraphStore(engine).create("New")
    assert revision(engine) == migrations.head()


def test_the_models_and_the_migrations_describe_the_same_schema(tmp_path):
    """Upgrading an empty database through every migration gives the tables the models define."""
    from alembic.autogenerate import compare_metadata
    from sqlmodel import SQLModel

    from nodeflow_app.store import models  # noqa: F401

    engine = make_engine(f"sqlite:///{tmp_path / 'migrated.db'}")
    with engine.begin() as conn:
        command.upgrade(migrations._config(conn), "head")
    with engine.connect() as conn:
        differences = compare_metadata(MigrationContext.configure(conn), SQLModel.metadata)
    engine.dispose()
    assert differences == [], "a model changed without a migration: add one under nodeflow_app/store/migrations"


def test_graphs_belong_to_a_workspace_and_old_ones_are_adopted(engine):
    old_database(engine)
    migrations._done.clear()
    store = GraphStore(engine)
    mine = store.create("Mine", workspace_id="w1")
    store.create("Theirs", workspace_id="w2")
    assert [g.name for g in store.list(workspace_id="w1")] == ["Mine"]
    assert store.workspace_of("g1") is None and store.adopt_unowned("w1") == 1
    assert sorted(g.name for g in store.list(workspace_id="w1")) == ["Mine", "Old graph"]
    copy = store.duplicate(mine.id)
    assert store.workspace_of(copy.id) == "w1"
    store.move(copy.id, "w2")
    assert sorted(g.name for g in store.list(workspace_id="w2")) == ["Mine (copy)", "Theirs"]


def test_install_wide_provider_keys_move_to_the_owner_workspace(engine):
    """Migration 0008: credentials are per workspace; the old install-wide rows become the owner's."""
    from nodeflow_app.store.credentials import CredentialStore
    from cryptography.fernet import Fernet

    key = Fernet.generate_key()
    with engine.begin() as conn:
        command.upgrade(migrations._config(conn), "0007_child_runs")
        _insert(conn, "user_account", id="u1", email="o@example.org", name="O", password_hash="x", is_admin=True,
                created_at=1.0)
        _insert(conn, "workspace", id="w-owner", name="O", personal_of="u1", created_at=1.0)
        token = Fernet(key).encrypt(json.dumps({"provider": "openai", "api_key": "sk-old", "base_url": None})
                                    .encode()).decode()
        _insert(conn, "credential", provider="openai", secret=token, has_api_key=True, has_base_url=False,
                updated_at=1.0)
    migrations._done.clear()
    GraphStore(engine)  # opening a store upgrades the database
    assert revision(engine) == migrations.head()
    store = CredentialStore(engine, key)
    assert store.get("openai", "w-owner").api_key == "sk-old"
    assert store.get("openai", "") is None and store.list("other") == []
    store.set("openai", "sk-team", workspace_id="w-team")  # the key is (workspace, provider) now
    assert store.get("openai", "w-owner").api_key == "sk-old"


PREPARE = """
import sys
from nodeflow_app.store.db import make_engine
from nodeflow_app.store.migrations import prepare
prepare(make_engine(sys.argv[1]).execution_options(schema_translate_map={None: sys.argv[2]}))
"""


def test_workers_starting_together_on_a_fresh_postgresql_database_all_start():
    """Team installs start several backend workers at once: each prepares the database; none may fail."""
    import os
    import subprocess
    import sys

    with private_schema() as schema:
        env = {**os.environ, "PYTHONPATH": os.getcwd()}
        workers = [subprocess.Popen([sys.executable, "-c", PREPARE, POSTGRES_URL, schema], env=env,
                                    stderr=subprocess.PIPE, text=True) for _ in range(4)]
        results = [(worker.wait(timeout=120), worker.stderr.read()) for worker in workers]
        engine = make_engine(POSTGRES_URL).execution_options(schema_translate_map={None: schema})
        assert revision(engine) == migrations.head()
        engine.dispose()
    assert [code for code, _ in results] == [0, 0, 0, 0], [err[-600:] for _, err in results]
