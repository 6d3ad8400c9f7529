"""The contract every registered node keeps, checked the same way for each (one parametrised test per check)."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from nodeflow_app.runtime.graph import parameter_problem
from nodes._registry import BUILTIN_ROOT, RegisteredNode, Registry
from nodeflow_app.contract import NodeDefinition

REGISTRY = Registry.load(plugin_roots=[])
NODES = sorted(REGISTRY.nodes.values(), key=lambda n: n.definition.id)
REPO_ROOT = BUILTIN_ROOT.parent

# Packages a definition must not pull in: definitions are pure data, so the palette loads fast
# and works when a provider SDK is missing.
HEAVY_PACKAGES = ("reflex", "agno", "openai", "anthropic", "httpx", "sqlmodel", "nodeflow_app")

# Run in a fresh interpreter: load the schema types once, then fork per definition module so
# each import starts from the same clean baseline and reports what it loaded.
_IMPORT_PROBE = """
import importlib, json, os, sys
import nodeflow_app.contract
heavy = tuple(sys.argv[1].split(","))
baseline = set(sys.modules)
for module in sys.argv[2:]:
    pid = os.fork()
    if pid == 0:
        try:
            importlib.import_module(module)
            found = sorted(m for m in set(sys.modules) - baseline if m.split(".")[0] in heavy)
            print(json.dumps({"module": module, "heavy": found}), flush=True)
        except BaseException as error:
            print(json.dumps({"module": module, "error": repr(error)}), flush=True)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
"""


def _definition_module(node: RegisteredNode) -> str:
    return ".".join(("nodes",) + node.folder.relative_to(BUILTIN_ROOT).parts + ("definition",))


def _probe_imports(modules: list[str], heavy: tuple[str, ...], extra_path: Path | None = None) -> dict[str, dict]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(str(p) for p in (REPO_ROOT, extra_path) if p))
    completed = subprocess.run([sys.executable, "-c", _IMPORT_PROBE, ",".join(heavy), *modules],
                               cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120, check=True)
    reports = [json.loads(line) for line in completed.stdout.splitlines() if line.startswith("{")]
    return {report["module"]: report for report in reports}


@pytest.fixture(scope="module")
def definition_imports() -> dict[str, dict]:
    return _probe_imports([_definition_module(node) for node in NODES], HEAVY_PACKAGES)


node_cases = pytest.mark.parametrize("node", NODES, ids=[n.definition.id for n in NODES])


def test_builtin_nodes_load_without_problems() -> None:
    assert NODES, "no built-in nodes were found"
    assert REGISTRY.problems == []


@node_cases
def test_definition_is_pure_data(node: RegisteredNode, definition_imports: dict[str, dict]) -> None:
    report = definition_imports.get(_definition_module(node))
    assert report is not None, f"{node.folder}: the import probe did not report on definition.py"
    assert "error" not in report, f"{node.folder}: definition.py failed to import alone: {report.get('error')}"
    assert report["heavy"] == [], f"{node.folder}: definition.py imports {report['heavy']}"


@node_cases
def test_identity(node: RegisteredNode) -> None:
    definition = node.definition
    assert definition.id == node.executor.node_type
    assert node.folder.name == definition.id.replace("-", "_"), "folder name is the id with underscores"
    for text in ("name", "description", "category", "icon"):
        assert str(getattr(definition, text)).strip(), f"{definition.id}: empty {text}"


@node_cases
def test_versions_have_migrations(node: RegisteredNode) -> None:
    definition = node.definition
    assert definition.version >= 1
    assert sorted(m.from_version for m in definition.migrations) == list(range(1, definition.version))
    # A node saved at version 1 with no data upgrades to parameters this version knows.
    upgraded = definition.migrate({}, 1)
    known = {p.id for p in definition.parameters}
    assert set(upgraded) <= known, f"migrations add unknown parameters {sorted(set(upgraded) - known)}"


@node_cases
def test_parameters_have_labels_and_valid_defaults(node: RegisteredNode) -> None:
    for parameter in node.definition.parameters:
        for item in (parameter, *parameter.fields):
            assert item.label.strip(), f"parameter {item.id!r} has no label"
        if parameter.mode == "output":
            continue
        problem = parameter_problem(parameter, parameter.default)
        assert problem is None, f"parameter {parameter.id!r} default {parameter.default!r}: {problem}"
        if parameter.type == "select":
            assert parameter.options or parameter.choices, f"select parameter {parameter.id!r} has no options"
        for field in parameter.fields:
            assert parameter_problem(field, field.default) is None, f"{parameter.id}.{field.id} default"


@node_cases
def test_show_if_names_an_earlier_choice_of_the_same_node(node: RegisteredNode) -> None:
    """A `show_if` names a constant select or boolean declared before it (the inspector, Validate and the canvas
    read it in definition order), with values among that parameter's choices: a typo would hide a field forever."""
    definition = node.definition
    earlier: set[str] = set()
    for parameter in definition.parameters:
        for key, values in parameter.show_if.items():
            where = f"parameter {parameter.id!r} show_if {key!r}"
            controller = definition.parameter(key)
            assert controller is not None, f"{where}: the node has no parameter {key!r}"
            assert key in earlier, f"{where}: {key!r} must be declared before {parameter.id!r}"
            assert controller.mode == "constant", f"{where}: {key!r} can be wired, so its value is not known"
            assert controller.type in ("select", "boolean") and not controller.choices, (
                f"{where}: {key!r} is a {controller.type}; show_if names a select with options or a boolean")
            allowed = [True, False] if controller.type == "boolean" else [o.value for o in controller.options]
            assert values and all(any(value == a and type(value) is type(a) for a in allowed) for value in values), (
                f"{where}: {list(values)} must be among {allowed}")
        earlier.add(parameter.id)


def test_show_if_check_catches_a_typo() -> None:
    """The check above refuses a show_if value that is not among the options (it would hide the field for good)."""
    from nodeflow_app.contract import Option, Parameter

    broken = NodeDefinition(id="broken-show-if", name="Broken", description="x", category="utility", parameters=(
        Parameter(id="mode", label="Mode", type="select", default="a", options=(Option(value="a"), Option(value="b"))),
        Parameter(id="x", label="X", show_if={"mode": ("c",)})))
    with pytest.raises(AssertionError, match="must be among"):
        test_show_if_names_an_earlier_choice_of_the_same_node(
            RegisteredNode(definition=broken, executor=None, folder=Path("broken")))


@node_cases
def test_repeat_sockets_refer_to_list_parameters(node: RegisteredNode) -> None:
    definition = node.definition
    for socket in definition.inputs + definition.outputs:
        if socket.repeat is None:
            continue
        parameter = definition.parameter(socket.repeat)
        assert parameter is not None and parameter.type == "list", (
            f"socket {socket.id!r} repeats over {socket.repeat!r}, which is not a list parameter")
        assert "{index}" in socket.id, f"repeat socket {socket.id!r} has no {{index}} in its id"
        expanded = definition.output_sockets({socket.repeat: [{}, {}]})
        assert {socket.id.format(index=0), socket.id.format(index=1)} <= set(expanded)


@node_cases
def test_capabilities_match_outputs(node: RegisteredNode) -> None:
    definition = node.definition
    execute = getattr(node.executor, "execute", None)
    materialize = getattr(node.executor, "materialize", None)
    assert execute or materialize, "an executor needs execute or materialize"
    if execute is not None:
        assert inspect.iscoroutinefunction(execute) or inspect.isasyncgenfunction(execute), (
            "execute must be `async def` (a coroutine or an async generator)")
    if materialize is not None:
        assert inspect.iscoroutinefunction(materialize), "materialize must be `async def`"
    outputs = _all_outputs(definition)
    if any(channel == "flow" for channel in outputs.values()) or definition.trigger:
        assert execute is not None, "a node with flow outputs (or a trigger) needs execute"
    if any(channel == "link" for channel in outputs.values()):
        assert materialize is not None, "a node with link outputs needs materialize"


@node_cases
def test_flow_nodes_have_the_data_spine(node: RegisteredNode) -> None:
    definition = node.definition
    flow_outputs = [s for s in definition.outputs if s.channel == "flow"]
    if not flow_outputs:
        return  # link-only providers (models, tools) sit beside the spine
    if not definition.trigger:
        spine = next((s for s in definition.inputs if s.id == "input"), None)
        assert spine is not None and spine.channel == "flow", "a flow node needs an `input` flow socket"
    assert all(s.side in (None, "right") for s in definition.outputs), "outputs sit on the right"


def _all_outputs(definition: NodeDefinition) -> dict[str, str]:
    channels = {s.id: s.channel for s in definition.outputs}
    channels.update({p.id: p.channel for p in definition.parameters if p.mode == "output"})
    return channels


def test_import_probe_sees_a_heavy_import(tmp_path: Path) -> None:
    (tmp_path / "probe_heavy.py").write_text("")
    (tmp_path / "probe_pure.py").write_text("from nodeflow_app.contract import NodeDefinition\n")
    (tmp_path / "probe_impure.py").write_text("import probe_heavy\n")
    reports = _probe_imports(["probe_pure", "probe_impure"], ("probe_heavy",), tmp_path)
    assert reports["probe_pure"]["heavy"] == []
    assert reports["probe_impure"]["heavy"] == ["probe_heavy"]
