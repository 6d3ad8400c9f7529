"""`nodeflow` on the command line: list the node types, validate, run and resume graphs.

Each subcommand is two small functions (its arguments, its run) registered in COMMANDS; adding
one (`run`, `resume`, `migrate`) is adding an entry. Exit codes: 0 ok, 1 NodeFlow itself is broken
(a built-in node failed to load), 2 the input is wrong (bad file, invalid graph, bad arguments).
Nothing reaches the user as a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import json
import os
import re
import stat
import sys
from pathlib import Path
from typing import Any, Callable, NamedTuple

from nodeflow_app.runtime.graph import GraphIssue
from nodeflow_app.runtime.values import MAX_DEPTH, text_problem, value_problem
from nodes._registry import Registry, RegistryError, default_registry

EXIT_OK, EXIT_BROKEN, EXIT_INVALID = 0, 1, 2
_SURROGATE = re.compile("[\ud800-\udfff]")


class Command(NamedTuple):
    help: str
    arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


class InputError(Exception):
    """Input the user can fix (unreadable file, invalid JSON); the message says what and where."""


# nodes ------------------------------------------------------------------------------------------

def _nodes_arguments(parser: argparse.ArgumentParser) -> None:
    pass


def _nodes(args: argparse.Namespace) -> int:
    registry = _registry()
    rows = [(d.id, d.name, d.category, str(d.version)) for d in registry.definitions()]
    print(_table(("ID", "NAME", "CATEGORY", "VERSION"), rows))
    return EXIT_OK


# validate ---------------------------------------------------------------------------------------

def _validate_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("graph", metavar="GRAPH.json", type=Path, help="the graph file to check")
    parser.add_argument("--trigger", metavar="NODE", help="also check a run starting at this node (id or name)")


def _validate(args: argparse.Namespace) -> int:
    """One line per issue (node, parameter, rule, why); exit 2 when any is an error, warnings alone pass."""
    from nodeflow_app.validation import errors, validate_graph

    raw = read_json(args.graph)
    graph, issues = validate_graph(raw, _registry(), trigger=args.trigger)
    for issue in issues:
        print(issue.line())
    bad = errors(issues)
    if bad or graph is None:
        print(f"invalid: {_count(len(bad), 'issue')} in {args.graph}", file=sys.stderr)
        _hint_migrate(raw, args.graph)
        return EXIT_INVALID
    warned = f" ({_count(len(issues), 'warning')})" if issues else ""
    print(f"valid: {len(graph.nodes)} nodes, {len(graph.edges)} edges{warned}")
    return EXIT_OK


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'s' if number != 1 else ''}"


# run / resume -----------------------------------------------------------------------------------

RUN_EXIT = {"completed": EXIT_OK, "failed": 1, "cancelled": 1, "paused": 3}


def _run_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("graph", metavar="GRAPH.json", type=Path, help="the graph file to run")
    parser.add_argument("--trigger", metavar="NODE", help="the trigger to start from (id or name); "
                        "needed when the graph has several")
    parser.add_argument("--input", metavar="TEXT_OR_JSON", help="the trigger's payload (JSON, else plain text)")
    _output_arguments(parser)


def _resume_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_id", metavar="RUN_ID", help="a paused run (printed by `nodeflow run`)")
    parser.add_argument("--node", required=True, help="the paused node (id or name)")
    parser.add_argument("--payload", default="null", help="the answer, as JSON (e.g. '{\"decision\": \"approve\"}')")
    _output_arguments(parser)


def _output_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="one JSON object per event")
    parser.add_argument("--no-store", action="store_true", help="do not persist the run (it cannot be resumed)")


def _run(args: argparse.Namespace) -> int:
    from nodeflow_app.runtime.graph import GraphInvalid

    raw, payload = read_json(args.graph), parse_payload(args.input, "--input")
    launcher = _launcher(args)
    try:
        run = launcher.start(raw, started_by="cli", trigger=args.trigger, payload=payload, persist=not args.no_store)
    except GraphInvalid as invalid:
        launcher.close()
        names = _node_names(raw)
        for issue in invalid.issues:
            print(describe_issue(issue, names), file=sys.stderr)
        _hint_migrate(raw, args.graph)
        return EXIT_INVALID
    return asyncio.run(_print_events(run, run.events(), args.json, launcher))


def _resume(args: argparse.Namespace) -> int:
    from nodeflow_app.contract import CONVERSATION
    from nodeflow_app.runs.launcher import RunBusy

    if args.no_store:
        raise InputError("resume needs the run store; drop --no-store")
    payload = parse_payload(args.payload, "--payload")  # before the run is taken: a bad one changes nothing
    launcher = _launcher(args)
    try:
        stored = launcher.store.get_run(args.run_id)
        if stored is None:
            raise InputError(f"no run '{args.run_id}' in {launcher.engine.url}")
        node = next((n for n in stored["graph"]["nodes"] if args.node in (n["id"], n["name"])), None)
        if node is None:
            raise InputError(f"run {args.run_id} has no node '{args.node}'")
        if CONVERSATION in (stored.get("context") or {}):  # as RunService.answer: the chat's message would stay paused
            raise InputError(f"run {args.run_id} answers a chat message: answer its card in the chat")
        run = launcher.restore(args.run_id, node["id"], payload)
    except RunBusy as error:
        launcher.close()
        raise InputError(str(error)) from error
    except InputError:
        launcher.close()
        raise
    return asyncio.run(_print_events(run, run.resume(node["id"], payload), args.json, launcher))


async def _print_events(run: Any, events: Any, as_json: bool, launcher: Any) -> int:
    from nodeflow_app.runtime.run import RunError

    printer = _JsonPrinter() if as_json else _TextPrinter(run)
    try:
        async for event in events:
            printer.event(event)
    except RunError as error:
        raise InputError(str(error)) from error
    finally:
        launcher.close()
    printer.end(run)
    return RUN_EXIT.get(run.status, 1)


class _JsonPrinter:
    def event(self, event: Any) -> None:
        print(json.dumps(event.to_dict(), default=str), flush=True)

    def end(self, run: Any) -> None:
        print(json.dumps({"event_type": f"run_{run.status}", "run_id": run.run_id, "error": run.error,
                          "paused": run.paused_nodes(), "outputs": run.outputs_by_name()}, default=str))


class _TextPrinter:
    """Readable lines; streamed tokens are written inline as they arrive."""

    def __init__(self, run: Any):
        self.names = {node_id: pn.node.name for node_id, pn in run.plan.nodes.items()}
        self.inline = False

    def event(self, event: Any) -> None:
        if event.event_type in ("token", "reasoning"):
            if not self.inline:
                print(f"{self.names.get(event.node_id, event.node_id)} > ", end="")
                self.inline = True
            print(event.data.get("text", ""), end="", flush=True)
            return
        if self.inline:
            print()
            self.inline = False
        detail = _tool_call(event.data) if event.event_type in _TOOL_CALLS else _summary(event.data)
        print(f"{self.names.get(event.node_id, event.node_id)}: {event.event_type}{detail}", flush=True)

    def end(self, run: Any) -> None:
        if self.inline:
            print()
        print(f"run {run.run_id} {run.status}" + (f": {run.error}" if run.error else ""))
        for node_id in run.paused_nodes():
            print(f"  waiting: {self.names[node_id]} — resume with: nodeflow resume {run.run_id} --node {node_id} "
                  f"--payload JSON")
        print(json.dumps({"event_type": f"run_{run.status}", "outputs": run.outputs_by_name()}, default=str))


_TOOL_CALLS = ("tool_call_started", "tool_call_completed")


def _tool_call(data: dict[str, Any]) -> str:
    """` calculator {"expression": "6*7"}` when a call starts; ` calculator -> 42` (or `failed: ...`) when done."""
    if "result" not in data and "error" not in data:
        return _clip(f" {data.get('name')} {json.dumps(data.get('arguments') or {}, default=str, ensure_ascii=False)}")
    outcome = f"failed: {data['error']}" if data.get("error") is not None else f"-> {_text(data.get('result'))}"
    return _clip(f" {data.get('name')} {outcome}")


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)


def _clip(text: str) -> str:
    return text if len(text) <= 201 else text[:198] + "..."


def _summary(data: dict[str, Any]) -> str:
    shown = {k: v for k, v in data.items() if k not in ("name", "cached") and v not in (None, False, [], {})}
    if not shown:
        return ""
    text = json.dumps(shown, default=str, ensure_ascii=False)
    return " " + (text if len(text) <= 200 else text[:197] + "...")


def _launcher(args: argparse.Namespace) -> Any:
    """The run launcher on the app database (first, runs this or another CLI left behind when killed
    become `interrupted`), or, with --no-store, on a private in-memory one that keeps nothing."""
    from nodeflow_app.runs.launcher import RunLauncher

    launcher = RunLauncher("sqlite://" if args.no_store else None, registry=_registry())
    if not args.no_store:
        launcher.recover()
    _act_in(_owner_workspace())
    return launcher


def _owner_workspace() -> str | None:
    """The install owner's personal workspace: where the CLI stores and runs by default (None: no accounts yet,
    or no database: what is stored then joins the owner's workspace when the owner is created)."""
    from nodeflow_app.settings import db_url

    url = db_url()
    if url.startswith("sqlite:///") and not Path(url.removeprefix("sqlite:///")).exists():
        return None
    from nodeflow_app.store.accounts import AccountStore

    accounts = AccountStore(url)
    try:
        return accounts.owner_workspace_id()
    finally:
        accounts.engine.dispose()


def _act_in(workspace_id: str | None) -> None:
    """Runs and provider lookups of this process use the workspace's keys, connections and knowledge."""
    from nodeflow_app.llm.credentials import use_workspace
    from nodeflow_app.runs.caller import Caller, set_caller

    set_caller(Caller(workspace_id=workspace_id))
    use_workspace(workspace_id)


# migrate ----------------------------------------------------------------------------------------

def _migrate_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("graph", metavar="OLD.json", type=Path, help="a graph of the older runtime")
    parser.add_argument("-o", "--output", metavar="NEW.json", type=Path,
                        help="where to write the converted graph (default: the graph on stdout, the report on stderr)")
    parser.add_argument("--provider", default="openai",
                        help="provider for bare model names such as gpt-5 (default: openai)")


def _hint_migrate(raw: Any, path: Path) -> None:
    """Say so when a file that failed validation is a graph of the older runtime."""
    from nodeflow_app.legacy import is_legacy_graph

    if is_legacy_graph(raw):
        print(f"{path} is a graph of the older runtime: convert it first with `nodeflow migrate {path} -o NEW.json` "
              "(see docs/migration.md)", file=sys.stderr)


def _migrate(args: argparse.Namespace) -> int:
    """Print the report (stderr when the graph goes to stdout); write the graph only when nothing is in error."""
    from nodeflow_app.legacy import LegacyFormatError, is_legacy_graph, migrate_graph

    from nodeflow_app.llm.providers import PROVIDERS

    if args.provider not in PROVIDERS:
        raise InputError(f"unknown provider {args.provider!r}; use one of: {', '.join(PROVIDERS)}")
    raw = read_json(args.graph)
    if not is_legacy_graph(raw):
        raise InputError(f"{args.graph} is not a graph of the older runtime (no start/if/input node, "
                         "no 'connections'); check it with `nodeflow validate`")
    try:
        migration = migrate_graph(raw, _registry(), provider=args.provider,
                                   fallback_name=args.graph.stem)
    except LegacyFormatError as error:
        raise InputError(f"{args.graph}: {error}") from error
    except Exception as error:  # noqa: BLE001 - a bug of NodeFlow a file can reach: one line naming the file, exit 1
        print(f"nodeflow migrate: internal error converting {args.graph}: {type(error).__name__}: {error}",
              file=sys.stderr)
        return EXIT_BROKEN
    report_to = sys.stdout if args.output else sys.stderr
    print(migration.report.text(), file=report_to)
    if migration.graph is None:
        print(f"not converted: {len(migration.report.of('error'))} error(s) in {args.graph}", file=sys.stderr)
        return EXIT_INVALID
    text = json.dumps(migration.graph, indent=2, ensure_ascii=False)
    if args.output:
        args.output.write_text(text + "\n", encoding="utf-8")
        print(f"wrote {args.output}: {len(migration.graph['nodes'])} nodes, {len(migration.graph['edges'])} edges")
    else:
        print(text)
    return EXIT_OK


# providers / credentials -------------------------------------------------------------------------

def _providers_arguments(parser: argparse.ArgumentParser) -> None:
    pass


def _providers(args: argparse.Namespace) -> int:
    import nodeflow_app.store  # noqa: F401 - registers the credential store's lookup with the providers
    from nodeflow_app.llm.credentials import CredentialError
    from nodeflow_app.llm.providers import PROVIDERS, SETTINGS_PAGE, provider_status, url_step

    try:
        _act_in(_owner_workspace())
        status = provider_status()
    except CredentialError as error:
        raise InputError(str(error)) from error
    rows = []
    for row in status:
        spec = PROVIDERS[row["name"]]
        url = url_step(spec.name) if spec.url_env else None
        steps = [step.replace(f"on {SETTINGS_PAGE}", f"on {SETTINGS_PAGE} or with `nodeflow credentials set "
                              f"{spec.name}{' --base-url URL' if step == url else ''}`") for step in row["steps"]]
        rows.append((row["name"], row["label"], "configured" if row["configured"] else "not configured",
                     "; ".join(steps)))
    print(_table(("PROVIDER", "LABEL", "STATUS", "TO CONFIGURE"), rows))
    return EXIT_OK


def _credentials_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    put = actions.add_parser("set", help="store a provider's API key (read from stdin) and/or base URL, encrypted")
    put.add_argument("provider", metavar="PROVIDER")
    put.add_argument("--base-url", metavar="URL", help="the provider's API URL (e.g. http://localhost:8000/v1)")
    put.add_argument("--key", help="the API key, for scripts (default: read from stdin without echo)")
    actions.add_parser("list", help="which providers have stored credentials (never the secrets)")
    remove = actions.add_parser("delete", help="remove a provider's stored credential")
    remove.add_argument("provider", metavar="PROVIDER")
    for action in actions.choices.values():
        action.add_argument("--workspace", default=None,
                            help="the workspace's id (default: the install owner's personal workspace)")


def _credentials(args: argparse.Namespace) -> int:
    from sqlalchemy.exc import SQLAlchemyError

    from nodeflow_app.llm.credentials import CredentialError
    from nodeflow_app.store.credentials import default_store
    from nodeflow_app.llm.providers import PROVIDERS

    if getattr(args, "provider", None) is not None and args.provider not in PROVIDERS:
        raise InputError(f"unknown provider {args.provider!r}; use one of: {', '.join(PROVIDERS)}")
    try:
        workspace = args.workspace or _owner_workspace() or ""
        store = default_store(create=args.action == "set")
        if args.action == "set":
            key = args.key if args.key is not None else _read_secret(f"API key for {args.provider}: ")
            store.set(args.provider, key, base_url=args.base_url, workspace_id=workspace)
            fields = [name for name, value in (("API key", key.strip()), ("base URL", args.base_url)) if value]
            print(f"stored the {' and '.join(fields)} for {args.provider} (encrypted)")
        elif args.action == "list":
            rows = [(r["provider"], "set" if r["api_key"] else "-", "set" if r["base_url"] else "-")
                    for r in (store.list(workspace) if store else [])]
            print(_table(("PROVIDER", "API KEY", "BASE URL"), rows) if rows else "no stored credentials")
        elif store is None or not store.delete(args.provider, workspace):
            raise InputError(f"no stored credential for {args.provider}")
        else:
            print(f"deleted the credential for {args.provider}")
    except CredentialError as error:
        raise InputError(str(error)) from error
    except SQLAlchemyError as error:
        raise InputError(f"cannot use the credential store: {str(error).splitlines()[0]}") from error
    return EXIT_OK


def _read_secret(prompt: str) -> str:
    """One line from stdin: hidden when it is a terminal, as is when piped."""
    if sys.stdin.isatty():
        import getpass

        return getpass.getpass(prompt)
    return sys.stdin.readline().strip()


# users ------------------------------------------------------------------------------------------

def _users_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    create = actions.add_parser("create", help="create an account (the first one is the instance admin); "
                                               "the password is read from stdin")
    create.add_argument("email", metavar="EMAIL")
    create.add_argument("--name", default="", help="the name shown to others (default: the email's user part)")
    create.add_argument("--admin", action="store_true", help="make the account an instance admin")
    actions.add_parser("list", help="every account (email, name, admin)")
    reset = actions.add_parser("reset-password", help="set a new password (read from stdin); signs out everywhere")
    reset.add_argument("email", metavar="EMAIL")


def _users(args: argparse.Namespace) -> int:
    from sqlalchemy.exc import SQLAlchemyError

    from nodeflow_app.store.accounts import AccountError, account_store

    try:
        store = account_store()
        if args.action == "create":
            user = store.create_user(args.name, args.email, _read_secret(f"Password for {args.email}: "),
                                     admin=True if args.admin else None)
            print(f"created {user.email}" + (" (instance admin)" if user.is_admin else ""))
        elif args.action == "list":
            rows = [(u.email, u.name, "yes" if u.is_admin else "") for u in store.users()]
            print(_table(("EMAIL", "NAME", "ADMIN"), rows) if rows else "no accounts yet")
        else:
            user = store.user_by_email(args.email)
            if user is None:
                raise InputError(f"no account with {args.email}")
            store.set_password(user.id, _read_secret(f"New password for {user.email}: "))
            print(f"set a new password for {user.email}; their sessions ended")
    except AccountError as error:
        raise InputError(str(error)) from error
    except SQLAlchemyError as error:
        raise InputError(f"cannot use the database: {str(error).splitlines()[0]}") from error
    return EXIT_OK


# connections -------------------------------------------------------------------------------------

def _connections_arguments(parser: argparse.ArgumentParser) -> None:
    from nodeflow_app.connections import DEFAULT_WORKSPACE, KINDS

    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    put = actions.add_parser("set", help="store (or replace) a named connection, encrypted",
                             description="Fields: " + "; ".join(f"{kind}: {' '.join(need + tuple(f'[{o}]' for o in opt))}"
                                                                for kind, (need, opt) in KINDS.items()))
    put.add_argument("name", metavar="NAME")
    put.add_argument("kind", metavar="KIND", choices=list(KINDS), help=", ".join(KINDS))
    put.add_argument("fields", nargs="*", metavar="FIELD=VALUE",
                     help="a field and its value; FIELD=- reads the value from stdin (hidden on a terminal)")
    listing = actions.add_parser("list", help="the workspace's connections: name and kind, never a secret")
    remove = actions.add_parser("delete", help="remove a connection")
    remove.add_argument("name", metavar="NAME")
    for action in (put, listing, remove):
        action.add_argument("--workspace", default=None, help="the workspace's id (default: the install owner's "
                            f"personal workspace; {DEFAULT_WORKSPACE!r} before any account exists)")


def _connections(args: argparse.Namespace) -> int:
    from sqlalchemy.exc import SQLAlchemyError

    from nodeflow_app.connections import DEFAULT_WORKSPACE
    from nodeflow_app.llm.credentials import CredentialError
    from nodeflow_app.store.connections import default_store

    try:
        args.workspace = args.workspace or _owner_workspace() or DEFAULT_WORKSPACE
        store = default_store(create=args.action == "set")
        if args.action == "set":
            store.set(args.name, args.kind, _connection_fields(args.fields), workspace_id=args.workspace)
            print(f"stored the {args.kind} connection {args.name!r} (encrypted)")
        elif args.action == "list":
            rows = [(r["name"], r["kind"] + _stale_note(store, r, args.workspace))
                    for r in (store.list(args.workspace) if store else [])]
            print(_table(("NAME", "KIND"), rows) if rows else f"no connections in workspace {args.workspace!r}")
        elif store is None or not store.delete(args.name, args.workspace):
            raise InputError(f"no connection {args.name!r} in workspace {args.workspace!r}")
        else:
            print(f"deleted the connection {args.name!r}")
    except CredentialError as error:
        raise InputError(str(error)) from error
    except SQLAlchemyError as error:
        raise InputError(f"cannot use the connection store: {str(error).splitlines()[0]}") from error
    return EXIT_OK


def _stale_note(store: Any, row: dict[str, Any], workspace: str) -> str:
    """" (not opened: store it again)" for a SQLite connection of the older format (any owner could store one)."""
    from nodeflow_app.store.connections import StaleConnection

    if row["kind"] != "sqlite":
        return ""
    try:
        store.get(row["name"], workspace)
    except StaleConnection:
        return " (not opened: stored before only the instance admin could; store it again)"
    return ""


def _connection_fields(pairs: list[str]) -> dict[str, str]:
    fields: dict[str, str] = {}
    for pair in pairs:
        name, equals, value = pair.partition("=")
        if not equals or not name:
            raise InputError(f"expected FIELD=VALUE, got {pair!r}")
        fields[name] = _read_secret(f"{name}: ") if value == "-" else value
    return fields


# remote -----------------------------------------------------------------------------------------

def _remote_arguments(parser: argparse.ArgumentParser) -> None:
    from nodeflow_app import remote

    remote.arguments(parser)


def _remote(args: argparse.Namespace) -> int:
    from nodeflow_app import remote

    try:
        return remote.main(args, parse_payload(getattr(args, "input", None), "--input"))
    except remote.RemoteError as error:
        raise InputError(str(error)) from error


# housekeep --------------------------------------------------------------------------------------

def _housekeep_arguments(parser: argparse.ArgumentParser) -> None:
    pass


def _housekeep(args: argparse.Namespace) -> int:
    """What the server does hourly, now: a workspace at its files quota need not wait for the hour. It says which
    database and data folder it uses: files are swept only for the workspaces that database knows."""
    from sqlalchemy import inspect, make_url
    from sqlalchemy.exc import SQLAlchemyError

    from nodeflow_app.runs.housekeeping import housekeep
    from nodeflow_app.settings import data_dir, db_url
    from nodeflow_app.store.db import make_engine
    from nodeflow_app.store.retention import RetentionError

    url = db_url()
    shown = make_url(url).render_as_string(hide_password=True)
    if url.startswith("sqlite:///") and not Path(url.removeprefix("sqlite:///")).exists():
        raise InputError(f"no NodeFlow database at {shown} (set REFLEX_DB_URL to the server's)")
    print(f"database {shown}, data folder {data_dir()}")
    engine = make_engine(url)
    try:
        if not inspect(engine).has_table("run"):
            raise InputError(f"no NodeFlow database at {shown} (set REFLEX_DB_URL to the server's)")
        report = housekeep(engine)
    except RetentionError as error:
        raise InputError(str(error)) from error
    except SQLAlchemyError as error:
        raise InputError(f"cannot use the database: {str(error).splitlines()[0]}") from error
    finally:
        engine.dispose()
    print(f"{_count(report.runs, 'run')} pruned, {_count(report.files, 'stored file')} no record refers to "
          f"deleted ({report.file_bytes:,} bytes), {_count(report.sign_ins, 'expired sign-in record')} "
          f"forgotten")
    return EXIT_OK


# ------------------------------------------------------------------------------------------------

COMMANDS: dict[str, Command] = {
    "nodes": Command("list the node types (id, name, category, version)", _nodes_arguments, _nodes),
    "validate": Command("check a graph file against every rule", _validate_arguments, _validate),
    "run": Command("run a graph file, printing events as they happen (exit 0 completed, 1 failed, "
                   "2 invalid graph, 3 paused)", _run_arguments, _run),
    "resume": Command("continue a paused run with an answer", _resume_arguments, _resume),
    "migrate": Command("convert a graph of the older runtime (start/agent/if/approval) and print what "
                       "became what", _migrate_arguments, _migrate),
    "providers": Command("list the model providers, whether each is configured, and how to configure the rest",
                         _providers_arguments, _providers),
    "credentials": Command("store, list or delete provider credentials (encrypted at rest)",
                           _credentials_arguments, _credentials),
    "users": Command("create or list accounts, or reset a password", _users_arguments, _users),
    "connections": Command("store, list or delete named HTTP and database connections (encrypted at rest)",
                           _connections_arguments, _connections),
    "remote": Command("list graphs, run a graph or read a run on a running server, with an API token",
                      _remote_arguments, _remote),
    "housekeep": Command("prune old runs and delete stored files no record refers to, now (the server does it "
                         "hourly; NODEFLOW_RUNS_MAX_AGE_DAYS, NODEFLOW_RUNS_MAX_PER_GRAPH)",
                         _housekeep_arguments, _housekeep),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="nodeflow", description="NodeFlow on the command line.")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, command in COMMANDS.items():
        sub = subparsers.add_parser(name, help=command.help, description=command.help)
        command.arguments(sub)
        sub.set_defaults(run=command.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    # Node outputs may hold lone surrogates (run values allow them): show them escaped, never crash on them.
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit:  # argparse already printed usage or help
        return exit.code if isinstance(exit.code, int) else EXIT_INVALID
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_INVALID
    try:  # in a context of its own: the workspace a command acts in (`_act_in`) ends with it
        return contextvars.copy_context().run(args.run, args)
    except InputError as error:
        print(f"nodeflow {args.command}: {error}", file=sys.stderr)
        return EXIT_INVALID
    except RegistryError as error:
        print(f"nodeflow {args.command}: a built-in node failed to load: {error}", file=sys.stderr)
        return EXIT_BROKEN
    except Exception as error:  # noqa: BLE001 - a bug of NodeFlow: one line, as promised, and exit 1
        print(f"nodeflow {args.command}: internal error: {type(error).__name__}: {error}", file=sys.stderr)
        return EXIT_BROKEN


# Reading input --------------------------------------------------------------------------------------

MAX_FILE_BYTES = 64 * 1024 * 1024  # a graph file; a 100,000-node graph is about 30 MB


def read_json(path: Path) -> Any:
    """A graph file's JSON. Values JSON allows but NodeFlow refuses (NaN, deep nesting) are left to the
    normalizer, which names the node they are in."""
    return parse_json(read_text(path), str(path))


def read_text(path: Path, limit: int = MAX_FILE_BYTES) -> str:
    """A regular file's UTF-8 text; devices (/dev/zero), pipes, folders and files over `limit` are refused."""
    try:  # O_NONBLOCK: opening a pipe with no writer must not hang before we can tell it is one
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as error:
        raise InputError(f"cannot read {path}: {error.strerror or error}") from error
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise InputError(f"{path} is not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as file:
            data = file.read(limit + 1)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise InputError(f"{path} is larger than the limit of {limit // (1024 * 1024)} MB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(f"{path} is not UTF-8 text (byte {error.start})") from error


def parse_json(text: str, where: str) -> Any:
    """JSON text as a value; InputError saying what and where for anything Python's json refuses."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"{where} is not valid JSON: {error.msg} (line {error.lineno}, column {error.colno})") \
            from error
    except RecursionError as error:
        raise InputError(f"{where}: the JSON is nested deeper than {MAX_DEPTH} levels (the limit)") from error
    except ValueError as error:  # a whole number of more than 4,300 digits
        raise InputError(f"{where}: a whole number of over 4,300 digits is too large") from error


def parse_payload(text: str | None, option: str) -> Any:
    """A payload argument: JSON when it reads as JSON, else the text itself; never NaN, deep or stray bytes."""
    if text is None:
        return None
    stray = _SURROGATE.search(text)
    if stray:  # Python keeps bytes that are not UTF-8 in argv as lone surrogates
        byte = ord(stray.group()) - 0xDC00
        shown = f"byte 0x{byte:02x}" if 0x80 <= byte <= 0xFF else f"\\u{ord(stray.group()):04x}"
        raise InputError(f"{option} is not valid UTF-8 text ({shown} at character {stray.start()})")
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return text
    except (RecursionError, ValueError):
        value = parse_json(text, option)  # raises, saying why
    problem = value_problem(value, strict_text=True)
    if problem:
        raise InputError(f"{option}: {problem}")
    return value


def describe_issue(issue: GraphIssue, names: dict[str, str]) -> str:
    """`edge e1, node n2 'Name': rule: message` - where it is, which rule, and why."""
    where = []
    if issue.edge_id:
        where.append(f"edge {issue.edge_id}")
    if issue.node_id:
        name = names.get(issue.node_id)
        where.append(f"node {issue.node_id}" + (f" '{name}'" if name else ""))
    return f"{', '.join(where) or 'graph'}: {issue.rule}: {issue.message}"


def _node_names(raw: Any) -> dict[str, str]:
    """Node id -> name from the raw JSON (the parsed graph is None when its shape is wrong)."""
    nodes = raw.get("nodes") if isinstance(raw, dict) else None
    if not isinstance(nodes, list):
        return {}
    return {str(n["id"]): str(n["name"]) for n in nodes if isinstance(n, dict) and "id" in n
            and isinstance(n.get("name"), str) and not text_problem(n["name"])}


def _registry() -> Registry:
    registry = default_registry()
    for problem in registry.problems:
        print(f"plugin problem: {problem}", file=sys.stderr)
    return registry


def _table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in [header, *rows])


if __name__ == "__main__":
    raise SystemExit(main())
