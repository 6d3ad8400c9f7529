"""`nodeflow nodes` and `nodeflow validate`, in-process through `main([...])` and once as a real process.

The graphs use only the built-in `manual-trigger` (the CLI reads the built-in registry)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import nodes._registry as registry_module
from nodeflow_app.cli import COMMANDS, main

ROOT = Path(__file__).resolve().parents[1]
CLI_GRAPHS = ROOT / "tests" / "fixtures" / "graphs" / "cli"
VALID = CLI_GRAPHS / "valid_two_triggers.json"
INVALID = CLI_GRAPHS / "invalid_name_and_handle.json"


@pytest.fixture(autouse=True)
def fresh_registry(monkeypatch):
    """Each test reads NODEFLOW_PLUGIN_PATHS afresh (default_registry caches per process)."""
    monkeypatch.delenv("NODEFLOW_PLUGIN_PATHS", raising=False)
    monkeypatch.setattr(registry_module, "_default", None)


def test_nodes_prints_a_table_sorted_by_category(capsys):
    assert main(["nodes"]) == 0
    out, err = capsys.readouterr()
    header, *rows = out.splitlines()
    assert header.split() == ["ID", "NAME", "CATEGORY", "VERSION"]
    trigger_row = next(r for r in rows if r.startswith("manual-trigger "))
    assert trigger_row.split() == ["manual-trigger", "Manual", "Trigger", "trigger", "1"]
    categories = [row[header.index("CATEGORY"):].split()[0] for row in rows]
    assert categories == sorted(categories)
    assert err == ""


def test_nodes_prints_plugin_problems_to_stderr(capsys, monkeypatch, tmp_path):
    # plugins/half/ has a definition.py but no executor.py
    half = tmp_path / "half"
    half.mkdir()
    (half / "definition.py").write_text("")
    monkeypatch.setenv("NODEFLOW_PLUGIN_PATHS", str(tmp_path))
    assert main(["nodes"]) == 0
    out, err = capsys.readouterr()
    assert "manual-trigger" in out
    assert f"plugin problem: {half}: missing executor.py" in err


def test_validate_a_valid_graph(capsys):
    assert main(["validate", str(VALID)]) == 0
    assert capsys.readouterr().out == "valid: 2 nodes, 0 edges\n"


def test_validate_prints_one_line_per_issue(capsys):
    # Start (t1) --output--> Start (t2).input    two nodes named Start; a trigger has no input
    assert main(["validate", str(INVALID)]) == 2
    out, err = capsys.readouterr()
    assert out.splitlines() == [
        "node t2 'Start': duplicate_node_name: node t2 has the name 'Start', already used by node t1",
        "edge e1, node t2 'Start': edge_missing_handle: node 'Start' (manual-trigger) has no input 'input' "
        "(it has: none)",
    ]
    assert err == f"invalid: 2 issues in {INVALID}\n"


@pytest.mark.parametrize(("trigger", "code", "expected"), [
    ("Start B", 0, "valid: 2 nodes, 0 edges"),
    ("t1", 0, "valid: 2 nodes, 0 edges"),
    ("Nope", 2, "graph: missing_trigger: no node 'Nope' to start the run from (triggers here: Start A, Start B)"),
])
def test_validate_with_a_trigger(capsys, trigger, code, expected):
    assert main(["validate", str(VALID), "--trigger", trigger]) == code
    assert capsys.readouterr().out.splitlines() == [expected]


@pytest.mark.parametrize(("content", "message"), [
    (None, "cannot read {path}: No such file or directory"),
    ('{"nodes": [', "{path} is not valid JSON: Expecting value (line 1, column 12)"),
    ("", "{path} is not valid JSON: Expecting value (line 1, column 1)"),
    (b"\xff\xfe{}", "{path} is not UTF-8 text (byte 0)"),
])
def test_validate_unreadable_input_is_a_clear_message(capsys, tmp_path, content, message):
    path = tmp_path / "graph.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content)
    assert main(["validate", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"nodeflow validate: {message.format(path=path)}\n"


def test_validate_a_directory(capsys, tmp_path):
    assert main(["validate", str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"nodeflow validate: {tmp_path} is not a regular file\n"


def test_validate_json_that_is_not_a_graph(capsys, tmp_path):
    path = tmp_path / "list.json"
    path.write_text("[1, 2]")
    assert main(["validate", str(path)]) == 2
    assert capsys.readouterr().out == "graph: schema: a graph is a JSON object, got list\n"


def test_validate_a_schema_error_names_the_node(capsys, tmp_path):
    path = tmp_path / "graph.json"
    path.write_text('{"nodes": [{"id": "t1", "name": "Start", "type": "manual-trigger", "position": {"x": "left"}}]}')
    assert main(["validate", str(path)]) == 2
    assert capsys.readouterr().out.startswith("node t1 'Start': schema: node 'Start': nodes.0.position.x: ")


def test_validate_lists_every_problem_at_once_also_past_an_edge_the_schema_refuses(capsys):
    """An edge without its data stopped the check at the schema: the unknown node type and the bad parameter
    came up only once the edge was fixed, one validate later."""
    # Start -/-> Wait(amount -1) --> Elsewhere (a type this NodeFlow does not have)    e1 has no data
    path = CLI_GRAPHS / "invalid_everywhere.json"
    assert main(["validate", str(path)]) == 2
    out, err = capsys.readouterr()
    assert sorted(out.splitlines()) == [
        "edge e1: schema: edges.0.data: Field required",
        "node w1 'Wait', parameter 'amount': invalid_parameter: -1 is below the minimum 0",
        "node x1 'Elsewhere': unknown_node_type: node 'Elsewhere' has unknown type 'from-elsewhere'",
    ]
    assert err == f"invalid: 3 issues in {path}\n"


@pytest.mark.parametrize("argv", [[], ["frobnicate"], ["validate"]])
def test_bad_arguments_exit_2_with_usage(capsys, argv):
    assert main(argv) == 2
    assert "usage: nodeflow" in capsys.readouterr().err


def test_help_exits_0(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for name in COMMANDS:
        assert name in out


def test_module_entry_point_on_a_broken_graph():
    # Start (t1) --output--> Start (t2).input
    process = subprocess.run(
        [sys.executable, "-m", "nodeflow_app.cli", "validate", str(INVALID)],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
        env={k: v for k, v in os.environ.items() if k != "NODEFLOW_PLUGIN_PATHS"},
    )
    assert process.returncode == 2, process.stderr
    assert "Traceback" not in process.stderr
    lines = process.stdout.splitlines()
    assert [line.split(": ")[1] for line in lines] == ["duplicate_node_name", "edge_missing_handle"]
    assert lines[0].startswith("node t2 'Start'")
