"""The stdio MCP servers this install declares: the only programs a graph can have started (SPEC 12).

A graph never names a command: the MCP Server node picks a declared server by name. Whoever runs NodeFlow
declares them in a JSON or TOML file: NODEFLOW_MCP_SERVERS (the file's path), else `<data dir>/mcp_servers.json`
or `<data dir>/mcp_servers.toml` when one exists. The file maps names to `{command, args, env, description}`,
at the top level or under `servers` (or `mcpServers`, the shape other MCP clients use):

    {"servers": {"files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/srv"],
                           "env": {"LOG_LEVEL": "warn"}, "description": "Read files under /srv"}}}

The file is read on each lookup (no restart to add a server); a mistake is an McpConfigError naming the file
and the server.
"""

from __future__ import annotations

import json
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nodeflow_app.contract import NodeError
from nodeflow_app.settings import data_dir

SERVERS_ENV = "NODEFLOW_MCP_SERVERS"
DEFAULT_FILES = ("mcp_servers.json", "mcp_servers.toml")


class McpConfigError(NodeError):
    """The declarations file cannot be used; the message names the file and what is wrong."""


@dataclass(frozen=True)
class DeclaredServer:
    name: str
    command: str
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    description: str = ""


def config_file() -> Path | None:
    """The declarations file in effect, or None when the install declares no server."""
    raw = os.environ.get(SERVERS_ENV, "").strip()
    if raw:
        return Path(raw).expanduser()
    for name in DEFAULT_FILES:
        candidate = data_dir() / name
        if candidate.is_file():
            return candidate
    return None


def declared_servers() -> dict[str, DeclaredServer]:
    """Every declared server by name (empty when there is no file)."""
    path = config_file()
    if path is None:
        return {}
    table = _servers_table(_read(path), path)
    return {name: _server(name, spec, path) for name, spec in table.items()}


def declared_server(name: str) -> DeclaredServer:
    """The declared server `name`; an McpConfigError saying which exist and how to declare one otherwise."""
    servers = declared_servers()
    if name in servers:
        return servers[name]
    known = ", ".join(sorted(servers)) or "none"
    raise McpConfigError(f"{name!r} is not a stdio MCP server this install declares (declared: {known}). "
                         f"{how_to_declare()}")


def how_to_declare() -> str:
    return (f"A graph cannot start programs: whoever runs NodeFlow declares stdio servers by name in the file "
            f"{SERVERS_ENV} points to (or {data_dir() / DEFAULT_FILES[0]}); see docs/security.md.")


def _read(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise McpConfigError(f"cannot read the MCP server declarations {path}: {error.strerror or error}") from None
    try:
        return tomllib.loads(text) if path.suffix.lower() == ".toml" else json.loads(text)
    except (ValueError, tomllib.TOMLDecodeError) as error:
        raise McpConfigError(f"the MCP server declarations {path} are not valid "
                             f"{'TOML' if path.suffix.lower() == '.toml' else 'JSON'}: {error}") from None


def _servers_table(document: Any, path: Path) -> dict[str, Any]:
    if not isinstance(document, dict):
        raise McpConfigError(f"the MCP server declarations {path} must be an object of named servers")
    for key in ("servers", "mcpServers"):
        if isinstance(document.get(key), dict):
            return document[key]
    return document


def _server(name: str, spec: Any, path: Path) -> DeclaredServer:
    where = f"server {name!r} in {path}"
    if not isinstance(spec, dict):
        raise McpConfigError(f"{where} must be an object with a command")
    unknown = set(spec) - {"command", "args", "env", "description"}
    if unknown:
        raise McpConfigError(f"{where} has unknown fields {', '.join(sorted(unknown))} "
                             "(use command, args, env, description)")
    command, args, env = spec.get("command"), spec.get("args", []), spec.get("env", {})
    if not isinstance(command, str) or not command.strip():
        raise McpConfigError(f"{where} needs a command (the program to start)")
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise McpConfigError(f"{where}: args must be a list of strings")
    if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        raise McpConfigError(f"{where}: env must map names to string values")
    return DeclaredServer(name, command.strip(), tuple(args), dict(env), str(spec.get("description", "")))
