"""`nodeflow run` and `nodeflow resume` on the example graphs: events as they happen, outputs, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from nodeflow_app.cli import main

EXAMPLES = Path(__file__).parent / "fixtures" / "graphs" / "examples"
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def database(tmp_path, monkeypatch):
    monkeypatch.setenv("REFLEX_DB_URL", f"sqlite:///{tmp_path / 'runs.db'}")


def json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


#  Start --> Is adult --true--> Adult --+
#                    \--false-> Minor --+--> Join --> Reply
def test_run_prints_readable_events_and_the_outputs(capsys):
    assert main(["run", str(EXAMPLES / "branching.json")]) == 0
    out = capsys.readouterr().out
    assert "Is adult: completed" in out and "Minor: skipped" in out
    last = json.loads(out.strip().splitlines()[-1])
    assert last["event_type"] == "run_completed"
    assert last["outputs"]["Reply"]["output"]["text"] == "Ada is adult (checked by Ada)"


def test_run_with_input_and_json_events(capsys):
    payload = json.dumps({"name": "Bo", "age": 9})
    assert main(["run", str(EXAMPLES / "branching.json"), "--input", payload, "--json"]) == 0
    lines = json_lines(capsys.readouterr().out)
    assert {"run_id", "node_id", "node_type", "event_type", "data", "timestamp"} <= set(lines[0])
    assert [e["node_id"] for e in lines if e.get("event_type") == "skipped"] == ["adult"]
    assert lines[-1]["outputs"]["Reply"]["output"]["text"] == "Bo is minor (checked by Bo)"


def test_for_each_example_runs_children_per_item(capsys):
    assert main(["run", str(EXAMPLES / "for_each.json"), "--json"]) == 0
    final = json_lines(capsys.readouterr().out)[-1]
    assert [r["label"] for r in final["outputs"]["Each order"]["output"]["results"]] == ["small", "big"]


#  Chat Start --> Manager approval --approve--> Approved
#                                  \-reject---> Rejected
def test_paused_run_exits_3_and_resumes_in_a_new_process(capsys):
    assert main(["run", str(EXAMPLES / "approval.json"), "--input", "refund order 42", "--json"]) == 3
    final = json_lines(capsys.readouterr().out)[-1]
    assert final["event_type"] == "run_paused" and final["paused"] == ["ask"]
    answer = json.dumps({"decision": "reject", "note": "no receipt"})
    resumed = subprocess.run([sys.executable, "-m", "nodeflow_app.cli", "resume", final["run_id"], "--node",
                              "Manager approval", "--payload", answer, "--json"],
                             capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert resumed.returncode == 0, resumed.stderr
    last = json_lines(resumed.stdout)[-1]
    assert last["event_type"] == "run_completed"
    assert last["outputs"]["Rejected"]["output"]["text"] == "Refund rejected (no receipt)"
    assert "Approved" not in last["outputs"]


def test_resume_with_a_bad_answer_is_refused_and_the_run_stays_paused(capsys):
    """A mistyped answer failed the run here, while the API refused it: both ask the node first now."""
    main(["run", str(EXAMPLES / "approval.json"), "--input", "x", "--json"])
    run_id = json_lines(capsys.readouterr().out)[-1]["run_id"]
    assert main(["resume", run_id, "--node", "ask", "--payload", '{"decision": "maybe"}', "--json"]) == 2
    assert ("node 'Manager approval' does not take this answer: approval answer needs decision 'approve' or "
            "'reject', got 'maybe'") in capsys.readouterr().err
    assert main(["resume", run_id, "--node", "ask", "--payload", '{"decision": "approve"}', "--json"]) == 0
    assert json_lines(capsys.readouterr().out)[-1]["event_type"] == "run_completed"


def test_resume_of_an_unknown_run_or_a_node_that_is_not_waiting(capsys):
    assert main(["resume", "nope", "--node", "ask"]) == 2
    assert "no run 'nope'" in capsys.readouterr().err
    main(["run", str(EXAMPLES / "approval.json"), "--input", "x", "--json"])
    run_id = json_lines(capsys.readouterr().out)[-1]["run_id"]
    assert main(["resume", run_id, "--node", "Chat Start"]) == 2
    assert "not waiting for input" in capsys.readouterr().err


async def test_resume_refuses_a_chat_run_whose_card_the_chat_answers(capsys):
    """Answered here, the chat's message stayed paused with an open card the chat then refused: chat runs are
    answered in the chat, as the Runs panel and the API already say."""
    from nodeflow_app.contract import CONVERSATION
    from nodeflow_app.runs.launcher import RunLauncher

    launcher = RunLauncher()
    try:
        run = await launcher.start(json.loads((EXAMPLES / "approval.json").read_text()), started_by="chat",
                                   payload="refund order 42", context={CONVERSATION: "chat-1"}).run()
    finally:
        launcher.close()
    assert run.status == "paused"
    assert main(["resume", run.run_id, "--node", "ask", "--payload", '{"decision": "approve"}']) == 2
    assert "answers a chat message: answer its card in the chat" in capsys.readouterr().err


def test_invalid_graph_exits_2_naming_the_problem(tmp_path, capsys):
    graph = json.loads((EXAMPLES / "branching.json").read_text())
    graph["edges"][0]["targetHandle"] = "nowhere"
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(graph))
    assert main(["run", str(path)]) == 2
    assert "edge_missing_handle" in capsys.readouterr().err


def test_failed_run_exits_1(tmp_path, capsys):
    graph = json.loads((EXAMPLES / "branching.json").read_text())
    graph["nodes"][-1]["data"]["template"] = "{unknown_field}"
    path = tmp_path / "fails.json"
    path.write_text(json.dumps(graph))
    assert main(["run", str(path), "--no-store"]) == 1
    assert "run " in capsys.readouterr().out
