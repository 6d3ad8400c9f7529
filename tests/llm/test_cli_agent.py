"""`nodeflow run` of the agent pipeline example as a subprocess against the fake OpenAI server: tokens reach
stdout while the run goes on, tool calls are readable, the run completes; `--json` carries token text."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

from tests.llm.fake_openai import last_user_text, text, tool_call

ROOT = Path(__file__).resolve().parents[2]
GRAPH = ROOT / "tests" / "fixtures" / "graphs" / "examples" / "agent_pipeline.json"
RESEARCH = ["6*7", " is", " 42", "."]
SUMMARY = ["The", " answer", " is", " 42", "."]


def script(fake, delay: float) -> None:
    """Researcher: calculator(6*7), then RESEARCH token by token; Summarize: SUMMARY. `delay` before each token."""
    fake.script(tool_call("calculator", {"expression": "6*7"}), text(RESEARCH, delay=delay),
                text(SUMMARY, delay=delay, match=lambda body: last_user_text(body).startswith("Summarize")))


class Cli:
    """`nodeflow run GRAPH --input ...` in a subprocess; stdout read as it comes (killed after 60 s)."""

    def __init__(self, tmp_path: Path, *options: str):
        script_path = Path(sys.executable).parent / "nodeflow"
        command = [str(script_path)] if script_path.exists() else [sys.executable, "-m", "nodeflow_app.cli"]
        env = dict(os.environ, REFLEX_DB_URL=f"sqlite:///{tmp_path / 'runs.db'}", AGNO_TELEMETRY="false")
        self.stderr = open(tmp_path / "stderr.txt", "w+")
        self.process = subprocess.Popen([*command, "run", str(GRAPH), "--input", "what is 6*7?", *options],
                                        stdout=subprocess.PIPE, stderr=self.stderr, env=env, cwd=ROOT)
        self.watchdog = threading.Timer(60, self.process.kill)
        self.watchdog.start()
        self.out = ""

    def read_until(self, wanted: str) -> bool:
        """Read stdout until `wanted` shows; True if the process was still running then."""
        while wanted not in self.out:
            chunk = os.read(self.process.stdout.fileno(), 4096)
            assert chunk, f"stdout ended before {wanted!r}:\n{self.out}\n{self.errors()}"
            self.out += chunk.decode()
        return self.process.poll() is None

    def finish(self) -> tuple[int, list[str]]:
        """Read to the end; (exit code, stdout lines)."""
        while chunk := os.read(self.process.stdout.fileno(), 4096):
            self.out += chunk.decode()
        code = self.process.wait()
        self.watchdog.cancel()
        self.process.stdout.close()
        return code, self.out.splitlines()

    def errors(self) -> str:
        self.stderr.seek(0)
        return self.stderr.read()


#  Chat Start --> Researcher --> Summarize ("Summarize in one sentence: {{ $('Researcher').json.response }}")
#                   ^ tools
#       Calculator (toolset) + Helper (agent, tools-out)
async def test_run_prints_tokens_as_they_arrive_and_readable_tool_calls(fake_llm, tmp_path):
    script(fake_llm, delay=0.15)
    cli = Cli(tmp_path)
    assert cli.read_until(f"Researcher > {RESEARCH[0]}"), "the first token came only when the process ended"
    assert "".join(RESEARCH) not in cli.out  # the rest of the answer is still on its way
    code, lines = cli.finish()
    assert code == 0, cli.errors()
    started = lines.index('Researcher: tool_call_started calculator {"expression": "6*7"}')
    completed = lines.index("Researcher: tool_call_completed calculator -> 42")
    answer = lines.index(f"Researcher > {''.join(RESEARCH)}")
    summary = lines.index(f"Summarize > {''.join(SUMMARY)}")
    assert started < completed < answer < summary
    final = json.loads(lines[-1])
    assert final["event_type"] == "run_completed"
    assert final["outputs"]["Researcher"]["output"]["response"] == "6*7 is 42."
    assert final["outputs"]["Summarize"]["output"]["text"] == "The answer is 42."
    first, after_tool, summarize = fake_llm.requests
    assert {"calculator", "delegate_task_to_member"} <= {t["function"]["name"] for t in first["tools"]}
    assert after_tool["messages"][-1]["content"] == "42"
    assert last_user_text(summarize) == "Summarize in one sentence: 6*7 is 42."


async def test_run_json_streams_token_events_with_their_text(fake_llm, tmp_path):
    script(fake_llm, delay=0.1)
    cli = Cli(tmp_path, "--json")
    assert cli.read_until('"event_type": "token"'), "the first token event came only when the process ended"
    code, lines = cli.finish()
    assert code == 0, cli.errors()
    events = [json.loads(line) for line in lines]
    tokens = [(e["node_id"], e["data"]["text"]) for e in events if e["event_type"] == "token"]
    assert tokens == [("researcher", t) for t in RESEARCH] + [("summarize", t) for t in SUMMARY]
    [done] = [e["data"] for e in events if e["event_type"] == "tool_call_completed"]
    assert (done["name"], done["arguments"], done["result"]) == ("calculator", {"expression": "6*7"}, "42")
    assert events[-1]["event_type"] == "run_completed" and events[-1]["error"] is None
