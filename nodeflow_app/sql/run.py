"""Open a connection's database and run one statement in a transaction that is read-only unless writes are allowed.

Read-only is enforced by the database, not by reading the SQL: PostgreSQL `SET TRANSACTION READ ONLY`,
MySQL / MariaDB a read-only session (a statement that commits by itself, like TRUNCATE or ALTER, would end a
read-only transaction and run outside it), SQLite a file opened with `mode=ro`. A SQLite file must lie
inside the data folder. Each call opens and closes its own connection (NullPool): a node runs now and then.
Every driver takes exactly one statement, so a second one cannot end the read-only transaction. The one
reading of the SQL (`check_mysql_statement`): on MySQL / MariaDB a statement starts with one of
MYSQL_STATEMENTS (not SET, EXECUTE, PREPARE or a compound BEGIN / IF / WHILE block, which could change the
session's read-only mode or time limit for what they run) and holds no SET_VAR or MAX_EXECUTION_TIME hint.
Statements run in a few threads of their own, so slow ones never hold the threads every other run uses, and a
workspace runs at most WORKSPACE_STATEMENTS at once, so one workspace never holds them all. The node's timeout
bounds the whole call (waiting for a turn and a thread, connecting, the statement and its rows): the database
stops the statement itself, and once the time and DEADLINE_MARGIN_S more have passed the connection's socket is
shut (`_Deadline`), since a thread cannot be stopped and a server that stops answering would hold it for good.

A PostgreSQL or MySQL role that reaches beyond its data to the database host is refused before the statement
runs (`refuse_privileged`): a graph must never start a program (`COPY ... TO PROGRAM`) or read and write the
server's files (`pg_read_file`, `LOAD_FILE`, `INTO OUTFILE`), and any account may store a connection in its
own workspace. NODEFLOW_DB_ALLOW_PRIVILEGED=1 lifts this for an install whose graph editors may do that.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import os
import re
import socket
import sqlite3
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from sqlalchemy import URL, Engine, create_engine, event, make_url, text
from sqlalchemy.exc import ArgumentError, DBAPIError, SQLAlchemyError
from sqlalchemy.pool import NullPool

from nodeflow_app.contract import NodeError
from nodeflow_app.settings import data_dir, db_url
from nodeflow_app.connections import DEFAULT_WORKSPACE, Connection
from nodeflow_app.net.guard import BlockedUrl, checked_addresses

from nodeflow_app.sql.values import to_json

DRIVERS = {"postgres": "postgresql+psycopg", "mysql": "mysql+pymysql"}
READ_ONLY_START = {"postgres": ("SET TRANSACTION READ ONLY",),
                   "mysql": ("SET SESSION TRANSACTION READ ONLY", "START TRANSACTION READ ONLY")}
MYSQL_STATEMENTS = frozenset({"SELECT", "WITH", "VALUES", "TABLE", "SHOW", "DESCRIBE", "DESC", "EXPLAIN", "ANALYZE",
                              "INSERT", "UPDATE", "DELETE", "REPLACE", "CALL", "CREATE", "ALTER", "DROP",
                              "TRUNCATE", "RENAME", "("})
_MYSQL_HINT = re.compile(r"/\*\+(?:(?!\*/).)*?\b(?:SET_VAR|MAX_EXECUTION_TIME)\s*\(", re.I | re.S)  # MySQL's /*+ */
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x0c\x0e-\x1f]")  # all but tab, line feed and carriage return
_DATABASE_THREADS = ThreadPoolExecutor(max_workers=16, thread_name_prefix="nodeflow-sql")
WORKSPACE_STATEMENTS = 4  # one workspace's statements at once: the threads left serve every other workspace
DEADLINE_MARGIN_S = 3  # after the node's timeout, for the database's own "stopped" to arrive before the socket is shut
# What a node's rows may hold (values measured as read): they travel in the graph and its run records.
MAX_RESULT_BYTES = 64 * 1024 * 1024
BATCH_BYTES = 1024 * 1024  # rows fetched at once, about
PG_NOT_A_QUERY = ("42601", "0A000")  # syntax_error, feature_not_supported: what DECLARE says of INSERT, WITH ... INSERT
_running: collections.Counter[str] = collections.Counter()  # workspace -> its statements taken or running
_running_lock = threading.Lock()
WRITE_REFUSED = "the statement tries to write, but the node is read-only; turn on 'Allow writes' to let it"
ALLOW_PRIVILEGED_ENV = "NODEFLOW_DB_ALLOW_PRIVILEGED"
# PostgreSQL roles whose members reach the database host: name -> why that matters.
PG_SERVER_ROLES = {"pg_execute_server_program": "programs on the database host",
                   "pg_read_server_files": "files of the database host",
                   "pg_write_server_files": "files of the database host"}
# Every role the login (session_user) or the role it is set to (current_user) is or may become (SET ROLE, also
# inside a DO block) that is a superuser, has CREATEROLE or is one of the server roles. By oid: a server
# without some of those roles simply has no rows for them.
PG_REACH = ("SELECT r.rolname, r.rolsuper, r.rolcreaterole, r.rolname IN (session_user, current_user) FROM pg_roles r "
            "WHERE (r.rolsuper OR r.rolcreaterole OR r.rolname IN ("
            + ", ".join(f"'{name}'" for name in PG_SERVER_ROLES) + ")) AND (pg_has_role(session_user, r.oid, "
            "'MEMBER') OR pg_has_role(current_user, r.oid, 'MEMBER')) ORDER BY r.rolname")
# Functions that read, list or write the database host's files (and so its secrets), or log in to a database as
# the server itself (dblink_connect_u: no password asked). Only superusers may call them until an admin grants
# EXECUTE: to the role, to a role it is or may become, or to PUBLIC.
PG_FILE_FUNCTIONS = ("lo_import", "lo_export", "pg_read_file", "pg_read_binary_file", "pg_ls_dir", "pg_stat_file",
                     "pg_file_write", "pg_file_rename", "pg_file_unlink", "dblink_connect_u")
# Every overload (PostgreSQL 16 added pg_read_file(text, boolean)), in any schema: an extension may live outside
# the search path and still be called. The client-side large-object functions have other names (lo_open...).
PG_FILE_ACCESS = ("SELECT DISTINCT p.proname FROM pg_proc p, pg_roles r WHERE p.proname IN ("
                  + ", ".join(f"'{f}'" for f in PG_FILE_FUNCTIONS) + ") "
                  "AND (pg_has_role(session_user, r.oid, 'MEMBER') OR pg_has_role(current_user, r.oid, 'MEMBER')) "
                  "AND has_function_privilege(r.oid, p.oid, 'EXECUTE') ORDER BY 1")
# A MySQL / MariaDB global privilege that reaches beyond the data (ALL PRIVILEGES includes them): why it matters.
MYSQL_PRIVILEGES = {"FILE": "has the FILE privilege (files of the database host)",
                    "SUPER": "has the SUPER privilege (server settings such as its log files)",
                    "SYSTEM_VARIABLES_ADMIN": "has SYSTEM_VARIABLES_ADMIN (server settings such as its log files)"}


@dataclass(slots=True)
class Outcome:
    rows: list[dict[str, Any]]
    columns: list[str]
    truncated: bool
    affected: int | None


async def run_checked(connection: Connection, sql: str, params: dict[str, Any], *, writable: bool, limit: int,
                      timeout: int, workspace: str = DEFAULT_WORKSPACE) -> Outcome:
    """`run_statement` in a thread, after the server's address passed the SSRF guard (a connection anyone can
    store must not reach the host's own services, like the app's database, Redis or metadata, unless
    allowlisted) and once `workspace` runs fewer than WORKSPACE_STATEMENTS statements; `timeout` counts from now."""
    deadline = time.monotonic() + timeout
    address = await checked_address(connection)
    await _take_turn(workspace, deadline, timeout)
    try:
        turn = _DATABASE_THREADS.submit(run_statement, connection, sql, params, writable=writable, limit=limit,
                                        timeout=timeout, address=address, deadline=deadline)
    except BaseException:
        _leave(workspace)
        raise
    # The turn ends when the thread does (or when it is cancelled before it starts): cancelling the node does
    # not stop a statement that runs, so its turn must not go to the next one before it is over.
    turn.add_done_callback(lambda _: _leave(workspace))
    return await asyncio.wrap_future(turn)


async def _take_turn(workspace: str, deadline: float, timeout: int) -> None:
    """Count one more statement of `workspace`, once it runs fewer than WORKSPACE_STATEMENTS (waiting is part of
    the node's timeout). It polls: runs of one workspace may come from several event loops."""
    while True:
        with _running_lock:
            if _running[workspace] < WORKSPACE_STATEMENTS:
                _running[workspace] += 1
                return
        if time.monotonic() >= deadline:
            raise NodeError(f"this workspace already runs {WORKSPACE_STATEMENTS} database statements at once; this "
                            f"one waited for its turn for the node's whole timeout ({timeout} s)")
        await asyncio.sleep(0.05)


def _leave(workspace: str) -> None:
    with _running_lock:
        _running[workspace] -= 1
        if _running[workspace] <= 0:
            del _running[workspace]


async def checked_address(connection: Connection) -> str | None:
    """The address a PostgreSQL or MySQL connection may reach (None: SQLite, or a host name the allowlist names)."""
    if connection.kind == "sqlite":
        return None
    host, port = str(connection.fields.get("host") or "").strip(), connection.fields.get("port")
    if not host or host.startswith("/") or "," in host:  # a socket folder, or several hosts
        raise NodeError(f"connection {connection.name!r} has host {host!r}: give one host name or address")
    default = 5432 if connection.kind == "postgres" else 3306
    try:
        found = await checked_addresses(host, int(port) if str(port or "").isdigit() else default)
    except BlockedUrl as error:
        raise NodeError(f"connection {connection.name!r}: {error}") from None
    return str(found[0]) if found else None


def run_statement(connection: Connection, sql: str, params: dict[str, Any], *, writable: bool, limit: int,
                  timeout: int, address: str | None = None, deadline: float | None = None) -> Outcome:
    """Run `sql` with `params` bound; blocking (call it from a thread). `address`: connect there (the one the
    guard checked), whatever the host name resolves to by now. `deadline` (time.monotonic()): when the node's
    `timeout` ends, if it started before this call (it waited for a thread)."""
    if connection.kind == "mysql":
        check_mysql_statement(sql)
    deadline = time.monotonic() + timeout if deadline is None else deadline
    if time.monotonic() >= deadline:
        raise NodeError(f"every thread for database statements was busy for the node's whole timeout ({timeout} s); "
                        "try again, or raise the timeout")
    watch = _Deadline(deadline + DEADLINE_MARGIN_S)
    try:
        return _run(connection, sql, params, writable, limit, timeout, address, deadline, watch)
    except (NodeError, SQLAlchemyError):
        if watch.passed:  # its socket was shut: whatever failed then, the server took too long
            raise NodeError(f"{_where(connection)} did not answer within the node's timeout ({timeout} s), so its "
                            "connection was closed") from None
        raise
    finally:
        watch.end()


def _run(connection: Connection, sql: str, params: dict[str, Any], writable: bool, limit: int, timeout: int,
         address: str | None, deadline: float, watch: _Deadline) -> Outcome:
    engine = _engine(connection, writable, deadline - time.monotonic(), address, watch)
    try:
        try:
            database = engine.connect()
        except SQLAlchemyError as error:
            raise NodeError(f"cannot connect to {_where(connection)}: {_first_line(error)}") from None
        with database:  # closing it is watched too: a server that stops answering could hold its rollback
            _limit_time(database, connection.kind, deadline - time.monotonic(), timeout)
            refuse_privileged(database, connection)
            _begin(database, connection.kind, writable)
            try:
                outcome = _execute(database, connection.kind, sql, params, limit, writable)
            except DBAPIError as error:
                raise NodeError(_refusal(error, connection, timeout)) from None
            database.commit() if writable else database.rollback()
            return outcome
    finally:
        engine.dispose()


class _Deadline:
    """Shuts the sockets of a statement's connection once `at` (time.monotonic()) has passed: the database stops a
    statement at the node's timeout, but a server that stops answering, or never speaks, or sends a byte now and
    then (a read timeout starts again with each read) would hold its thread for good, since a thread cannot be
    stopped. A read waiting in the thread then fails at once."""

    def __init__(self, at: float):
        self.passed = False
        self._at = at
        self._timer: threading.Timer | None = None  # started with the first socket (a SQLite file has none)
        self._sockets: list[Any] = []  # callables giving a socket (or None, not yet or no longer connected)
        self._own: list[socket.socket] = []  # duplicates of a driver's socket, closed at the end
        self._lock = threading.Lock()

    def watch(self, get_socket: Any) -> None:
        with self._lock:
            self._sockets.append(get_socket)
            if self._timer is None:
                self._timer = threading.Timer(max(0.0, self._at - time.monotonic()), self._shut)
                self._timer.daemon = True
                self._timer.start()

    def watch_descriptor(self, fd: int) -> None:
        """A socket a C library owns (libpq): a duplicate of it, so that it is never another file by the time it is
        shut (libpq may close its own and the number be reused); shutting it down ends the connection all the same."""
        duplicate = socket.socket(fileno=os.dup(fd))
        with self._lock:
            self._own.append(duplicate)
        self.watch(lambda: duplicate)

    def _shut(self) -> None:
        with self._lock:
            self.passed = True
            for get_socket in self._sockets:
                with contextlib.suppress(OSError):
                    sock = get_socket()
                    if sock is not None:
                        sock.shutdown(socket.SHUT_RDWR)

    def end(self) -> None:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
            self._sockets.clear()
            for duplicate in self._own:
                duplicate.close()
            self._own.clear()


def check_mysql_statement(sql: str) -> None:
    """NodeError for a MySQL / MariaDB statement that could change the session's read-only mode or time limit
    for what it runs (see the module's docstring)."""
    if _CONTROL.search(sql):  # the lexers differ on them (MariaDB ends a `--` comment at one): nothing to guess
        raise NodeError("the statement holds a control character; remove it")
    word = _first_word(sql)
    if word not in MYSQL_STATEMENTS:
        raise NodeError(f"a MySQL / MariaDB statement here starts with {', '.join(sorted(MYSQL_STATEMENTS - {'('}))}, "
                        f"not {word or 'nothing'} (SET, EXECUTE, PREPARE and BEGIN / IF blocks could lift the node's "
                        "read-only mode or its time limit)")
    if _MYSQL_HINT.search(sql):
        raise NodeError("the statement changes a setting for itself (a SET_VAR or MAX_EXECUTION_TIME hint), which could "
                        "lift the node's time limit; run it without that")


def _first_word(sql: str) -> str:
    """The statement's first word (upper case) or "(", read past the comments MySQL skips; /*! ... */ and
    /*M! ... */ hold code, so their content counts (even when the server's version would skip it)."""
    at, end = 0, len(sql)
    while at < end:
        if sql[at].isspace():
            at += 1
        elif sql.startswith("#", at) or (sql.startswith("--", at) and (at + 2 == end or sql[at + 2].isspace())):
            line_end = sql.find("\n", at)
            at = end if line_end < 0 else line_end + 1
        elif sql.startswith("/*!", at) or sql.startswith("/*M!", at):
            at += 4 if sql.startswith("/*M!", at) else 3
            while at < end and sql[at].isdigit():
                at += 1
        elif sql.startswith("/*", at):
            comment_end = sql.find("*/", at + 2)
            at = end if comment_end < 0 else comment_end + 2
        elif sql.startswith("*/", at):  # the end of an executable comment
            at += 2
        else:
            break
    found = re.match(r"[A-Za-z_]+|\(", sql[at:])
    return found.group().upper() if found else ""


def bind_names(sql: str) -> set[str]:
    """The `:name`s SQLAlchemy will bind in `sql`."""
    try:
        return set(text(sql)._bindparams)
    except ArgumentError as error:
        raise NodeError(f"parameter 'query' is not valid: {error}") from None


def refuse_privileged(database: Any, connection: Connection) -> None:
    """NodeError naming each way the connection's role reaches beyond its data (see the module's docstring)."""
    if connection.kind == "sqlite" or os.environ.get(ALLOW_PRIVILEGED_ENV, "").strip().lower() in ("1", "true", "yes"):
        return
    try:
        reasons = _pg_reach(database) if connection.kind == "postgres" else _mysql_reach(database)
    except DBAPIError as error:
        raise NodeError(f"cannot read the rights of {_where(connection)}'s role, so it is not used: "
                        f"{_first_line(error)} (set {ALLOW_PRIVILEGED_ENV}=1 if everyone who edits graphs on "
                        "this install may reach that host)") from None
    finally:
        database.rollback()  # the check's own transaction: the statement starts a fresh one
    if reasons:
        raise NodeError(f"{_where(connection)} logs in as {connection.fields.get('user')!r}, which "
                        f"{'; and '.join(reasons)}. Store a role that reaches its data only, or set "
                        f"{ALLOW_PRIVILEGED_ENV}=1 if everyone who edits graphs on this install may do that")


def _pg_reach(database: Any) -> list[str]:
    rows = database.exec_driver_sql(PG_REACH).all()
    superusers = [(name, own) for name, superuser, _, own in rows if superuser]
    if superusers:  # a superuser can do everything else too
        programs = " (it could run programs on the database host with COPY ... TO PROGRAM)"
        if any(own for _, own in superusers):
            return ["is a superuser" + programs]
        return [f"can become the superuser {name!r} (SET ROLE){programs}" for name, _ in superusers]
    reasons = [("has" if own else f"can become {name!r}, which has")
               + " CREATEROLE (it could grant itself pg_execute_server_program)" if creates
               else f"is a member of {name} ({PG_SERVER_ROLES[name]})" for name, _, creates, own in rows]
    functions = [name for (name,) in database.exec_driver_sql(PG_FILE_ACCESS)]
    if functions:
        reasons.append(f"may call {', '.join(functions)} (the database host's files, or its databases as the server)")
    return reasons


def _mysql_reach(database: Any) -> list[str]:
    """From SHOW GRANTS: the account's own, then (MariaDB) each role granted to it, set in turn, which lists
    what that role and the roles granted to it hold. MySQL does not show a role's rights that way, so there an
    account with roles is refused."""
    lines = [str(line) for (line,) in database.exec_driver_sql("SHOW GRANTS")]
    held = _global_privileges(lines)
    if not database.dialect.is_mariadb:
        # MySQL's APPLICABLE_ROLES lists the current account's roles only (GRANTEE holds no host there).
        if any(_grants_a_role(line) for line in lines) or database.exec_driver_sql(
                "SELECT COUNT(*) FROM information_schema.APPLICABLE_ROLES").scalar():
            return ["has roles, whose rights MySQL does not show it (grant the rights to the account itself)"]
    else:
        held |= _mariadb_role_privileges(database)
    if "ALL PRIVILEGES" in held:
        held |= set(MYSQL_PRIVILEGES)
    return [why for name, why in MYSQL_PRIVILEGES.items() if name in held]


def _mariadb_role_privileges(database: Any) -> set[str]:
    """What the roles granted to the account hold: each set in turn (SHOW GRANTS then lists that role's and the
    roles granted to it), then the role in use restored."""
    roles = [name for (name,) in database.exec_driver_sql(  # MariaDB writes both as user@host
        "SELECT ROLE_NAME FROM information_schema.APPLICABLE_ROLES WHERE GRANTEE = CURRENT_USER()")]
    held: set[str] = set()
    if not roles:
        return held
    in_use = database.exec_driver_sql("SELECT CURRENT_ROLE()").scalar()
    try:
        for role in roles:
            database.exec_driver_sql(f"SET ROLE {_mysql_name(role)}")
            held |= _global_privileges([str(line) for (line,) in database.exec_driver_sql("SHOW GRANTS")])
    finally:
        database.exec_driver_sql(f"SET ROLE {_mysql_name(in_use) if in_use else 'NONE'}")
    return held


def _global_privileges(lines: list[str]) -> set[str]:
    """The privileges `GRANT ... ON *.* TO ...` lines of SHOW GRANTS give (the account's and its role's in use)."""
    held: set[str] = set()
    for line in lines:
        granted, on, rest = line.partition(" ON ")
        if on and rest.startswith("*.*") and granted.startswith("GRANT "):
            held |= {name.strip().upper() for name in granted.removeprefix("GRANT ").split(",")}
    return held


def _grants_a_role(line: str) -> bool:
    """`GRANT role TO user` (no ON): a role granted to the account."""
    return line.startswith("GRANT ") and " ON " not in line and " TO " in line


def _mysql_name(name: str) -> str:
    return "`" + str(name).replace("`", "``") + "`"


def _limit_time(database: Any, kind: str, seconds: float, timeout: int) -> None:
    """Have the database stop each statement after `seconds` (what is left of the node's `timeout`), from the
    permission check on: a statement runs in a thread the event loop cannot stop."""
    if seconds <= 0:
        raise NodeError(f"connecting to the database took the node's whole timeout ({timeout} s)")
    milliseconds = max(1, int(seconds * 1000))
    if kind == "mysql":  # a session setting, made before any transaction starts
        mariadb = database.dialect.is_mariadb
        database.exec_driver_sql(f"SET SESSION max_statement_time = {milliseconds / 1000}" if mariadb
                                 else f"SET SESSION max_execution_time = {milliseconds}")  # MySQL: SELECTs only
    elif kind == "postgres":
        database.exec_driver_sql(f"SET statement_timeout = {milliseconds}")
        database.commit()  # a SET in a transaction that is rolled back (the permission check's) would be undone
    else:  # sqlite3 calls the handler every 10,000 steps; True interrupts the statement
        end = time.monotonic() + seconds
        database.connection.dbapi_connection.set_progress_handler(lambda: time.monotonic() > end, 10_000)


def _begin(database: Any, kind: str, writable: bool) -> None:
    """Start the transaction: read-only unless `writable`."""
    if not writable and kind in READ_ONLY_START:
        for statement in READ_ONLY_START[kind]:
            database.exec_driver_sql(statement)
    if kind == "sqlite":
        sqlite = database.connection.dbapi_connection
        # ATTACH (and VACUUM INTO, which attaches) would reach files outside the data folder, or NodeFlow's own.
        sqlite.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
        sqlite.set_authorizer(_sqlite_authorizer)


def _sqlite_authorizer(action: int, first: str | None, second: str | None, _database: str | None,
                       _trigger: str | None) -> int:
    """SQLite asks this for each part of a statement it prepares (a view's and a trigger's too). fts3_tokenizer
    hands out a native pointer, and given one back makes SQLite call it: a crash, or code run in the app."""
    if action == sqlite3.SQLITE_FUNCTION and (second or "").lower() == "fts3_tokenizer":
        return sqlite3.SQLITE_DENY
    return sqlite3.SQLITE_OK


def _execute(database: Any, kind: str, sql: str, params: dict[str, Any], limit: int, writable: bool) -> Outcome:
    """Run the statement and read at most `limit` rows (one more says whether rows were left). The rows come from
    the server as they are read, a few at a time, so that the limit and MAX_RESULT_BYTES bound memory (the drivers
    otherwise read every row first). Read-only, the statement then stops; with writes every row is still made,
    keeping none, so that a function with side effects runs for each row and an error in any row fails the node."""
    result = _start(database, kind, sql, params)
    if not result.returns_rows:
        return Outcome([], [], False, result.rowcount)
    columns = list(result.keys())
    fetched: list[Any] = []
    size = widest = 0
    while len(fetched) <= limit:
        batch = result.fetchmany(_batch(limit + 1 - len(fetched), widest))
        if not batch:
            break
        for row in batch:
            row_size = sum(map(_size, row))
            size, widest = size + row_size, max(widest, row_size)
        if size > MAX_RESULT_BYTES:
            _stop(database, kind, result)
            raise NodeError(f"the rows read passed {MAX_RESULT_BYTES // (1024 * 1024)} MB, the most a Database Query "
                            "node holds; lower 'Row limit', or select fewer or smaller columns")
        fetched += batch
    truncated = len(fetched) > limit
    if not truncated:
        result.close()
    elif not writable:
        _stop(database, kind, result)
    elif getattr(result.cursor, "name", None):  # a PostgreSQL cursor: the server makes the rest, sending none
        database.exec_driver_sql(f'MOVE FORWARD ALL IN "{result.cursor.name}"')  # SQLAlchemy's name: c_<hex>_<n>
        result.close()
    elif kind == "mysql" or isinstance(result, _Streamed):  # rows as they come: read to the end, so that an
        while result.fetchmany(_batch(limit, widest)):  # error in a row is raised
            pass
    else:
        result.close()
    rows = [{column: to_json(value) for column, value in zip(columns, row)} for row in fetched[:limit]]
    return Outcome(rows, columns, truncated, None)


def _start(database: Any, kind: str, sql: str, params: dict[str, Any]) -> Any:
    """The statement's result, read from the server as it is fetched: MySQL's unbuffered cursor takes any
    statement; a PostgreSQL cursor (DECLARE) takes a query only, so PostgreSQL itself says whether the statement is
    one, and any other statement that gives rows (INSERT ... RETURNING, SHOW, EXPLAIN) comes one row at a time
    (`_Streamed`); one that gives none runs plainly. sqlite3 makes rows as they are fetched anyway. A PostgreSQL
    cursor makes only the rows fetched."""
    streamed = text(sql).execution_options(stream_results=True)
    if kind == "mysql":
        return database.execute(streamed, params)
    if kind == "postgres":
        savepoint = database.begin_nested()  # a refused DECLARE fails the transaction: it goes back to before it
        try:
            result = database.execute(streamed, params)
        except DBAPIError as error:
            savepoint.rollback()
            if getattr(error.orig, "sqlstate", None) not in PG_NOT_A_QUERY:
                raise
        else:
            savepoint.commit()
            return result
        columns = _pg_columns(database, sql, params)
        if columns:
            return _Streamed(database, sql, params, columns)
    return database.execute(text(sql), params)


def _pg_columns(database: Any, sql: str, params: dict[str, Any]) -> list[str]:
    """The columns PostgreSQL says the statement gives, asked without running it (Parse and Describe of its text
    with the values written in); none when it gives no rows, or when the server cannot parse it (then the
    statement runs plainly and says why itself)."""
    from psycopg import ClientCursor, pq

    compiled = text(sql).compile(dialect=database.dialect)
    driver = database.connection.dbapi_connection
    written = ClientCursor(driver).mogrify(str(compiled), compiled.construct_params(params))
    savepoint = database.begin_nested()  # a refused Parse fails the transaction: it goes back to before it
    try:
        if driver.pgconn.prepare(b"", written.encode(driver.info.encoding), None).status != pq.ExecStatus.COMMAND_OK:
            return []
        described = driver.pgconn.describe_prepared(b"")
        return [described.fname(i).decode(driver.info.encoding) for i in range(described.nfields)]
    finally:
        savepoint.rollback()


class _Streamed:
    """The rows of a PostgreSQL statement that is no query, as psycopg's stream() hands them over, one at a time
    as they arrive: its plain cursor holds every row before the first is seen (INSERT ... RETURNING of 60 rows of
    5 MB took 300 MB whatever the row limit). Closed before its end, the statement is cancelled. Offers what
    `_execute` uses of a SQLAlchemy result; the driver's errors come as SQLAlchemy's, as from a result."""

    returns_rows = True
    cursor = None  # no server-side cursor to move through

    def __init__(self, database: Any, sql: str, params: dict[str, Any], columns: list[str]):
        compiled = text(sql).compile(dialect=database.dialect)
        self._statement, self._params = str(compiled), compiled.construct_params(params)
        self._driver_error = database.dialect.loaded_dbapi.Error
        self._columns = columns
        self._rows = database.connection.dbapi_connection.cursor().stream(self._statement, self._params)

    def keys(self) -> list[str]:
        return self._columns

    def fetchmany(self, count: int) -> list[Any]:
        try:
            return list(itertools.islice(self._rows, count))
        except self._driver_error as error:
            raise DBAPIError.instance(self._statement, self._params, error, self._driver_error) from None

    def close(self) -> None:
        self._rows.close()


def _batch(most: int, widest: int) -> int:
    """How many rows to fetch next: one at first, then about BATCH_BYTES of rows as wide as the widest so far."""
    return 1 if not widest else max(1, min(most, BATCH_BYTES // widest))


def _size(value: Any) -> int:
    """About the bytes a value read from the database holds: text and bytes by their length."""
    if isinstance(value, (str, bytes, bytearray, memoryview)):
        return 8 + len(value)
    if isinstance(value, dict):
        return 8 + sum(_size(key) + _size(item) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return 8 + sum(map(_size, value))
    return 8


def _stop(database: Any, kind: str, result: Any) -> None:
    """Stop the statement without reading the rows left (nobody wants them)."""
    if kind == "mysql":
        _stop_sending(database, result)
    else:
        result.close()  # a PostgreSQL cursor is closed (its other rows are never made), a SQLite statement too


def _stop_sending(database: Any, result: Any) -> None:
    """MySQL's unbuffered cursor reads every row left before it closes: on a big table, until the node's time
    limit, for rows nobody wants. The server stops the statement instead (KILL QUERY of the node's own session,
    from a second one: any account may stop its own statements), and its interruption is expected."""
    session = database.connection.dbapi_connection.thread_id()
    try:
        with database.engine.connect() as other:
            other.exec_driver_sql(f"KILL QUERY {int(session)}")
    except SQLAlchemyError:
        pass  # not stopped (the server refused a second session): the rows are read to the end, as before
    with contextlib.suppress(database.dialect.loaded_dbapi.Error):
        result.cursor.close()  # reads the server's "interrupted", expected here (SQLAlchemy would log it)
    result.close()


def _engine(connection: Connection, writable: bool, seconds: float, address: str | None, watch: _Deadline) -> Engine:
    """An engine for one connection, made within `seconds` (SQLite: waiting for a lock), watched by `watch`."""
    fields = connection.fields
    if connection.kind == "sqlite":
        mode = "rw" if writable else "ro"  # rw never creates a file: a typo in the path is an error
        url = f"sqlite:///file:{quote(str(sqlite_file(fields['path'])))}?mode={mode}&uri=true"
        return create_engine(url, poolclass=NullPool, connect_args={"timeout": max(0.0, seconds)})
    port = fields.get("port")
    if port is not None and not str(port).isdigit():
        raise NodeError(f"connection {connection.name!r} has port {port!r}, which is not a number")
    host = address if address is not None and connection.kind == "mysql" else fields["host"]
    url = URL.create(DRIVERS[connection.kind], username=fields["user"], password=fields.get("password"),
                     host=host, port=int(port) if port else None, database=fields["database"])
    # Bounds the TCP connect (PyMySQL), or connecting as a whole (psycopg; 2 s at least). Past that, `watch`
    # bounds everything: a read timeout would start again with each read, so a server sending a byte now and
    # then would pass it.
    connect_args: dict[str, Any] = {"connect_timeout": max(1, round(seconds))}
    if connection.kind == "postgres" and address is not None:
        connect_args["hostaddr"] = address  # the host name stays for TLS and error messages
    if connection.kind == "postgres":
        # A connection without a password sends none: libpq would send the server's own (PGPASSWORD, ~/.pgpass)
        # to whatever host the connection names. An empty password is "given" (PGPASSWORD is not read).
        connect_args.update(password=fields.get("password") or "", passfile=os.devnull)
        # psycopg sends a statement without parameters as a simple query, which may hold several
        # (`COMMIT; INSERT ...` would leave the read-only transaction); a prepared one holds exactly one.
        connect_args["prepare_threshold"] = 0
    engine = create_engine(url, poolclass=NullPool, connect_args=connect_args)

    @event.listens_for(engine, "do_connect")
    def connect(dialect: Any, _record: Any, cargs: Any, cparams: dict[str, Any]) -> Any:
        """The driver's connection, watched from the start (SQLAlchemy's own first queries included)."""
        if connection.kind == "mysql":  # watched before it reads the server's greeting
            database = dialect.connect(*cargs, **cparams, defer_connect=True)
            watch.watch(lambda: database._sock)
            database.connect()
        else:
            database = dialect.connect(*cargs, **cparams)
            watch.watch_descriptor(database.pgconn.socket)
        return database

    return engine


# NodeFlow's own folders in the data folder: what they hold is the app's, never a connection's.
OWN_FOLDERS = ("knowledge", "files", "uploads")


def sqlite_file(path: str) -> Path:
    """The SQLite file a connection names: relative to the data folder, never outside it, never NodeFlow's own."""
    root = data_dir().resolve()
    file = (root / path).resolve()  # an absolute `path` stays itself
    if not file.is_relative_to(root):
        raise NodeError(f"the SQLite file {path!r} is outside the data folder {root}; only files inside it can be used")
    if _nodeflow_own(file, root):
        raise NodeError(f"the SQLite file {path!r} is NodeFlow's own (its accounts, graphs, runs or knowledge); "
                        "a connection may use any other SQLite file of the data folder")
    if not file.is_file():
        raise NodeError(f"no SQLite file at {file}")
    if _holds_nodeflow_tables(file):
        raise NodeError(f"the SQLite file {path!r} holds a NodeFlow database (accounts, graphs, runs: a copy, a "
                        "backup, or the one left behind when the app moved to PostgreSQL); a connection may not use it")
    return file


def _holds_nodeflow_tables(file: Path) -> bool:
    """Whether the file is a NodeFlow database wherever it lies (read-only look; a file SQLite cannot read is left
    to the statement, which says so)."""
    try:
        with contextlib.closing(sqlite3.connect(f"{file.as_uri()}?mode=ro", uri=True)) as database:
            found = database.execute("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN "
                                     "('graph_version', 'node_run', 'pinned_output', 'user_session', "
                                     "'sign_in_attempt', 'webhook_address')").fetchone()[0]
            return found >= 2  # two of NodeFlow's own tables (one alone may be another app's name)
    except sqlite3.Error:
        return False


def _nodeflow_own(file: Path, root: Path) -> bool:
    """The app's database (with its journal files), a file in one of its folders, or its key."""
    if any(file.is_relative_to(root / folder) for folder in OWN_FOLDERS) or file == root / "secret.key":
        return True
    app_db = make_url(db_url())
    if app_db.get_backend_name() != "sqlite" or not app_db.database:
        return False
    database = Path(app_db.database).resolve()
    return file.parent == database.parent and file.name.startswith(database.name)  # -wal, -shm, -journal too


def _refusal(error: DBAPIError, connection: Connection, seconds: int) -> str:
    if _write_refused(error):
        return WRITE_REFUSED
    if _timed_out(error):
        return f"the statement ran longer than the node's timeout ({seconds} s) and was stopped by the database"
    return f"{_where(connection)} refused the statement: {_first_line(error)}"


def _timed_out(error: DBAPIError) -> bool:
    original = error.orig
    return (getattr(original, "sqlstate", None) == "57014"  # PostgreSQL query_canceled
            or (getattr(original, "args", None) or (None,))[0] in (1969, 3024)  # MariaDB / MySQL time limits
            or str(original) == "interrupted")  # SQLite's progress handler


def _write_refused(error: DBAPIError) -> bool:
    original = error.orig
    return (getattr(original, "sqlstate", None) == "25006"  # PostgreSQL read_only_sql_transaction
            or (getattr(original, "args", None) or (None,))[0] == 1792  # MySQL ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION
            or "readonly database" in str(original))  # SQLite opened with mode=ro


def _where(connection: Connection) -> str:
    fields = connection.fields
    place = fields["path"] if connection.kind == "sqlite" else f"{fields['host']}/{fields['database']}"
    return f"the {connection.kind} database of connection {connection.name!r} ({place})"


def _first_line(error: SQLAlchemyError) -> str:
    original = getattr(error, "orig", None) or error
    return (str(original).strip().splitlines() or [type(original).__name__])[0]
