"""Every bad input to the CLI is one clear line and exit 2, never a traceback, never a hang.

Real processes for what only a real argv or file system shows (stray bytes, /dev/zero, a pipe).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import nodeflow_app.cli as cli
from nodeflow_app.cli import main

ROOT = Path(__file__).resolve().parents[1]


def graph(payload_data: object = None, **trigger_extra) -> dict:
    data = {} if payload_data is None else {"payload": payload_data}
    return {"id": "g", "name": "g", "nodes": [{"id": "t", "type": "manual-trigger", "name": "Start", "data": data,
                                               **trigger_extra}], "edges": []}


def deep(levels: int) -> str:
    return '{"a": ' * levels + "1" + "}" * levels


def cli_process(*args: str | bytes, timeout: float = 30) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NODEFLOW_DATA_DIR": os.environ.get("TMPDIR", "/tmp")}
    return subprocess.run([sys.executable, "-m", "nodeflow_app.cli", *args], cwd=ROOT, env=env,
                          capture_output=True, timeout=timeout)


@pytest.mark.parametrize(("text", "message"), [
    ('{"nodes": [' + "1" * 5000 + "]}", "{path}: a whole number of over 4,300 digits is too large"),
    ("[" * 100_000 + "]" * 100_000, "{path}: the JSON is nested deeper than 100 levels (the limit)"),
    (json.dumps(graph()).replace('"data": {}', '"data": {"payload": ' + deep(254) + "}"),
     "node t 'Start': invalid_value: node 'Start' data.payload.a.a.a.a.…(100 steps in all)….a.a.a.a: nested "
     "deeper than 100 levels (the limit)"),
    (json.dumps(graph({"x": float("nan")})),
     "node t 'Start': invalid_value: node 'Start' data.payload.x: nan is not a number JSON can hold (NaN and "
     "Infinity are refused)"),
    (json.dumps(graph(), allow_nan=True).replace('"data": {}', '"data": {}, "position": {"x": Infinity}'),
     "node t 'Start': invalid_value: node 'Start' position.x: inf is not a number JSON can hold (NaN and "
     "Infinity are refused)"),
    (json.dumps(graph("a\ud800b")),
     "node t 'Start': invalid_value: node 'Start' data.payload: holds a lone surrogate \\ud800 (at 1), which is "
     "not Unicode text"),
    (json.dumps(graph(name="St\u0000art")),
     "invalid_value: node #0 name: holds a NUL character (at 2)"),
])
def test_validate_refuses_what_cannot_travel_naming_what_and_where(capsys, tmp_path, text, message):
    path = tmp_path / "graph.json"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    assert main(["validate", str(path)]) == 2
    out, err = capsys.readouterr()
    lines = [line for line in (out + err).splitlines() if not line.startswith("invalid:")]
    expected = message.format(path=path)
    assert (len(lines) == 1 and lines[0].endswith(expected)) or err == f"nodeflow validate: {expected}\n", (out, err)


def test_validate_refuses_devices_pipes_and_files_over_the_limit(capsys, tmp_path, monkeypatch):
    assert main(["validate", "/dev/zero"]) == 2
    assert capsys.readouterr().err == "nodeflow validate: /dev/zero is not a regular file\n"
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)  # nobody writes to it: opening it for reading would block forever
    assert main(["validate", str(fifo)]) == 2
    assert capsys.readouterr().err == f"nodeflow validate: {fifo} is not a regular file\n"
    big = tmp_path / "big.json"
    big.write_text(json.dumps(graph("x" * 3 * 1024 * 1024)))
    monkeypatch.setattr(cli, "MAX_FILE_BYTES", 2 * 1024 * 1024)
    monkeypatch.setattr(cli.read_text, "__defaults__", (2 * 1024 * 1024,))
    assert main(["validate", str(big)]) == 2
    assert capsys.readouterr().err == f"nodeflow validate: {big} is larger than the limit of 2 MB\n"


@pytest.mark.parametrize(("payload", "message"), [
    ("NaN", "--input: $: nan is not a number JSON can hold (NaN and Infinity are refused)"),
    ('{"x": -Infinity}', "--input: $.x: -inf is not a number JSON can hold (NaN and Infinity are refused)"),
    ("1" * 5000, "--input: a whole number of over 4,300 digits is too large"),
    ("[" * 300 + "]" * 300, "--input: $[0][0][0][0][0][0].…(100 steps in all)…[0][0][0][0]: nested deeper than 100 "
                            "levels (the limit)"),
    ("[" * 100_000 + "]" * 100_000, "--input: the JSON is nested deeper than 100 levels (the limit)"),
    ('"a\\ud800"', "--input: $: holds a lone surrogate \\ud800 (at 1), which is not Unicode text"),
    ('{"k\\u0000": 1}', '--input: $["k\\x00"]: the key holds a NUL character (at 1)'),
    ("caf\udcc3", "--input is not valid UTF-8 text (byte 0xc3 at character 3)"),
])
def test_run_refuses_a_payload_that_cannot_travel(capsys, payload, message, tmp_path):
    path = tmp_path / "graph.json"
    path.write_text(json.dumps(graph()))
    assert main(["run", "--no-store", str(path), "--input", payload]) == 2
    assert capsys.readouterr().err == f"nodeflow run: {message}\n"


def test_plain_text_and_json_payloads_still_work(capsys, tmp_path):
    path = tmp_path / "graph.json"
    path.write_text(json.dumps(graph()))
    assert main(["run", "--no-store", "--json", str(path), "--input", "just text, NaN inside"]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["outputs"]["Start"] == {
        "output": "just text, NaN inside"}
    assert main(["run", "--no-store", "--json", str(path), "--input", '{"n": 1e308, "deep": ' + deep(90) + "}"]) == 0


def test_real_processes_never_print_a_traceback(tmp_path):
    path = tmp_path / "graph.json"
    path.write_text(json.dumps(graph()))
    garbage = tmp_path / "garbage.bin"
    garbage.write_bytes(os.urandom(4096))
    cases = [
        (["validate", "/dev/zero"], b"/dev/zero is not a regular file"),
        (["validate", str(garbage)], b"is not UTF-8 text"),
        (["run", "--no-store", str(path), "--input", b"caf\xc3"], b"--input is not valid UTF-8 text (byte 0xc3"),
        (["run", "--no-store", str(path), "--trigger", b"\xff"], b"no node '\\udcff'"),
        (["run", "--no-store", str(path), "--input", "9" * 5000], b"over 4,300 digits"),
        ([b"vali\xffdate"], b"invalid choice"),
    ]
    for args, expected in cases:
        done = cli_process(*args)
        assert done.returncode == 2, (args, done.stderr)
        assert b"Traceback" not in done.stderr and expected in done.stderr, (args, done.stderr)


def test_validate_of_a_4_mb_graph_does_not_spend_seconds_on_a_did_you_mean_hint():
    import time

    from nodeflow_app.validation import validate_graph
    from nodes._registry import default_registry

    nodes = [{"id": f"n{i}", "type": "manual-trigger", "name": "a" * 500 + str(i)} for i in range(8000)]
    wrong = "{{ $('" + "a" * 500 + "x').item.json }}"  # long and close to every name: difflib takes ~4 s
    nodes.append({"id": "e", "type": "edit-fields", "name": "E", "data": {"fields": [{"name": "x", "value": wrong}]}})
    started = time.monotonic()
    _, issues = validate_graph({"nodes": nodes, "edges": []}, default_registry())
    assert time.monotonic() - started < 2
    [issue] = [i for i in issues if "names no node" in i.line()]
    assert "did you mean" not in issue.line()
