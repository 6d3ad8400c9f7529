"""nodes/integration/database_query against the real PostgreSQL and MariaDB on 127.0.0.1, and a SQLite file."""

from __future__ import annotations

import base64
import contextlib
import re
import sqlite3
import uuid
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from sqlalchemy import text

from nodeflow_app.contract import FlowContext, NodeError
from nodeflow_app.net.guard import ALLOWLIST_ENV
from nodeflow_app.sql.run import ALLOW_PRIVILEGED_ENV
from nodeflow_app.store.connections import ConnectionStore
from nodeflow_app.store.db import make_engine
from nodes.integration.database_query.definition import definition
from nodes.integration.database_query.executor import executor
from tests.store.postgres import POSTGRES_URL, private_schema

MARIADB_URL = "mysql+pymysql://root@127.0.0.1:3306/test"
TYPES = {  # per kind: the table's columns, and one row's insert
    "postgres": ("id int, name text, price numeric(10,2), ratio numeric(30,20), day date, at timestamp, "
                 "raw bytea, doc jsonb, flag boolean",
                 "(1, 'ada', 12.50, 0.12345678901234567891, '2026-11-24', '2026-11-24 10:00:00', '\\x0001ff', "
                 "'{\"a\": [1]}', true)"),
    "mysql": ("id int, name varchar(40), price decimal(10,2), ratio decimal(30,20), day date, at datetime, "
              "raw varbinary(8), doc text, flag boolean",
              "(1, 'ada', 12.50, 0.12345678901234567891, '2026-11-24', '2026-11-24 10:00:00', x'0001ff', "
              "'{\"a\": [1]}', true)"),
    "sqlite": ("id int, name text, price real, ratio text, day text, at text, raw blob, doc text, flag int",
               "(1, 'ada', 12.5, '0.12345678901234567891', '2026-11-24', '2026-11-24 10:00:00', x'0001ff', "
               "'{\"a\": [1]}', 1)"),
}


class Database:
    """A table `self.table` with one row, reachable through the connection 'db' of `self.store`."""

    def __init__(self, kind: str, table: str, store: ConnectionStore):
        self.kind, self.table, self.store = kind, table, store

    async def run(self, sql: str, workspace: str | None = None, **data):
        services = {"connections": self.store} | ({"workspace_id": workspace} if workspace else {})
        ctx = FlowContext(node_id="db", node_type="database-query", run_id="run-1", runtime=None, services=services)
        result = await executor.execute({**definition.defaults(), "connection": "db", "query": sql, **data},
                                        {"input": None}, ctx)
        return result.outputs["output"]


def _store(tmp_path) -> ConnectionStore:
    return ConnectionStore(make_engine(f"sqlite:///{tmp_path / 'app.db'}"), Fernet.generate_key())


def _create(engine, table: str, kind: str) -> None:
    columns, row = TYPES[kind]
    with engine.begin() as conn:
        conn.execute(text(f"CREATE TABLE {table} ({columns})"))
        conn.execute(text(f"INSERT INTO {table} VALUES {row}".replace(":", "\\:")))


@contextlib.contextmanager
def _role(url: str, kind: str, grants: list[str]):
    """A login role of its own on the real server (trust auth: no password), dropped afterwards; `grants` are
    statements with {role} in them. Connections use such roles: the node refuses superusers and their like."""
    role = f"nodeflow_test_{uuid.uuid4().hex[:12]}"
    quoted = f'"{role}"' if kind == "postgres" else f"'{role}'@'%'"
    engine = make_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(text(f"CREATE {'ROLE' if kind == 'postgres' else 'USER'} {quoted}"
                              f"{' LOGIN' if kind == 'postgres' else ''}"))
            for grant in grants:
                conn.execute(text(grant.format(role=quoted)))
        yield role
    finally:
        with engine.begin() as conn:
            if kind == "postgres":
                conn.execute(text(f"DROP OWNED BY {quoted}"))
                conn.execute(text(f"DROP ROLE {quoted}"))
            else:
                conn.execute(text(f"DROP USER {quoted}"))
        engine.dispose()


@pytest.fixture(params=["postgres", "mysql", "sqlite"])
def database(request, tmp_path, monkeypatch):
    monkeypatch.setenv(ALLOWLIST_ENV, "127.0.0.1")  # the real servers of these machines (the guard refuses loopback)
    kind, store = request.param, _store(tmp_path)
    monkeypatch.setenv("NODEFLOW_DATA_DIR", str(tmp_path))
    if kind == "postgres":
        with private_schema() as schema:
            engine = make_engine(POSTGRES_URL)
            _create(engine, f'"{schema}".items', kind)
            engine.dispose()
            with _role(POSTGRES_URL, kind, [f'GRANT USAGE ON SCHEMA "{schema}" TO {{role}}',
                                            f'GRANT SELECT, INSERT ON "{schema}".items TO {{role}}']) as role:
                store.set("db", "postgres", {"host": "127.0.0.1", "port": "5432", "database": "test", "user": role})
                yield Database(kind, f'"{schema}".items', store)
    elif kind == "mysql":
        table = f"nodeflow_test_{uuid.uuid4().hex[:12]}"
        engine = make_engine(MARIADB_URL)
        _create(engine, table, kind)
        try:
            with _role(MARIADB_URL, kind, [f"GRANT SELECT, INSERT ON test.{table} TO {{role}}"]) as role:
                store.set("db", "mysql", {"host": "127.0.0.1", "port": "3306", "database": "test", "user": role})
                yield Database(kind, table, store)
        finally:
            with engine.begin() as conn:
                conn.execute(text(f"DROP TABLE {table}"))
            engine.dispose()
    else:
        (tmp_path / "sql").mkdir()
        engine = make_engine(f"sqlite:///{tmp_path / 'sql' / 'shop.db'}")
        _create(engine, "items", kind)
        engine.dispose()
        store.set("db", "sqlite", {"path": "sql/shop.db"})
        yield Database(kind, "items", store)


async def test_rows_come_back_as_json_objects(database):
    output = await database.run(f"SELECT * FROM {database.table}")
    row = output["rows"][0]
    assert output["columns"][:3] == ["id", "name", "price"]
    assert (output["row_count"], output["truncated"], output["affected"]) == (1, False, None)
    assert (row["id"], row["name"], row["price"], row["day"]) == (1, "ada", 12.5, "2026-11-24")
    assert row["at"].replace(" ", "T") == "2026-11-24T10:00:00"
    assert row["ratio"] == "0.12345678901234567891"  # a float would round it: exact decimals stay text
    assert base64.b64decode(row["raw"]) == b"\x00\x01\xff"
    assert row["doc"] in ({"a": [1]}, '{"a": [1]}')  # jsonb is decoded; text columns stay text
    assert row["flag"] in (True, 1)


async def test_parameters_are_bound_so_an_injection_stays_a_value(database):
    sneaky = f"ada' OR '1'='1'; DROP TABLE {database.table}; --"
    output = await database.run(f"SELECT id FROM {database.table} WHERE name = :name",
                                parameters=[{"name": "name", "value": sneaky}])
    assert output["rows"] == []
    output = await database.run(f"SELECT id, :label AS label FROM {database.table} WHERE name = :name",
                                parameters={"name": "ada", "label": sneaky})
    assert output["rows"] == [{"id": 1, "label": sneaky}]


async def test_read_only_by_default_refuses_an_insert(database):
    with pytest.raises(NodeError, match="the statement tries to write, but the node is read-only; turn on 'Allow writes'"):
        await database.run(f"INSERT INTO {database.table} (id, name) VALUES (:id, 'bob')", parameters={"id": 2})
    assert (await database.run(f"SELECT count(*) AS n FROM {database.table}"))["rows"] == [{"n": 1}]


async def test_writes_when_allowed(database):
    output = await database.run(f"INSERT INTO {database.table} (id, name) VALUES (:id, :name)",
                                parameters={"id": 2, "name": "bob"}, allow_writes=True)
    assert (output["rows"], output["affected"]) == ([], 1)
    assert (await database.run(f"SELECT name FROM {database.table} WHERE id = 2"))["rows"] == [{"name": "bob"}]


async def test_the_row_limit(database):
    await database.run(f"INSERT INTO {database.table} (id, name) VALUES (2, 'b'), (3, 'c'), (4, 'd')",
                       allow_writes=True)
    output = await database.run(f"SELECT id FROM {database.table} ORDER BY id", row_limit=2)
    assert (output["rows"], output["truncated"]) == ([{"id": 1}, {"id": 2}], True)
    output = await database.run(f"SELECT id FROM {database.table} ORDER BY id", row_limit=4)
    assert (output["row_count"], output["truncated"]) == (4, False)


async def test_a_bad_statement_names_the_database(database):
    with pytest.raises(NodeError, match=f"the {database.kind} database of connection 'db' .* refused the statement"):
        await database.run("SELECT nope FROM nowhere_at_all")


# -- parameters and connections, checked before any database is touched --------------------------------

async def test_missing_and_unused_parameters_are_named(tmp_path, monkeypatch):
    db = await _sqlite(tmp_path, monkeypatch)
    with pytest.raises(NodeError, match="the SQL uses :a, :b but no parameter gives a value"):
        await db.run("SELECT :a, :b")
    with pytest.raises(NodeError, match="parameter 'c' is not used in the SQL; write :c"):
        await db.run("SELECT 1", parameters={"c": 1})


async def test_objects_are_bound_as_json_text(tmp_path, monkeypatch):
    db = await _sqlite(tmp_path, monkeypatch)
    output = await db.run("SELECT :doc AS doc", parameters={"doc": {"a": [1, "é"]}})
    assert output["rows"] == [{"doc": '{"a": [1, "é"]}'}]


async def test_a_sqlite_file_outside_the_data_folder_is_refused(tmp_path, monkeypatch):
    db = await _sqlite(tmp_path, monkeypatch)
    sqlite3.connect(tmp_path / "outside.db").close()
    db.store.set("db", "sqlite", {"path": str(tmp_path / "outside.db")})
    with pytest.raises(NodeError, match="the SQLite file .*outside.db' is outside the data folder"):
        await db.run("SELECT 1")
    db.store.set("db", "sqlite", {"path": "../outside.db"})
    with pytest.raises(NodeError, match="is outside the data folder"):
        await db.run("SELECT 1")
    db.store.set("db", "sqlite", {"path": "missing.db"})
    with pytest.raises(NodeError, match="no SQLite file at"):
        await db.run("SELECT 1")
    assert not (tmp_path / "data" / "missing.db").exists()


async def test_a_sqlite_connection_stored_before_only_the_admin_could_store_one_is_not_opened(tmp_path, monkeypatch):
    """Any workspace owner could store one then: its file lies in the data folder every workspace shares."""
    import json

    from nodeflow_app.store.models import ConnectionRow

    db = await _sqlite(tmp_path, monkeypatch)
    sqlite3.connect(tmp_path / "data" / "theirs.db").close()
    old = {"workspace_id": "default", "name": "db", "kind": "sqlite", "fields": {"path": "theirs.db"}}
    with db.store._session() as session:  # as the version before wrote it: no format
        session.merge(ConnectionRow(workspace_id="default", name="db", kind="sqlite",
                                    secret=db.store._fernet(create=True).encrypt(json.dumps(old).encode()).decode()))
        session.commit()

    with pytest.raises(NodeError, match="the SQLite connection 'db' was stored before only the instance admin"):
        await db.run("SELECT 1")
    assert db.store.adopt("w-owner") == 1  # stored before accounts: by whoever ran the install, kept
    assert db.store.get("db", "w-owner").fields == {"path": "theirs.db"}
    db.store.set("db", "sqlite", {"path": "theirs.db"})  # stored again (the admin, or the CLI)
    assert (await db.run("SELECT 1 AS one"))["rows"] == [{"one": 1}]


async def test_nodeflow_own_database_and_folders_are_refused(tmp_path, monkeypatch):
    """Any account can store a connection: one to NodeFlow's own database would read every workspace's rows and,
    with writes allowed, make itself admin."""
    db = await _sqlite(tmp_path, monkeypatch)
    data = tmp_path / "data"
    monkeypatch.setenv("REFLEX_DB_URL", f"sqlite:///{data / 'app.db'}")
    (data / "knowledge").mkdir()
    for name in ("app.db", "app.db-wal", "knowledge/embeddings.sqlite"):
        sqlite3.connect(data / name).close()
        db.store.set("db", "sqlite", {"path": name})
        with pytest.raises(NodeError, match=f"the SQLite file '{name}' is NodeFlow's own"):
            await db.run("SELECT 1")
    monkeypatch.setenv("REFLEX_DB_URL", "postgresql+psycopg://u@h/d")  # the app's database elsewhere: a file is fine
    db.store.set("db", "sqlite", {"path": "app.db"})
    assert (await db.run("SELECT 1 AS one"))["rows"] == [{"one": 1}]


async def test_a_copy_of_a_nodeflow_database_is_refused_wherever_it_lies(tmp_path, monkeypatch):
    """A backup, a copy, or the SQLite database left behind when the app moved to PostgreSQL: it holds every
    workspace's accounts, graphs and runs, whatever its name."""
    from nodeflow_app.store.accounts import AccountStore

    db = await _sqlite(tmp_path, monkeypatch)
    monkeypatch.setenv("REFLEX_DB_URL", "postgresql+psycopg://u@h/d")  # the app's database is elsewhere now
    left_behind = AccountStore(f"sqlite:///{tmp_path / 'data' / 'old-nodeflow.db'}")
    left_behind.create_user("Ada", "ada@example.org", "a long enough password")
    left_behind.engine.dispose()
    db.store.set("db", "sqlite", {"path": "old-nodeflow.db"})
    with pytest.raises(NodeError, match="the SQLite file 'old-nodeflow.db' holds a NodeFlow database"):
        await db.run("SELECT email FROM user_account")


async def test_attach_and_vacuum_into_cannot_reach_other_files(tmp_path, monkeypatch):
    db = await _sqlite(tmp_path, monkeypatch)
    for statement in (f"ATTACH '{tmp_path / 'x.db'}' AS x", f"VACUUM INTO '{tmp_path / 'copy.db'}'"):
        with pytest.raises(NodeError, match="too many attached databases"):
            await db.run(statement, allow_writes=True)
    assert not (tmp_path / "x.db").exists() and not (tmp_path / "copy.db").exists()


async def test_a_database_host_passes_the_ssrf_guard(tmp_path, monkeypatch):
    """Any account can store a connection: without the allowlist it cannot reach the host's own PostgreSQL
    (the app's database in a team install), a socket folder, or several hosts at once."""
    db = await _sqlite(tmp_path, monkeypatch)
    monkeypatch.delenv(ALLOWLIST_ENV, raising=False)
    db.store.set("db", "postgres", {"host": "127.0.0.1", "port": "5432", "database": "test", "user": "postgres"})
    with pytest.raises(NodeError, match=f"connection 'db': refused 127.0.0.1: 127.0.0.1 is a loopback address.*"
                                        f"{ALLOWLIST_ENV}"):
        await db.run("SELECT 1")
    for host in ("/var/run/postgresql", "a.example,127.0.0.1"):
        db.store.set("db", "postgres", {"host": host, "database": "test", "user": "postgres"})
        with pytest.raises(NodeError, match="give one host name or address"):
            await db.run("SELECT 1")
    monkeypatch.setenv(ALLOWLIST_ENV, "127.0.0.1")
    with _role(POSTGRES_URL, "postgres", []) as role:
        db.store.set("db", "postgres", {"host": "127.0.0.1", "port": "5432", "database": "test", "user": role})
        assert (await db.run("SELECT 1 AS one"))["rows"] == [{"one": 1}]


# -- roles that reach the database host ------------------------------------------------------------------

async def test_a_superuser_connection_is_refused_before_its_statement_runs(tmp_path, monkeypatch):
    """A superuser's `COPY ... TO PROGRAM` would start a program on the database host (here: this machine)."""
    db = await _sqlite(tmp_path, monkeypatch)
    monkeypatch.setenv(ALLOWLIST_ENV, "127.0.0.1")
    marker = f"/tmp/nodeflow-copy-to-program-{uuid.uuid4().hex[:12]}"
    db.store.set("db", "postgres", {"host": "127.0.0.1", "port": "5432", "database": "test", "user": "postgres"})
    for writes in (False, True):
        with pytest.raises(NodeError, match=r"connection 'db' .* logs in as 'postgres', which is a superuser \(it "
                                            r"could run programs on the database host with COPY ... TO PROGRAM\)\. "
                                            f"Store a role that reaches its data only, or set {ALLOW_PRIVILEGED_ENV}=1"):
            await db.run(f"COPY (SELECT 1) TO PROGRAM 'touch {marker}'", allow_writes=writes)
    import os

    assert not os.path.exists(marker)
    monkeypatch.setenv(ALLOW_PRIVILEGED_ENV, "1")  # the install says its graph editors may
    assert (await db.run("SELECT current_user AS who"))["rows"] == [{"who": "postgres"}]


@pytest.mark.parametrize("grant, reason", [
    ("GRANT pg_execute_server_program TO {role}", "is a member of pg_execute_server_program"),
    ("GRANT pg_read_server_files TO {role}", "is a member of pg_read_server_files"),
    ("GRANT pg_write_server_files TO {role}", "is a member of pg_write_server_files"),
    ("ALTER ROLE {role} CREATEROLE", r"has CREATEROLE \(it could grant itself pg_execute_server_program\)"),
])
async def test_a_postgres_role_that_reaches_the_host_is_refused(tmp_path, monkeypatch, grant, reason):
    db = await _sqlite(tmp_path, monkeypatch)
    monkeypatch.setenv(ALLOWLIST_ENV, "127.0.0.1")
    with _role(POSTGRES_URL, "postgres", [grant]) as role:
        db.store.set("db", "postgres", {"host": "127.0.0.1", "port": "5432", "database": "test", "user": role})
        with pytest.raises(NodeError, match=f"logs in as '{role}', which {reason}"):
            await db.run("SELECT 1")


@contextlib.contextmanager
def _server_role(url: str, create: str):
    """A role (not a login) made with `create` ({name} in it) on the real server, dropped afterwards."""
    name = f"nodeflow_test_role_{uuid.uuid4().hex[:8]}"
    engine = make_engine(url)
    with engine.begin() as conn:
        for statement in create.format(name=name).split(";"):
            conn.execute(text(statement))
    try:
        yield name
    finally:
        with engine.begin() as conn:
            if url.startswith("postgresql"):
                conn.execute(text(f"DROP OWNED BY {name}"))  # also revokes what was granted to it
            conn.execute(text(f"DROP ROLE {name}"))
        engine.dispose()


async def test_a_postgres_role_that_can_become_a_superuser_is_refused(tmp_path, monkeypatch):
    """Neither SUPERUSER nor CREATEROLE is inherited: a member of a superuser role, or a superuser login set to
    another role, could still SET ROLE inside one DO block and run a program."""
    db = await _sqlite(tmp_path, monkeypatch)
    monkeypatch.setenv(ALLOWLIST_ENV, "127.0.0.1")
    marker = f"/tmp/nodeflow-do-{uuid.uuid4().hex[:8]}"
    with _server_role(POSTGRES_URL, "CREATE ROLE {name} SUPERUSER NOLOGIN") as dba:
        escape = f"DO $$BEGIN SET ROLE {dba}; EXECUTE 'COPY (SELECT 1) TO PROGRAM ''touch {marker}'''; END$$"
        with _role(POSTGRES_URL, "postgres", [f"GRANT {dba} TO {{role}}"]) as member:
            db.store.set("db", "postgres", {"host": "127.0.0.1", "port": "5432", "database": "test", "user": member})
            with pytest.raises(NodeError, match=f"logs in as '{member}', which can become the superuser '{dba}' "
                                                r"\(SET ROLE\) \(it could run programs on the database host"):
                await db.run(escape, allow_writes=True)
        with _role(POSTGRES_URL, "postgres", []) as reader, _role(
                POSTGRES_URL, "postgres", ["ALTER ROLE {role} SUPERUSER", f'ALTER ROLE {{role}} SET role = "{reader}"']
        ) as admin:
            db.store.set("db", "postgres", {"host": "127.0.0.1", "port": "5432", "database": "test", "user": admin})
            with pytest.raises(NodeError, match=f"logs in as '{admin}', which is a superuser"):
                await db.run("SELECT current_user AS who")  # current_user would be the reader


async def test_a_postgres_role_that_may_call_file_functions_is_refused(tmp_path, monkeypatch):
    """pg_read_file, lo_import, dblink_connect_u and their like are superuser-only until an admin grants EXECUTE: to
    the role, to a role it may become, or to PUBLIC. Each way reads the host's files or logs in as the server."""
    db = await _sqlite(tmp_path, monkeypatch)
    monkeypatch.setenv(ALLOWLIST_ENV, "127.0.0.1")
    engine = make_engine(POSTGRES_URL)
    read = "SELECT length(pg_read_file('/etc/hostname')) AS stolen"
    try:
        with _server_role(POSTGRES_URL, "CREATE ROLE {name} NOLOGIN; "
                                        "GRANT EXECUTE ON FUNCTION lo_import(text) TO {name}") as importer:
            for grants, function in ((["GRANT EXECUTE ON FUNCTION pg_read_file(text) TO {role}"], "pg_read_file"),
                                     ([f"GRANT {importer} TO {{role}}"], "lo_import")):
                with _role(POSTGRES_URL, "postgres", grants) as user:
                    db.store.set("db", "postgres", {"host": "127.0.0.1", "port": "5432", "database": "test",
                                                    "user": user})
                    with pytest.raises(NodeError, match=f"logs in as '{user}', which may call {function} "
                                                        r"\(the database host's files"):
                        await db.run(read)
            schema = f"nodeflow_test_{uuid.uuid4().hex[:8]}"  # dblink outside the search path: still callable
            with engine.begin() as conn:
                conn.execute(text(f"CREATE SCHEMA {schema}"))
                conn.execute(text(f"CREATE EXTENSION dblink SCHEMA {schema}"))
            try:
                grant = f"GRANT USAGE ON SCHEMA {schema} TO {{role}}; " \
                        f"GRANT EXECUTE ON FUNCTION {schema}.dblink_connect_u(text) TO {{role}}"
                with _role(POSTGRES_URL, "postgres", grant.split("; ")) as user:
                    db.store.set("db", "postgres", {"host": "127.0.0.1", "port": "5432", "database": "test",
                                                    "user": user})
                    with pytest.raises(NodeError, match="which may call dblink_connect_u"):
                        await db.run(f"SELECT {schema}.dblink_connect_u('dbname=test user=postgres') AS linked")
            finally:
                with engine.begin() as conn:
                    conn.execute(text(f"DROP SCHEMA {schema} CASCADE"))
            with _role(POSTGRES_URL, "postgres", []) as user:
                db.store.set("db", "postgres", {"host": "127.0.0.1", "port": "5432", "database": "test", "user": user})
                assert (await db.run("SELECT 1 AS one"))["rows"] == [{"one": 1}]
                with engine.begin() as conn:
                    conn.execute(text("GRANT EXECUTE ON FUNCTION pg_ls_dir(text) TO PUBLIC"))
                try:
                    with pytest.raises(NodeError, match="which may call pg_ls_dir"):
                        await db.run("SELECT pg_ls_dir('/etc') AS name")
                finally:
                    with engine.begin() as conn:
                        conn.execute(text("REVOKE EXECUTE ON FUNCTION pg_ls_dir(text) FROM PUBLIC"))
    finally:
        engine.dispose()


async def test_a_mariadb_account_with_file_or_super_is_refused(tmp_path, monkeypatch):
    """root has ALL PRIVILEGES; a role counts too, in use or only granted, and the roles granted to it."""
    db = await _sqlite(tmp_path, monkeypatch)
    monkeypatch.setenv(ALLOWLIST_ENV, "127.0.0.1")
    db.store.set("db", "mysql", {"host": "127.0.0.1", "port": "3306", "database": "test", "user": "root"})
    with pytest.raises(NodeError, match="logs in as 'root', which has the FILE privilege .*; and has the SUPER privilege"):
        await db.run("SELECT LOAD_FILE('/etc/hostname') AS stolen")
    engine = make_engine(MARIADB_URL)
    try:
        with _server_role(MARIADB_URL, "CREATE ROLE {name}; GRANT FILE ON *.* TO {name}") as files, \
                _server_role(MARIADB_URL, f"CREATE ROLE {{name}}; GRANT {files} TO {{name}}") as nested, \
                _server_role(MARIADB_URL, "CREATE ROLE {name}") as plain:
            for grants in ([f"GRANT {files} TO {{role}}", f"SET DEFAULT ROLE {files} FOR {{role}}"],  # in use
                           [f"GRANT {files} TO {{role}}"],  # granted, not in use: SET ROLE would take it
                           [f"GRANT {nested} TO {{role}}"]):  # through a role granted to a role
                with _role(MARIADB_URL, "mysql", grants) as user:
                    db.store.set("db", "mysql", {"host": "127.0.0.1", "port": "3306",
                                                 "database": "information_schema", "user": user})
                    with pytest.raises(NodeError, match=f"logs in as '{user}', which has the FILE privilege"):
                        await db.run("SELECT 1")
            with _role(MARIADB_URL, "mysql", [f"GRANT {plain} TO {{role}}", f"SET DEFAULT ROLE {plain} FOR {{role}}",
                                              f"GRANT {files} TO {{role}}"]) as user:
                db.store.set("db", "mysql", {"host": "127.0.0.1", "port": "3306",
                                             "database": "information_schema", "user": user})
                with engine.begin() as conn:
                    conn.execute(text(f"REVOKE {files} FROM '{user}'@'%'"))
                output = await db.run("SELECT CURRENT_ROLE() AS role")  # the check left the role in use as it was
                assert output["rows"] == [{"role": plain}]
    finally:
        engine.dispose()


async def test_a_mariadb_account_is_refused_when_public_holds_file(tmp_path, monkeypatch):
    """MariaDB 10.11 lets an admin grant FILE to PUBLIC, so to every account: SHOW GRANTS lists that line too."""
    db = await _sqlite(tmp_path, monkeypatch)
    monkeypatch.setenv(ALLOWLIST_ENV, "127.0.0.1")
    engine = make_engine(MARIADB_URL)
    try:
        with _role(MARIADB_URL, "mysql", []) as user:
            db.store.set("db", "mysql", {"host": "127.0.0.1", "port": "3306", "database": "information_schema",
                                         "user": user})
            assert (await db.run("SELECT 1 AS one"))["rows"] == [{"one": 1}]
            with engine.begin() as conn:
                conn.execute(text("GRANT FILE ON *.* TO PUBLIC"))
            try:
                with pytest.raises(NodeError, match=f"logs in as '{user}', which has the FILE privilege"):
                    await db.run("SELECT LOAD_FILE('/etc/hostname') AS stolen")
            finally:
                with engine.begin() as conn:
                    conn.execute(text("REVOKE FILE ON *.* FROM PUBLIC"))
    finally:
        engine.dispose()


async def test_an_http_connection_is_not_a_database(tmp_path, monkeypatch):
    db = await _sqlite(tmp_path, monkeypatch)
    db.store.set("api", "http_bearer", {"token": "t"})
    with pytest.raises(NodeError, match="connection 'api' is a http_bearer connection; this node needs one of: postgres"):
        await db.run("SELECT 1", connection="api")


async def test_an_unreachable_server_is_a_clear_error(tmp_path, monkeypatch):
    db = await _sqlite(tmp_path, monkeypatch)
    monkeypatch.setenv(ALLOWLIST_ENV, "127.0.0.1")
    db.store.set("db", "postgres", {"host": "127.0.0.1", "port": "1", "database": "test", "user": "postgres"})
    with pytest.raises(NodeError, match=r"cannot connect to the postgres database of connection 'db' \(127.0.0.1/test\)"):
        await db.run("SELECT 1", timeout=2)


async def _sqlite(tmp_path, monkeypatch) -> Database:
    data = tmp_path / "data"
    data.mkdir()
    monkeypatch.setenv("NODEFLOW_DATA_DIR", str(data))
    sqlite3.connect(data / "empty.db").close()
    store = _store(tmp_path)
    store.set("db", "sqlite", {"path": "empty.db"})
    return Database("sqlite", "", store)


# -- the example graph, through the CLI -----------------------------------------------------------------

#   Start --> Big orders (Database Query on the connection "shop") --> Report
def test_the_example_graph_runs_through_the_cli(capsys, tmp_path, monkeypatch):
    import json

    from nodeflow_app.cli import main
    from tests.nodes.test_code import EXAMPLES

    monkeypatch.delenv("REFLEX_DB_URL", raising=False)
    monkeypatch.setenv("NODEFLOW_DATA_DIR", str(tmp_path))
    with sqlite3.connect(tmp_path / "shop.db") as shop:
        shop.execute("CREATE TABLE orders (id int, total real, country text, placed_on text)")
        shop.executemany("INSERT INTO orders VALUES (?, ?, ?, ?)", [
            (1, 30, "FR", "2026-11-01"), (2, 120, "DE", "2026-11-02"), (3, 75, "FR", "2026-11-03"),
            (4, 99.5, "FR", "2026-11-04")])
    assert main(["connections", "set", "shop", "sqlite", "path=shop.db"]) == 0
    assert main(["run", str(EXAMPLES / "database_query.json"), "--json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    assert lines[-1]["outputs"]["Report"]["output"] == {
        "count": 2, "first": {"id": 3, "total": 75.0, "placed_on": "2026-11-03"}}


async def test_a_second_statement_cannot_end_the_read_only_transaction(database):
    for sql in (f"COMMIT; INSERT INTO {database.table} (id, name) VALUES (9, 'x')",
                f"SELECT 1; INSERT INTO {database.table} (id, name) VALUES (9, 'x')"):
        with pytest.raises(NodeError):
            await database.run(sql)
    assert (await database.run(f"SELECT count(*) AS n FROM {database.table}"))["rows"] == [{"n": 1}]


SLOW = {"postgres": "SELECT pg_sleep(5) AS slept",
        "mysql": "SELECT SLEEP(5) AS slept",
        "sqlite": "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT max(i) AS slept FROM n"}


async def test_the_database_stops_a_statement_at_the_timeout(database):
    import time

    started = time.monotonic()
    with pytest.raises(NodeError, match=r"the statement ran longer than the node's timeout \(1 s\)"):
        await database.run(SLOW[database.kind], timeout=1)
    assert time.monotonic() - started < 4


async def test_a_mariadb_statement_that_commits_by_itself_is_read_only_too(tmp_path, monkeypatch):
    """TRUNCATE, ALTER, CREATE and DROP end a read-only transaction and ran outside it: the session is read-only."""
    monkeypatch.setenv(ALLOWLIST_ENV, "127.0.0.1")
    monkeypatch.setenv("NODEFLOW_DATA_DIR", str(tmp_path))
    table, store = f"nodeflow_test_{uuid.uuid4().hex[:12]}", _store(tmp_path)
    engine = make_engine(MARIADB_URL)
    _create(engine, table, "mysql")
    try:
        with _role(MARIADB_URL, "mysql", [f"GRANT ALL ON test.{table} TO {{role}}",
                                          "GRANT CREATE, DROP ON test.* TO {role}"]) as role:
            store.set("db", "mysql", {"host": "127.0.0.1", "port": "3306", "database": "test", "user": role})
            database = Database("mysql", table, store)
            for sql in (f"TRUNCATE TABLE {table}", f"ALTER TABLE {table} ADD COLUMN extra int",
                        f"CREATE TABLE {table}_new (a int)", f"DROP TABLE {table}"):
                with pytest.raises(NodeError, match="the statement tries to write, but the node is read-only"):
                    await database.run(sql)
            # A comment that only looks like a setting is not refused: MySQL skips it too.
            looks = f"SELECT count(*) AS n /* SET STATEMENT x=1 FOR */ FROM {table} -- SET_VAR(\n"
            assert (await database.run(looks))["rows"] == [{"n": 1}]
            await database.run(f"CREATE TABLE {table}_new (a int)", allow_writes=True)  # allowed, it still works
            await database.run(f"DROP TABLE {table}_new", allow_writes=True)
    finally:
        with engine.begin() as conn:
            conn.execute(text(f"DROP TABLE IF EXISTS {table}, {table}_new"))
        engine.dispose()


@pytest.mark.parametrize("sql, refused", [
    ("SET STATEMENT max_statement_time=0 FOR SELECT SLEEP(4)", "not SET"),
    ("set  statement tx_read_only=0 for SELECT 1", "not SET"),
    ("/*!100000 SET STATEMENT max_statement_time=0 FOR */ SELECT SLEEP(4)", "not SET"),
    ("/* a comment */ -- and a line\n#another\nSET STATEMENT tx_read_only=0 FOR TRUNCATE x", "not SET"),
    ("--\x01 /*\nSET STATEMENT tx_read_only=0 FOR TRUNCATE x -- */", "a control character"),  # MariaDB: a comment
    ("EXECUTE IMMEDIATE 'SET STATEMENT tx_read_only=0 FOR TRUNCATE x'", "not EXECUTE"),
    ("BEGIN NOT ATOMIC SET SESSION tx_read_only = 0; TRUNCATE x; END", "not BEGIN"),
    ("IF 1 THEN SET SESSION TRANSACTION READ WRITE; TRUNCATE x; END IF", "not IF"),
    ("SELECT /*+ SET_VAR(sort_buffer_size = 16M) */ 1", "a SET_VAR or MAX_EXECUTION_TIME hint"),
    ("SELECT /*+ MAX_EXECUTION_TIME(0) */ SLEEP(4)", "a SET_VAR or MAX_EXECUTION_TIME hint"),
])
async def test_a_mysql_statement_that_could_change_its_own_settings_is_refused(tmp_path, monkeypatch, sql, refused):
    """SET STATEMENT lifted the time limit (and the read-only mode): a 1 s node slept 4 s, holding a thread."""
    monkeypatch.setenv(ALLOWLIST_ENV, "127.0.0.1")
    store = _store(tmp_path)
    store.set("db", "mysql", {"host": "127.0.0.1", "port": "3306", "database": "test", "user": "nobody"})
    with pytest.raises(NodeError, match=re.escape(refused)):
        await Database("mysql", "", store).run(sql, timeout=1)


async def test_a_postgres_connection_without_a_password_never_sends_the_servers_own(tmp_path, monkeypatch):
    """libpq sent PGPASSWORD (or ~/.pgpass's entry) of the app's process to the host a connection named."""
    import socket
    import struct
    import threading

    monkeypatch.setenv(ALLOWLIST_ENV, "127.0.0.1")
    monkeypatch.setenv(ALLOW_PRIVILEGED_ENV, "1")
    monkeypatch.setenv("PGPASSWORD", "operator-pg-secret")
    received: list[bytes] = []
    listener = socket.create_server(("127.0.0.1", 0))

    def fake_postgres() -> None:  # asks for a clear-text password and records whatever comes
        with contextlib.suppress(OSError):
            client, _ = listener.accept()
            with client:
                startup = client.recv(4096)
                if startup[4:8] in (struct.pack("!I", 80877103), struct.pack("!I", 80877104)):  # TLS / GSS
                    client.sendall(b"N")
                    client.recv(4096)
                client.sendall(b"R" + struct.pack("!II", 8, 3))  # AuthenticationCleartextPassword
                client.settimeout(3)
                received.append(client.recv(4096))

    server = threading.Thread(target=fake_postgres, daemon=True)
    server.start()
    store = _store(tmp_path)
    store.set("db", "postgres", {"host": "127.0.0.1", "port": str(listener.getsockname()[1]), "database": "x",
                                 "user": "x"})
    with pytest.raises(NodeError, match="cannot connect to"):
        await Database("postgres", "", store).run("SELECT 1", timeout=3)
    server.join(5)
    listener.close()
    assert not any(b"operator-pg-secret" in message for message in received), received


async def test_a_postgres_query_streams_its_rows_so_the_limit_bounds_the_work(tmp_path, monkeypatch):
    """psycopg read every row before the limit applied: row_limit 1 of 400,000 wide rows took 540 MB. Through a
    server-side cursor only the rows read are made: the third row's division by zero is never computed."""
    monkeypatch.setenv(ALLOWLIST_ENV, "127.0.0.1")
    store = _store(tmp_path)
    with _role(POSTGRES_URL, "postgres", []) as role:
        store.set("db", "postgres", {"host": "127.0.0.1", "port": "5432", "database": "test", "user": role})
        database = Database("postgres", "", store)
        query = "-- a comment first\nSELECT 10 / (3 - g) AS n FROM generate_series(1, 5) AS g"
        output = await database.run(query, row_limit=1)
        assert (output["rows"], output["truncated"]) == ([{"n": 5}], True)
        # Whatever its first word: a query in parentheses was read whole (row_limit 1 of 60 rows of 5 MB: 300 MB).
        output = await database.run(f"/* a query */ ({query}) UNION ALL (SELECT 0)", row_limit=1)
        assert (output["rows"], output["truncated"]) == ([{"n": 5}], True)
        with pytest.raises(NodeError, match="division by zero"):  # all rows wanted: the third one fails
            await database.run(query, row_limit=10)
        # With writes allowed every row is computed (a function's side effects must not stop at the limit).
        with pytest.raises(NodeError, match="division by zero"):
            await database.run(query, row_limit=1, allow_writes=True)
        with pytest.raises(NodeError, match="the statement tries to write, but the node is read-only"):
            await database.run("SELECT 1 AS a INTO new_table", row_limit=1)


async def test_a_mariadb_query_stops_sending_rows_past_the_limit(tmp_path, monkeypatch):
    """MySQL's unbuffered cursor read every row left before it closed: row_limit 5 of rows made 10 ms apart took the
    node's whole time limit (20 s here), for rows nobody wanted. The server stops the statement instead."""
    import time

    monkeypatch.setenv(ALLOWLIST_ENV, "127.0.0.1")
    store = _store(tmp_path)
    with _role(MARIADB_URL, "mysql", ["GRANT SELECT ON test.* TO {role}"]) as role:
        store.set("db", "mysql", {"host": "127.0.0.1", "port": "3306", "database": "test", "user": role})
        database = Database("mysql", "", store)
        slow = "SELECT seq, REPEAT('x', 2000) AS pad, SLEEP(0.01) AS slept FROM seq_1_to_100000"
        started = time.monotonic()
        output = await database.run(slow, row_limit=5, timeout=20)
        assert ([row["seq"] for row in output["rows"]], output["truncated"]) == ([1, 2, 3, 4, 5], True)
        assert time.monotonic() - started < 5
        every = await database.run("SELECT seq FROM seq_1_to_3", row_limit=3)  # not truncated: nothing to stop
        assert (every["rows"], every["truncated"]) == ([{"seq": 1}, {"seq": 2}, {"seq": 3}], False)


# -- what one statement may hold: threads, time, memory ----------------------------------------------------

@contextlib.contextmanager
def _fake_server(answer):
    """A TCP server on 127.0.0.1 whose every connection is handed to `answer(client)` in a thread of its own; the
    connections are closed when the block ends (a thread the node left waiting on one then ends too)."""
    import socket
    import threading

    listener = socket.create_server(("127.0.0.1", 0))
    clients: list[socket.socket] = []

    def handle(client: socket.socket) -> None:
        with contextlib.suppress(OSError):
            answer(client)

    def serve() -> None:
        with contextlib.suppress(OSError):
            while True:
                client, _ = listener.accept()
                clients.append(client)
                threading.Thread(target=handle, args=(client,), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield listener.getsockname()[1]
    finally:
        listener.close()
        for client in clients:
            with contextlib.suppress(OSError):
                client.shutdown(socket.SHUT_RDWR)  # wakes its thread (and the node's, if it still waits)
            client.close()


def _silent(client) -> None:
    client.recv(1)  # waits until the test closes it


def _byte_by_byte(client) -> None:
    import time

    client.sendall(b"\x00\x01\x00\x00")  # a MySQL greeting of 256 bytes is coming...
    for _ in range(100):  # ... a byte at a time: each read gets something before it could time out
        client.sendall(b"\x0a")
        time.sleep(0.2)


def _postgres_then_silent(client) -> None:
    """Speaks PostgreSQL up to "ready for query" (no password asked), then answers nothing."""
    import struct

    def message(kind: bytes, body: bytes) -> bytes:
        return kind + struct.pack("!I", len(body) + 4) + body

    startup = client.recv(4096)
    if startup[4:8] in (struct.pack("!I", 80877103), struct.pack("!I", 80877104)):  # TLS / GSS: no
        client.sendall(b"N")
        client.recv(4096)
    client.sendall(message(b"R", struct.pack("!I", 0))
                   + b"".join(message(b"S", f"{name}\0{value}\0".encode()) for name, value in (
                       ("server_version", "15.0"), ("client_encoding", "UTF8"), ("DateStyle", "ISO, MDY"),
                       ("standard_conforming_strings", "on"), ("integer_datetimes", "on")))
                   + message(b"K", struct.pack("!II", 1, 2)) + message(b"Z", b"I"))
    while client.recv(4096):
        pass


@pytest.mark.parametrize("kind, answer", [("mysql", _silent), ("mysql", _byte_by_byte),
                                          ("postgres", _silent), ("postgres", _postgres_then_silent)])
async def test_a_server_that_stops_answering_frees_its_thread_soon_after_the_timeout(tmp_path, monkeypatch, kind,
                                                                                      answer):
    """PyMySQL had no read timeout once connected, and psycopg none after connecting: a host that accepted the
    connection and never answered held a thread of the 16 for good (16 such calls stopped every workspace's
    Database Query). A read timeout alone would not do: it starts again with each byte."""
    import asyncio
    import time

    from nodeflow_app.sql.run import DEADLINE_MARGIN_S

    monkeypatch.setenv(ALLOWLIST_ENV, "127.0.0.1")
    monkeypatch.setenv(ALLOW_PRIVILEGED_ENV, "1")
    store = _store(tmp_path)
    with _fake_server(answer) as port:
        store.set("db", kind, {"host": "127.0.0.1", "port": str(port), "database": "x", "user": "x"})
        started = time.monotonic()
        with pytest.raises(NodeError, match=r"connection 'db' \(127.0.0.1/x\)( did not answer within the node's "
                                            r"timeout \(2 s\)|: connection timeout expired)"):
            await asyncio.wait_for(Database(kind, "", store).run("SELECT 1", timeout=2), 15)
        assert time.monotonic() - started < 2 + DEADLINE_MARGIN_S + 1.5


async def test_one_workspace_cannot_take_every_database_thread(tmp_path, monkeypatch):
    """16 slow statements of one workspace held all 16 threads: another workspace's SELECT 1 waited for them. A
    workspace runs WORKSPACE_STATEMENTS at once, and the others wait for their turn within their own timeout."""
    import asyncio
    import time

    from nodeflow_app.sql.run import WORKSPACE_STATEMENTS

    monkeypatch.setenv(ALLOWLIST_ENV, "127.0.0.1")
    store = _store(tmp_path)
    with _role(POSTGRES_URL, "postgres", []) as role:
        for workspace in ("busy", "other"):
            store.set("db", "postgres", {"host": "127.0.0.1", "port": "5432", "database": "test", "user": role},
                      workspace_id=workspace)
        database = Database("postgres", "", store)

        async def attempt(sql: str, workspace: str, timeout: int) -> str:
            try:
                return str((await database.run(sql, workspace=workspace, timeout=timeout))["rows"])
            except NodeError as error:
                return str(error)

        started = time.monotonic()
        slow = [asyncio.ensure_future(attempt("SELECT pg_sleep(2) AS slept", "busy", 3)) for _ in range(16)]
        await asyncio.sleep(0.5)
        assert await attempt("SELECT 1 AS one", "other", 3) == "[{'one': 1}]"
        assert time.monotonic() - started < 1.5  # it did not wait for the slow ones
        outcomes = await asyncio.gather(*slow)
        assert time.monotonic() - started < 5
        hold = [asyncio.ensure_future(attempt("SELECT pg_sleep(2) AS slept", "busy", 5))
                for _ in range(WORKSPACE_STATEMENTS)]
        await asyncio.sleep(0.3)
        assert await attempt("SELECT 1 AS one", "busy", 1) == (
            f"this workspace already runs {WORKSPACE_STATEMENTS} database statements at once; this one waited for its "
            "turn for the node's whole timeout (1 s)")
        await asyncio.gather(*hold)
    succeeded = [outcome for outcome in outcomes if outcome.startswith("[")]
    assert len(succeeded) == WORKSPACE_STATEMENTS  # the first turns; the next ones ran out of time
    # Those that waited for a turn: stopped by the database when the rest of their time was over, or never started
    # ("this workspace already runs 4 database statements at once; this one waited for its turn for the node's
    # whole timeout (3 s)", or a turn came with too little time left to connect).
    assert all(re.search(r"timeout \(3 s\)", outcome) for outcome in outcomes if outcome not in succeeded), outcomes


async def test_the_timeout_is_at_most_five_minutes(tmp_path, monkeypatch):
    """A statement holds a shared thread while it runs: 3600 s let one node hold it for an hour."""
    db = await _sqlite(tmp_path, monkeypatch)
    assert (await db.run("SELECT 1 AS one", timeout=300))["rows"] == [{"one": 1}]
    with pytest.raises(NodeError, match="parameter 'timeout' must be a whole number from 1 to 300, got 3600"):
        await db.run("SELECT 1 AS one", timeout=3600)


BIG_ROWS = {  # rows of 5 MB each, 20 or 60 of them
    "postgres": "SELECT g, repeat('x', 5000000) AS pad FROM generate_series(1, {count}) AS g",
    "mysql": "WITH RECURSIVE n(g) AS (SELECT 1 UNION ALL SELECT g + 1 FROM n WHERE g < {count}) "
             "SELECT g, REPEAT('x', 5000000) AS pad FROM n",
    "sqlite": "WITH RECURSIVE n(g) AS (SELECT 1 UNION ALL SELECT g + 1 FROM n WHERE g < {count}) "
              "SELECT g, hex(zeroblob(2500000)) AS pad FROM n",
}


async def test_the_rows_of_one_node_stop_at_a_size(database):
    """A row limit bounds the rows, not their size: 100 rows of 5 MB each were read and held."""
    from nodeflow_app.sql.run import MAX_RESULT_BYTES

    for writes in (False, True):
        with pytest.raises(NodeError, match=f"the rows read passed {MAX_RESULT_BYTES // 2 ** 20} MB, the most a "
                                            "Database Query node holds; lower 'Row limit', or select fewer or "
                                            "smaller columns"):
            await database.run(BIG_ROWS[database.kind].format(count=20), row_limit=100, allow_writes=writes)
    output = await database.run(BIG_ROWS[database.kind].format(count=20), row_limit=2)
    assert ([row["g"] for row in output["rows"]], output["truncated"]) == ([1, 2], True)


_READ_BIG_ROWS = """
import asyncio, json, pathlib, resource, sys
from tests.nodes.test_database_query import Database, _store

async def main():
    kind, folder, fields, statements = sys.argv[1], pathlib.Path(sys.argv[2]), *map(json.loads, sys.argv[3:])
    store = _store(folder)
    store.set("db", kind, fields)
    database = Database(kind, "", store)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for sql, writes in statements:
        output = await database.run(sql, row_limit=1, allow_writes=writes)
        assert (output["row_count"], output["truncated"]) == (1, True), output
    print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024)

asyncio.run(main())
"""


@pytest.mark.parametrize("kind", ["postgres", "mysql"])
async def test_a_row_limit_bounds_memory_whatever_the_statement(tmp_path, monkeypatch, kind):
    """Only a read-only statement starting with SELECT, VALUES, TABLE or WITH came from the server as it was read
    (PostgreSQL), or a read-only one (MySQL): row_limit 1 over 60 rows of 5 MB held 300 MB for "(SELECT ...)" or
    with writes allowed. Measured in a process of its own (the peak of its memory)."""
    import json
    import subprocess
    import sys

    monkeypatch.setenv(ALLOWLIST_ENV, "127.0.0.1")
    url = POSTGRES_URL if kind == "postgres" else MARIADB_URL
    with _role(url, kind, [] if kind == "postgres" else ["GRANT SELECT ON test.* TO {role}"]) as role:
        fields = {"host": "127.0.0.1", "port": "5432" if kind == "postgres" else "3306", "database": "test",
                  "user": role}
        rows = (BIG_ROWS[kind].format(count=60) if kind == "postgres"  # MariaDB takes no WITH in parentheses
                else "SELECT seq AS g, REPEAT('x', 5000000) AS pad FROM seq_1_to_60")
        statements = [(rows, False), (f"({rows})", False), (rows, True), (f"({rows})", True)]
        child = subprocess.run([sys.executable, "-c", _READ_BIG_ROWS, kind, str(tmp_path), json.dumps(fields),
                                json.dumps(statements)],
                               capture_output=True, text=True, timeout=120, cwd=str(Path(__file__).parents[2]))
    assert child.returncode == 0, child.stderr
    assert int(child.stdout) < 100, f"{child.stdout.strip()} MB more at the peak"


async def test_a_mariadb_statement_with_writes_allowed_still_makes_every_row(tmp_path, monkeypatch):
    """With writes allowed the rows come as they are read too, and all of them are made after the limit (a function
    with side effects runs for each): an error in the third row fails the node, as it did when every row was read
    first. Read-only, the statement stops after the rows wanted."""
    monkeypatch.setenv(ALLOWLIST_ENV, "127.0.0.1")
    store = _store(tmp_path)
    with _role(MARIADB_URL, "mysql", ["GRANT SELECT ON test.* TO {role}"]) as role:
        store.set("db", "mysql", {"host": "127.0.0.1", "port": "3306", "database": "test", "user": role})
        database = Database("mysql", "", store)
        third_fails = "SELECT seq, (SELECT 1 UNION SELECT IF(seq < 3, 1, 2)) AS x FROM seq_1_to_5"
        output = await database.run(third_fails, row_limit=1)
        assert (output["rows"], output["truncated"]) == ([{"seq": 1, "x": 1}], True)
        with pytest.raises(NodeError, match="Subquery returns more than 1 row"):
            await database.run(third_fails, row_limit=1, allow_writes=True)


async def test_sqlite_fts3_tokenizer_is_refused(tmp_path, monkeypatch):
    """fts3_tokenizer('simple') gave a native pointer of the app's process, and fts3_tokenizer(name, pointer) makes
    SQLite call whatever a pointer points at. (SQLite itself refuses it in a view or a trigger of the file.)"""
    db = await _sqlite(tmp_path, monkeypatch)
    for writes in (False, True):
        for sql in ("SELECT fts3_tokenizer('simple') AS pointer", "SELECT FTS3_TOKENIZER('porter', x'00') AS result"):
            with pytest.raises(NodeError, match="(?i)not authorized to use function: fts3_tokenizer"):
                await db.run(sql, allow_writes=writes)
    assert (await db.run("SELECT 1 AS one", allow_writes=True))["rows"] == [{"one": 1}]


async def test_a_postgres_statement_that_is_no_query_gives_its_rows_as_they_come(tmp_path, monkeypatch):
    """DECLARE takes queries only, and psycopg read every row of any other statement first: row_limit 1 of
    INSERT ... RETURNING 60 rows of 5 MB held 310 MB (EXPLAIN VERBOSE of 60 such constants 294 MB), and the 64 MB
    cap applied only after all of them were read. Such rows now come one at a time. Measured in a process of its
    own (the peak of its memory)."""
    import json
    import subprocess
    import sys

    monkeypatch.setenv(ALLOWLIST_ENV, "127.0.0.1")
    with private_schema() as schema:
        engine = make_engine(POSTGRES_URL)
        with engine.begin() as conn:
            conn.execute(text(f'CREATE TABLE "{schema}".t (g int, pad text)'))
        engine.dispose()
        grants = [f'GRANT USAGE ON SCHEMA "{schema}" TO {{role}}', f'GRANT SELECT, INSERT ON "{schema}".t TO {{role}}']
        with _role(POSTGRES_URL, "postgres", grants) as role:
            fields = {"host": "127.0.0.1", "port": "5432", "database": "test", "user": role}
            insert = (f'INSERT INTO "{schema}".t SELECT g, repeat(\'x\', 5000000) FROM generate_series(1, 60) AS g '
                      "RETURNING g, pad")
            child = subprocess.run([sys.executable, "-c", _READ_BIG_ROWS, "postgres", str(tmp_path),
                                    json.dumps(fields), json.dumps([(insert, True)])],
                                   capture_output=True, text=True, timeout=120, cwd=str(Path(__file__).parents[2]))
            assert child.returncode == 0, child.stderr
            assert int(child.stdout) < 100, f"{child.stdout.strip()} MB more at the peak"

            store = _store(tmp_path)
            store.set("db", "postgres", fields)
            database = Database("postgres", "", store)
            table = f'"{schema}".t'
            output = await database.run(f"INSERT INTO {table} VALUES (1, :a), (2, 'b') RETURNING g AS n",
                                        allow_writes=True, parameters=[{"key": "a", "value": "it's 100%"}])
            assert (output["rows"], output["columns"], output["truncated"]) == ([{"n": 1}, {"n": 2}], ["n"], False)
            none = await database.run(f"INSERT INTO {table} SELECT 1, 'a' WHERE false RETURNING pad", allow_writes=True)
            assert (none["rows"], none["columns"]) == ([], ["pad"])
            plain = await database.run(f"INSERT INTO {table} VALUES (:g, 'c')", allow_writes=True,
                                       parameters=[{"key": "g", "value": "3"}])
            assert (plain["rows"], plain["affected"]) == ([], 1)
            shown = await database.run("SHOW ALL", row_limit=2)
            assert (shown["columns"], shown["row_count"], shown["truncated"]) == (
                ["name", "setting", "description"], 2, True)
            plan = await database.run("EXPLAIN SELECT 1", row_limit=5)
            assert plan["columns"] == ["QUERY PLAN"] and plan["rows"][0]["QUERY PLAN"].startswith("Result")
            third_fails = f"INSERT INTO {table} SELECT g, 'x' FROM generate_series(1, 5) AS g WHERE 10 / (3 - g) > 0 " \
                          "RETURNING g"
            with pytest.raises(NodeError, match="division by zero"):  # every row is made, past the limit too
                await database.run(third_fails, row_limit=1, allow_writes=True)
            with pytest.raises(NodeError, match="the statement tries to write, but the node is read-only"):
                await database.run(f"INSERT INTO {table} VALUES (4, 'd') RETURNING g")
            with pytest.raises(NodeError, match=r"refused the statement: .*more than one row returned by a subquery"):
                await database.run(f"INSERT INTO {table} SELECT (SELECT g FROM generate_series(1, 2) AS g), 'e' "
                                   "RETURNING g", allow_writes=True)
