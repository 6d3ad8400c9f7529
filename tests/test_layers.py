"""Layers point one way (SPEC 14): every module's imports, walked with ast, go to its own layer or below.

Lowest first: the node contract; the kernel; helpers nodes use (LLM, pure helpers, settings); node folders
and the registry; services (store, chat, runs, CLI, launcher); the UI. Every import counts, also one
inside a function or under TYPE_CHECKING. There is no exemption list: a module that needs something
above it is in the wrong place.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

LAYERS = ("contract", "kernel", "helpers", "nodes", "services", "ui")
# Module prefixes, longest match wins.
PLACES = {
    "nodeflow_app.contract": "contract",
    "nodeflow_app.runtime": "kernel",
    "nodeflow_app.llm": "helpers",
    "nodeflow_app.knowledge": "helpers",
    "nodeflow_app.net": "helpers",  # the SSRF guard (network safety)
    "nodeflow_app.secret_values": "helpers",  # sealing and revealing secret parameters
    "nodeflow_app.settings": "helpers",
    "nodeflow_app.heap": "helpers",  # start-up objects frozen out of the garbage collector
    "nodeflow_app.stopping": "helpers",  # work run at a stop signal before the server stops (Granian's stop can panic)
    "nodeflow_app.connections": "helpers",  # named connections as nodes see them (the store registers its lookup)
    "nodeflow_app.files": "helpers",  # files stored once by content, passed by reference
    "nodeflow_app.sql": "helpers",  # SQL against a connection's database (the Database Query node)
    "nodeflow_app.value_helpers": "helpers",  # MISSING and to_number, shared by node folders and LLM helpers
    "nodes._helpers": "helpers",
    "nodes": "nodes",
    "nodes._registry": "nodes",
    "nodeflow_app.store": "services",
    "nodeflow_app.accounts": "services",  # roles and the actions they allow
    "nodeflow_app.chat": "services",
    "nodeflow_app.runs": "services",
    "nodeflow_app.triggers": "services",  # webhooks, schedules, activation
    "nodeflow_app.cli": "services",
    "nodeflow_app.remote": "services",  # `nodeflow remote`: the CLI over a server's HTTP API
    "nodeflow_app.routes": "services",
    "nodeflow_app.validation": "services",
    "nodeflow_app.provider_settings": "services",  # what the Settings page shows and does
    "nodeflow_app.templates": "services",
    "nodeflow_app.legacy": "services",  # importing graphs of the older runtime (JSON to JSON)
    "nodeflow_app.serve": "ui",  # builds and serves the Reflex app (`make run`)
    "nodeflow_app.editor": "ui",
    "nodeflow_app.api": "ui",  # the HTTP API (FastAPI beside Reflex's backend)
    "nodeflow_app.state": "ui",
    "nodeflow_app.components": "ui",
    "nodeflow_app.nodeflow_app": "ui",
}
PACKAGE_ROOTS = {"nodeflow_app": "services", "nodes": "nodes"}  # the packages' own __init__ modules
# Third-party packages a layer may never import.
FORBIDDEN_PACKAGES = {"contract": {"reflex", "agno", "sqlalchemy", "sqlmodel"},
                      "kernel": {"reflex", "agno", "sqlalchemy", "sqlmodel", "openai"},
                      "helpers": {"reflex"}, "nodes": {"reflex", "sqlalchemy", "sqlmodel"},
                      "services": {"reflex"}}


def layer_of(module: str) -> str | None:
    """The layer of a NodeFlow module (None for a module outside NodeFlow)."""
    if not (module == "nodes" or module.startswith(("nodes.", "nodeflow_app"))):
        return None
    if module in PACKAGE_ROOTS:
        return PACKAGE_ROOTS[module]
    best = max((p for p in PLACES if module == p or module.startswith(p + ".")), key=len, default=None)
    if best is None:
        raise AssertionError(f"module {module} has no layer: add its package to PLACES in tests/test_layers.py")
    return PLACES[best]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path: Path, module: str) -> list[tuple[int, str]]:
    """(line, imported module) for every import in the file, relative ones resolved."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            # `from package import module` imports that module: judge it by the module's own layer.
            found += [(node.lineno, f"{target}.{a.name}" if _is_module(f"{target}.{a.name}") else target)
                      for a in node.names]
    return found


def _is_module(name: str) -> bool:
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def sources() -> list[Path]:
    return sorted([*(ROOT / "nodeflow_app").rglob("*.py"), *(ROOT / "nodes").rglob("*.py")])


def upward_imports(files: list[Path]) -> list[str]:
    problems = []
    for path in files:
        module = module_name(path)
        mine = layer_of(module)
        for line, target in imports(path, module):
            theirs = layer_of(target)
            where = f"{path.relative_to(ROOT)}:{line}"
            if theirs is not None and LAYERS.index(theirs) > LAYERS.index(mine):
                problems.append(f"{where}: {mine} module {module} imports {target} ({theirs})")
            elif theirs is None and target.split(".")[0] in FORBIDDEN_PACKAGES.get(mine, ()):
                problems.append(f"{where}: {mine} module {module} imports {target}")
    return problems


def test_no_module_imports_a_layer_above_it():
    files = sources()
    assert len(files) > 80  # the walk really found the code
    assert upward_imports(files) == []


def test_the_walk_catches_an_upward_import(tmp_path, monkeypatch):
    """The checker itself: a kernel module importing the store, a function-level import, a relative import."""
    monkeypatch.setattr(sys_module(), "ROOT", tmp_path)
    kernel = tmp_path / "nodeflow_app" / "runtime"
    kernel.mkdir(parents=True)
    (kernel / "bad.py").write_text("def f():\n    from nodeflow_app.store.runs import RunStore\n")
    (kernel / "ok.py").write_text("from nodeflow_app.contract import NodeEvent\nfrom .bad import f\n")
    folder = tmp_path / "nodes" / "ai" / "agent"
    folder.mkdir(parents=True)
    (folder / "executor.py").write_text("from ...._registry import default_registry\nimport reflex\n"
                                        "from nodeflow_app import settings\nfrom nodeflow_app.runs import launcher\n")
    problems = upward_imports(sorted(tmp_path.rglob("*.py")))
    assert any("runtime/bad.py:2" in p and "nodeflow_app.store.runs" in p for p in problems)
    assert any("nodes.ai.agent.executor imports nodeflow_app.runs" in p for p in problems)
    assert any("imports reflex" in p for p in problems)
    assert not any("ok.py" in p for p in problems)


def test_every_module_has_a_layer():
    for path in sources():
        assert layer_of(module_name(path)) in LAYERS


@pytest.mark.parametrize("module", ["nodeflow_app.store.runs", "nodeflow_app.chat.service", "nodeflow_app.runs.launcher"])
def test_services_are_above_the_kernel(module):
    assert LAYERS.index(layer_of(module)) > LAYERS.index(layer_of("nodeflow_app.runtime.run"))


def sys_module():
    import sys

    return sys.modules[__name__]


def test_only_the_launcher_and_the_engine_build_runs():
    """Every entry point starts and restores runs through the RunLauncher (SPEC 14)."""
    builders = {"start_plan", "start_run", "run_to", "restore_run", "Run", "restore"}
    found = set()
    for path in (ROOT / "nodeflow_app").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
                owner = getattr(getattr(node.func, "value", None), "id", None)
                if name in builders and (name != "restore" or owner == "Run") and not (
                        name == "run_to" and owner in ("service", "self")):  # RunService.run_to: a test run
                    found.add(path.relative_to(ROOT).as_posix())
    assert found == {"nodeflow_app/runtime/engine.py", "nodeflow_app/runtime/run.py", "nodeflow_app/runs/launcher.py"}


def test_no_trigger_type_is_named_outside_its_folder():
    """A trigger owns its payload and entry points: nothing else tests for its type id."""
    from nodes._registry import default_registry

    triggers = {d.id: d for d in default_registry().definitions() if d.trigger}
    assert {"chat-start", "manual-trigger"} <= set(triggers)
    for path in sources():
        text = path.read_text(encoding="utf-8")
        for type_id in triggers:
            if f'"{type_id}"' in text or f"'{type_id}'" in text:
                assert path.parent.name == type_id.replace("-", "_"), f"{path.relative_to(ROOT)} names {type_id}"
