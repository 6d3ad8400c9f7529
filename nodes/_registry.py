"""Discovers node folders (`definition.py` + `executor.py`) and pairs them, naming the folder in every error.

Built-in nodes live under `nodes/`; extra roots come from NODEFLOW_PLUGIN_PATHS (os.pathsep-separated).
A broken built-in node raises; a broken plugin is recorded in `problems` and left out.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import re
import os
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from nodeflow_app.contract import NodeDefinition

BUILTIN_ROOT = Path(__file__).resolve().parent


class RegistryError(Exception):
    """A node folder that cannot be loaded; the message names the folder."""


@dataclass(frozen=True, slots=True)
class RegisteredNode:
    definition: NodeDefinition
    executor: Any
    folder: Path

    @property
    def can_execute(self) -> bool:
        return callable(getattr(self.executor, "execute", None))

    @property
    def can_materialize(self) -> bool:
        return callable(getattr(self.executor, "materialize", None))


@dataclass
class Registry:
    """Node types by id. Build one with `Registry.load()` (or over other roots in tests)."""

    nodes: dict[str, RegisteredNode] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @classmethod
    def load(cls, roots: list[Path] | None = None, plugin_roots: list[Path] | None = None) -> "Registry":
        """Load built-in roots strictly (raise on a broken folder) and plugin roots leniently."""
        registry = cls()
        for root in roots if roots is not None else [BUILTIN_ROOT]:
            if not root.is_dir():
                raise RegistryError(f"{root}: node root is not a directory")
            for folder in _node_folders(root):
                registry.add(load_folder(folder))
        for root in plugin_roots if plugin_roots is not None else plugin_paths_from_env():
            if not root.is_dir():
                registry.problems.append(f"plugin path {root} is not a directory")
                continue
            for folder in _node_folders(root):
                try:
                    registry.add(load_folder(folder))
                except RegistryError as error:
                    registry.problems.append(str(error))
        return registry

    def add(self, node: RegisteredNode) -> None:
        existing = self.nodes.get(node.definition.id)
        if existing is not None:
            raise RegistryError(
                f"{node.folder}: node id '{node.definition.id}' is already defined by {existing.folder}")
        self.nodes[node.definition.id] = node

    def get(self, node_type: str) -> RegisteredNode | None:
        return self.nodes.get(node_type)

    def definition(self, node_type: str) -> NodeDefinition | None:
        node = self.nodes.get(node_type)
        return node.definition if node else None

    def definitions(self) -> list[NodeDefinition]:
        """All definitions, sorted by category then name (palette order)."""
        return sorted((n.definition for n in self.nodes.values()), key=lambda d: (d.category, d.name))

    def by_category(self) -> dict[str, list[NodeDefinition]]:
        grouped: dict[str, list[NodeDefinition]] = {}
        for definition in self.definitions():
            grouped.setdefault(definition.category, []).append(definition)
        return grouped


def plugin_paths_from_env() -> list[Path]:
    raw = os.environ.get("NODEFLOW_PLUGIN_PATHS", "")
    return [Path(p).expanduser() for p in raw.split(os.pathsep) if p.strip()]


def _node_folders(root: Path) -> list[Path]:
    """Every folder under root holding a definition.py or an executor.py (so a missing half is reported)."""
    found = {p.parent for name in ("definition.py", "executor.py") for p in root.rglob(name)}
    return sorted(f for f in found if not any(part.startswith((".", "_")) for part in f.relative_to(root).parts))


def load_folder(folder: Path) -> RegisteredNode:
    """Import a node folder's two modules and check they belong together."""
    for required in ("definition.py", "executor.py"):
        if not (folder / required).is_file():
            raise RegistryError(f"{folder}: missing {required} (a node folder needs definition.py and executor.py)")
    package = _package_name(folder)
    definition = getattr(_import(folder, package, "definition"), "definition", None)
    if not isinstance(definition, NodeDefinition):
        raise RegistryError(f"{folder}: definition.py must define `definition = NodeDefinition(...)`")
    executor = getattr(_import(folder, package, "executor"), "executor", None)
    if executor is None:
        raise RegistryError(f"{folder}: executor.py must define a module-level `executor`")
    if getattr(executor, "node_type", None) != definition.id:
        raise RegistryError(
            f"{folder}: executor.node_type {getattr(executor, 'node_type', None)!r} "
            f"does not match definition id {definition.id!r}")
    node = RegisteredNode(definition, executor, folder)
    if not (node.can_execute or node.can_materialize):
        raise RegistryError(f"{folder}: executor needs an `execute` or a `materialize` method")
    return node


def _package_name(folder: Path) -> str:
    """Built-in folders import under their dotted name (`nodes.flow.merge`); a plugin folder under a private one."""
    folder = folder.resolve()
    if folder.is_relative_to(BUILTIN_ROOT):
        return ".".join(("nodes",) + folder.relative_to(BUILTIN_ROOT).parts)
    name = "nodeflow_plugin_" + re.sub(r"\W", "_", str(folder).strip("/"))
    if name not in sys.modules:  # make the folder a package, so its helpers import relatively
        spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
        spec.submodule_search_locations = [str(folder)]
        sys.modules[name] = importlib.util.module_from_spec(spec)
    return name


def _import(folder: Path, package: str, module: str) -> ModuleType:
    try:
        return importlib.import_module(f"{package}.{module}")
    except Exception as error:  # noqa: BLE001 - any import failure is reported with its folder
        raise RegistryError(f"{folder}: {module}.py failed to import: {type(error).__name__}: {error}") from error


_default: Registry | None = None
_loading = threading.Lock()  # page handlers and runs call this from threads too


def default_registry() -> Registry:
    """The process-wide registry of built-in nodes plus NODEFLOW_PLUGIN_PATHS, loaded once."""
    global _default
    if _default is None:
        with _loading:
            if _default is None:
                _default = Registry.load()
    return _default
