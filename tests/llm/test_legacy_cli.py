"""`nodeflow migrate`, `validate` and `run` as subprocesses on the legacy fixtures, against the fake OpenAI server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.llm.fake_openai import last_user_text, text

ROOT = Path(__file__).resolve().parents[2]
LEGACY = ROOT / "tests" / "fixtures" / "graphs" / "legacy"
VALID = sorted(p.name for p in LEGACY.glob("*.json") if not p.name.startswith("invalid_"))


def nodeflow(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, REFLEX_DB_URL=f"sqlite:///{tmp_path / 'runs.db'}", AGNO_TELEMETRY="false")
    return subprocess.run([sys.executable, "-m", "nodeflow_app.cli", *args], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=120)


def migrate(tmp_path: Path, name: str) -> Path:
    target = tmp_path / f"new-{name}"
    done = nodeflow(tmp_path, "migrate", str(LEGACY / name), "-o", str(target), "--provider", "openai-compatible")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Converted (") and f"wrote {target}" in done.stdout
    return target


@pytest.mark.parametrize("name", VALID)
def test_migrate_then_validate_accepts_each_fixture(fake_llm, tmp_path, name):
    # fake_llm configures the openai-compatible provider, so not even a warning is left.
    done = nodeflow(tmp_path, "validate", str(migrate(tmp_path, name)))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("valid: ") and "warning" not in done.stdout, done.stdout


def test_migrate_without_output_prints_the_graph_and_the_report_on_stderr(tmp_path):
    done = nodeflow(tmp_path, "migrate", str(LEGACY / "subagents.json"))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["name"] == "Research team"
    assert "tools.web_search = true: NodeFlow has no built-in web search" in done.stderr


def test_a_broken_sub_agent_rule_writes_nothing_and_exits_2(tmp_path):
    target = tmp_path / "new.json"
    done = nodeflow(tmp_path, "migrate", str(LEGACY / "invalid_subagent_cycle.json"), "-o", str(target))
    assert done.returncode == 2 and not target.exists()
    assert "edge s2: sub-agent cycle: a -> b -> a" in done.stdout
    assert "not converted: 1 error(s)" in done.stderr


def test_a_current_graph_is_not_migrated(tmp_path):
    done = nodeflow(tmp_path, "migrate", str(ROOT / "tests" / "fixtures" / "graphs" / "examples" / "branching.json"))
    assert done.returncode == 2
    assert "is not a graph of the older runtime" in done.stderr


def test_run_of_a_migrated_graph_follows_the_first_matching_condition(fake_llm, tmp_path):
    fake_llm.script(text("URGENT: my refund"))
    done = nodeflow(tmp_path, "run", str(migrate(tmp_path, "conditions.json")), "--json", "--no-store")
    assert done.returncode == 0, done.stdout + done.stderr
    final = json.loads(done.stdout.splitlines()[-1])
    assert final["event_type"] == "run_completed"
    assert final["outputs"]["Urgent desk"]["output"]["response"] == "echo: URGENT: URGENT: my refund"
    assert "Refund desk" not in final["outputs"]


def test_run_pauses_at_the_approval_and_resume_takes_the_reject_branch(fake_llm, tmp_path):
    graph = migrate(tmp_path, "approval.json")
    paused = nodeflow(tmp_path, "run", str(graph), "--json")
    assert paused.returncode == 3, paused.stdout + paused.stderr
    final = json.loads(paused.stdout.splitlines()[-1])
    assert final["paused"] == ["check"]
    resumed = nodeflow(tmp_path, "resume", final["run_id"], "--node", "Approval", "--json",
                       "--payload", '{"decision": "reject", "note": "too curt"}')
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    outputs = json.loads(resumed.stdout.splitlines()[-1])["outputs"]
    assert outputs["Rewriter"]["output"]["response"] == "echo: echo: Draft a reply: Refund order 42"
    assert "Sender" not in outputs
    assert last_user_text(fake_llm.requests[-1]) == "echo: Draft a reply: Refund order 42"


def test_an_unknown_provider_is_refused(tmp_path):
    done = nodeflow(tmp_path, "migrate", str(LEGACY / "approval.json"), "--provider", "acme")
    assert done.returncode == 2
    assert "unknown provider 'acme'; use one of: openai" in done.stderr


@pytest.mark.parametrize("command", ["validate", "run"])
def test_validate_and_run_of_an_old_graph_say_to_migrate_it(tmp_path, command):
    done = nodeflow(tmp_path, command, str(LEGACY / "approval.json"), *(["--no-store"] if command == "run" else []))
    assert done.returncode == 2
    assert "is a graph of the older runtime: convert it first with `nodeflow migrate" in done.stderr


def test_migrate_converts_a_sub_agent_chain_deeper_than_the_recursion_limit(tmp_path):
    """1,100 agents each the sub-agent of the one before (164 KB): the cycle check's recursion raised."""
    agents = [{"id": f"a{i}", "type": "agent", "data": {"tools": {"subagents": True}}} for i in range(1100)]
    links = [{"id": f"e{i}", "source": f"a{i}", "target": f"a{i + 1}", "sourceHandle": "subagent"} for i in range(1099)]
    old = tmp_path / "chain.json"
    old.write_text(json.dumps({"nodes": [{"id": "s", "type": "start"}, *agents], "edges": links}))
    done = nodeflow(tmp_path, "migrate", str(old), "-o", str(tmp_path / "new.json"))
    assert done.returncode == 0, done.stderr
    assert len(json.loads((tmp_path / "new.json").read_text())["edges"]) == 1099


def test_a_failure_inside_the_migration_is_one_line_naming_the_file(monkeypatch, capsys):
    import nodeflow_app.legacy
    from nodeflow_app.cli import main

    def broken(*args, **kwargs):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(nodeflow_app.legacy, "migrate_graph", broken)
    assert main(["migrate", str(LEGACY / "approval.json")]) == 1
    assert capsys.readouterr().err == (f"nodeflow migrate: internal error converting {LEGACY / 'approval.json'}: "
                                       "RecursionError: maximum recursion depth exceeded\n")
