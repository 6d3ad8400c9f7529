"""The node registry: built-ins load cleanly; plugins load leniently (a broken one is reported, naming its
folder, and the rest still loads); the same broken folder under a strict root raises."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nodes._registry import BUILTIN_ROOT, Registry, RegistryError
from nodeflow_app.contract import ExecutionResult

DEFINITION = '''
from nodeflow_app.contract import NodeDefinition, Socket

definition = NodeDefinition(
    id="{id}", name="{name}", description="A plugin node.", category="plugin",
    inputs=(Socket(id="input"),), outputs=(Socket(id="output"),),
)
'''

EXECUTOR = '''
from nodeflow_app.contract import ExecutionResult


class Executor:
    node_type = "{id}"

    async def execute(self, data, inputs, ctx):
        return ExecutionResult(outputs={{"output": inputs.get("input")}})


executor = Executor()
'''


def write_node(folder: Path, node_id: str, *, definition: str | None = DEFINITION,
               executor: str | None = EXECUTOR, **files: str) -> Path:
    folder.mkdir(parents=True)
    if definition is not None:
        (folder / "definition.py").write_text(definition.format(id=node_id, name=node_id.title()))
    if executor is not None:
        (folder / "executor.py").write_text(executor.format(id=node_id))
    for name, text in files.items():
        (folder / f"{name}.py").write_text(text)
    return folder


def good_plugin(root: Path) -> Path:
    """`plugin-shout`, whose executor imports a helper module from its own folder."""
    return write_node(
        root / "shout", "plugin-shout",
        executor=(
            "from nodeflow_app.contract import ExecutionResult\n"
            "from .helpers import shout\n\n\n"
            "class Executor:\n"
            "    node_type = 'plugin-shout'\n\n"
            "    async def execute(self, data, inputs, ctx):\n"
            "        return ExecutionResult(outputs={{'output': shout(inputs['input'])}})\n\n\n"
            "executor = Executor()\n"),
        helpers="def shout(text):\n    return text.upper() + '!'\n",
    )


# name -> how to break a node folder
BROKEN = {
    "missing_executor": lambda root: write_node(root / "no_executor", "plugin-lonely", executor=None),
    "missing_definition": lambda root: write_node(root / "no_definition", "plugin-ghost", definition=None),
    "id_mismatch": lambda root: write_node(
        root / "mismatch", "plugin-mismatch",
        executor=EXECUTOR.replace('node_type = "{id}"', 'node_type = "plugin-other"')),
    "import_error": lambda root: write_node(
        root / "import_error", "plugin-imports", executor="import nodeflow_not_a_module\n" + EXECUTOR),
    "invalid_definition": lambda root: write_node(root / "bad_id", "Plugin_Bad_Id"),
    "no_capability": lambda root: write_node(
        root / "idle", "plugin-idle", executor="class E:\n    node_type = '{id}'\n\n\nexecutor = E()\n"),
    "duplicate_of_builtin": lambda root: write_node(root / "copycat", "manual-trigger"),
}

# name -> what the problem says (besides the folder)
REASONS = {
    "missing_executor": "missing executor.py",
    "missing_definition": "missing definition.py",
    "id_mismatch": "does not match definition id 'plugin-mismatch'",
    "import_error": "ModuleNotFoundError",
    "invalid_definition": "definition.py failed to import",
    "no_capability": "needs an `execute` or a `materialize` method",
    "duplicate_of_builtin": "node id 'manual-trigger' is already defined by",
}


@pytest.fixture
def plugins(tmp_path: Path) -> tuple[Path, dict[str, Path]]:
    """A plugin root with one good plugin and one folder per way of being broken."""
    root = tmp_path / "plugins"
    folders = {name: make(root) for name, make in BROKEN.items()}
    good_plugin(root)
    return root, folders


def test_builtin_registry_loads_without_problems():
    registry = Registry.load(plugin_roots=[])
    assert registry.problems == []
    assert registry.get("manual-trigger") is not None
    for node in registry.nodes.values():
        assert node.folder.is_relative_to(BUILTIN_ROOT)
        assert node.can_execute or node.can_materialize


def test_definitions_are_in_palette_order():
    registry = Registry.load(plugin_roots=[])
    keys = [(d.category, d.name) for d in registry.definitions()]
    assert keys == sorted(keys)
    assert list(registry.by_category()) == sorted({d.category for d in registry.definitions()})


def _check_lenient(registry: Registry, folders: dict[str, Path]) -> None:
    assert registry.get("plugin-shout") is not None
    assert registry.get("manual-trigger").folder.is_relative_to(BUILTIN_ROOT)
    assert len(registry.problems) == len(BROKEN)
    for name, folder in folders.items():
        [problem] = [p for p in registry.problems if p.startswith(f"{folder}:")]
        assert REASONS[name] in problem, problem
    for broken_id in ("plugin-lonely", "plugin-ghost", "plugin-mismatch", "plugin-imports", "plugin-idle"):
        assert registry.get(broken_id) is None


def test_plugin_roots_argument_is_lenient(plugins):
    root, folders = plugins
    _check_lenient(Registry.load(plugin_roots=[root]), folders)


def test_plugin_paths_env_var_is_lenient(plugins, monkeypatch, tmp_path):
    root, folders = plugins
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("NODEFLOW_PLUGIN_PATHS", f"{root}{os.pathsep}{empty}")
    _check_lenient(Registry.load(), folders)


def test_a_plugin_path_that_is_not_a_directory_is_reported(tmp_path):
    registry = Registry.load(plugin_roots=[tmp_path / "nowhere"])
    assert registry.problems == [f"plugin path {tmp_path / 'nowhere'} is not a directory"]
    assert registry.get("manual-trigger") is not None


async def test_a_plugin_executor_can_import_a_helper_from_its_folder(tmp_path):
    good_plugin(tmp_path)
    registry = Registry.load(roots=[], plugin_roots=[tmp_path])
    assert registry.problems == []
    result = await registry.get("plugin-shout").executor.execute({}, {"input": "hi"}, None)
    assert result == ExecutionResult(outputs={"output": "HI!"})


@pytest.mark.parametrize("name", sorted(set(BROKEN) - {"duplicate_of_builtin"}))
def test_a_broken_folder_under_a_strict_root_raises_naming_it(tmp_path, name):
    folder = BROKEN[name](tmp_path / "strict")
    with pytest.raises(RegistryError) as caught:
        Registry.load(roots=[tmp_path / "strict"], plugin_roots=[])
    assert str(caught.value).startswith(f"{folder}:")
    assert REASONS[name] in str(caught.value)


def test_a_duplicate_under_strict_roots_raises_naming_both_folders(tmp_path):
    first = write_node(tmp_path / "a" / "one", "plugin-twin")
    second = write_node(tmp_path / "b" / "two", "plugin-twin")
    with pytest.raises(RegistryError) as caught:
        Registry.load(roots=[tmp_path / "a", tmp_path / "b"], plugin_roots=[])
    assert str(caught.value) == f"{second}: node id 'plugin-twin' is already defined by {first}"


def test_private_and_hidden_folders_are_skipped(tmp_path):
    write_node(tmp_path / "_draft", "plugin-draft", executor=None)
    write_node(tmp_path / ".hidden", "plugin-hidden", executor=None)
    registry = Registry.load(roots=[tmp_path], plugin_roots=[])
    assert registry.nodes == {}


def test_a_strict_root_that_is_not_a_directory_raises(tmp_path):
    with pytest.raises(RegistryError, match="node root is not a directory"):
        Registry.load(roots=[tmp_path / "typo"], plugin_roots=[])
