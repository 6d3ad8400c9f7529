"""`nodeflow` on the command line: list the node types, validate a graph file.

Each subcommand is two small functions (its arguments, its run) registered in COMMANDS; adding
one (`run`, `resume`, `migrate`) is adding an entry. Exit codes: 0 ok, 1 NodeFlow itself is broken
(a built-in node failed to load), 2 the input is wrong (bad file, invalid graph, bad arguments).
Nothing reaches the user as a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Callable, NamedTuple

from nodeflow_app.runtime.graph import GraphIssue, normalize
from nodes._registry import Registry, RegistryError, default_registry

EXIT_OK, EXIT_BROKEN, EXIT_INVALID = 0, 1, 2


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
    raw = read_json(args.graph)
    graph, issues = normalize(raw, _registry(), trigger=args.trigger)
    if issues or graph is None:
        names = _node_names(raw)
        for issue in issues:
            print(describe_issue(issue, names))
        print(f"invalid: {len(issues)} issue{'s' if len(issues) != 1 else ''} in {args.graph}", file=sys.stderr)
        return EXIT_INVALID
    print(f"valid: {len(graph.nodes)} nodes, {len(graph.edges)} edges")
    return EXIT_OK


# ------------------------------------------------------------------------------------------------

COMMANDS: dict[str, Command] = {
    "nodes": Command("list the node types (id, name, category, version)", _nodes_arguments, _nodes),
    "validate": Command("check a graph file against every rule", _validate_arguments, _validate),
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
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit:  # argparse already printed usage or help
        return exit.code if isinstance(exit.code, int) else EXIT_INVALID
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_INVALID
    try:
        return args.run(args)
    except InputError as error:
        print(f"nodeflow {args.command}: {error}", file=sys.stderr)
        return EXIT_INVALID
    except RegistryError as error:
        print(f"nodeflow {args.command}: a built-in node failed to load: {error}", file=sys.stderr)
        return EXIT_BROKEN


def read_json(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise InputError(f"cannot read {path}: {error.strerror or error}") from error
    except UnicodeDecodeError as error:
        raise InputError(f"{path} is not UTF-8 text") from error
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        where = f"line {error.lineno}, column {error.colno}"
        raise InputError(f"{path} is not valid JSON: {error.msg} ({where})") from error


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
    return {str(n["id"]): str(n["name"]) for n in nodes if isinstance(n, dict) and "id" in n and "name" in n}


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
