"""nodes/tools/mcp_server: a real stdio MCP server (tests/llm/mcp_echo_server.py) used by a real Agno agent."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

import pytest

from nodeflow_app.llm.mcp_servers import SERVERS_ENV
from nodeflow_app.runtime.engine import start_run
from nodeflow_app.runtime.graph import GraphInvalid
from nodes._registry import default_registry
from tests.llm.fake_openai import http_error, text, tool_call
from tests.llm.graphs import MODEL, graph, of, run_graph

ECHO_SERVER = str(Path(__file__).with_name("mcp_echo_server.py"))


@pytest.fixture
def declare(tmp_path, monkeypatch):
    """Write the install's MCP server declarations (NODEFLOW_MCP_SERVERS) and return the file."""
    def write(**servers: dict) -> Path:
        path = tmp_path / "mcp_servers.json"
        path.write_text(json.dumps({"servers": servers}))
        monkeypatch.setenv(SERVERS_ENV, str(path))
        return path
    return write


def echo_server(declare, pid_file: Path, **data) -> tuple[str, str, dict]:
    """An MCP Server node choosing the declared echo server, whose starts are recorded in `pid_file`."""
    declare(echo={"command": sys.executable, "args": [ECHO_SERVER], "env": {"NODEFLOW_MCP_PID_FILE": str(pid_file)}})
    return ("mcp", "mcp-server", {"transport": "stdio", "server": "echo", **data})


def agent(node_id: str = "a", **data) -> tuple[str, str, dict]:
    return (node_id, "agent", {"model": MODEL, **data})


def server_pids(pid_file: Path) -> list[int]:
    """The process id of every start of the echo server that wrote to `pid_file`."""
    return [int(line) for line in pid_file.read_text().split()]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def gone(pid_file: Path, timeout: float = 5.0) -> bool:
    """True once every server process that wrote to `pid_file` has exited (and been reaped)."""
    for _ in range(int(timeout / 0.05)):
        if not any(alive(pid) for pid in server_pids(pid_file)):
            return True
        await asyncio.sleep(0.05)
    return False


#  Chat Start --> Agent      (MCP Server ==tools==> Agent)
async def test_an_agent_calls_a_tool_of_a_stdio_mcp_server_and_the_server_stops_with_the_run(fake_llm, tmp_path, declare):
    fake_llm.script(tool_call("add", {"a": 2, "b": 3}), text(["It", " is", " 5"]))
    pid_file = tmp_path / "server.pid"
    raw = graph([("chat", "chat-start", {}), agent(), echo_server(declare, pid_file)],
                ["chat.output -> a.input", "mcp.tools => a.tools"])
    run, events = await run_graph(raw, payload="What is 2 + 3?")
    assert run.status == "completed", run.error
    [completed] = of(events, "a", "tool_call_completed")
    assert (completed.data["name"], completed.data["arguments"], completed.data["error"]) == (
        "add", {"a": 2, "b": 3}, None)
    assert "5" in str(completed.data["result"])
    assert run.outputs_by_name()["A"]["output"]["response"] == "It is 5"
    assert sorted(t["function"]["name"] for t in fake_llm.requests[0]["tools"]) == ["add", "shout"]
    assert len(server_pids(pid_file)) == 1
    assert await gone(pid_file), "the MCP server process outlived the run"


#  Chat Start --> Agent A --> Agent B      (one MCP Server ==tools==> both)
async def test_two_agents_share_one_connection_per_run(fake_llm, tmp_path, declare):
    fake_llm.script(tool_call("add", {"a": 1, "b": 1}), text("two"), tool_call("shout", {"text": "two"}), text("TWO"))
    pid_file = tmp_path / "server.pid"
    raw = graph([("chat", "chat-start", {}), agent("a"), agent("b"), echo_server(declare, pid_file)],
                ["chat.output -> a.input", "a.output -> b.input", "mcp.tools => a.tools", "mcp.tools => b.tools"])
    run, events = await run_graph(raw, payload="1 + 1, loudly")
    assert run.status == "completed", run.error
    assert [e.data["result"] for e in of(events, "a", "tool_call_completed")] == ["2"]
    assert [e.data["result"] for e in of(events, "b", "tool_call_completed")] == ["TWO"]
    assert run.outputs_by_name()["B"]["output"]["response"] == "TWO"
    assert len(server_pids(pid_file)) == 1, "B picked up A's connection instead of starting the server again"
    assert await gone(pid_file)


async def test_the_server_stops_when_the_run_fails(fake_llm, tmp_path, declare):
    fake_llm.script(http_error(500, "upstream exploded"))
    pid_file = tmp_path / "server.pid"
    raw = graph([("chat", "chat-start", {}), agent(), echo_server(declare, pid_file)],
                ["chat.output -> a.input", "mcp.tools => a.tools"])
    run, _ = await run_graph(raw, payload="hi")
    assert run.status == "failed" and "HTTP 500" in run.error
    assert await gone(pid_file)


async def test_the_server_stops_when_the_run_is_cancelled(fake_llm, tmp_path, declare):
    fake_llm.script(text([f"t{i} " for i in range(200)], delay=0.02))
    pid_file = tmp_path / "server.pid"
    raw = graph([("chat", "chat-start", {}), agent(), echo_server(declare, pid_file)],
                ["chat.output -> a.input", "mcp.tools => a.tools"])
    run = start_run(raw, default_registry(), payload="stream a lot")
    async for event in run.events():
        if event.event_type == "token":
            run.cancel()
    assert run.status == "cancelled"
    assert await gone(pid_file)


async def test_tool_filter_offers_only_the_named_tools(fake_llm, tmp_path, declare):
    fake_llm.script(text("ok"))
    raw = graph([("chat", "chat-start", {}), agent(), echo_server(declare, tmp_path / "pid", tool_filter="shout")],
                ["chat.output -> a.input", "mcp.tools => a.tools"])
    run, _ = await run_graph(raw, payload="hi")
    assert run.status == "completed", run.error
    assert [t["function"]["name"] for t in fake_llm.requests[0]["tools"]] == ["shout"]


async def test_an_unknown_tool_in_the_filter_names_what_the_server_offers(fake_llm, tmp_path, declare):
    pid_file = tmp_path / "pid"
    raw = graph([("chat", "chat-start", {}), agent(), echo_server(declare, pid_file, tool_filter="add, multiply")],
                ["chat.output -> a.input", "mcp.tools => a.tools"])
    run, events = await run_graph(raw, payload="hi")
    assert run.status == "failed"
    [error] = of(events, "a", "error")
    assert "has no tool multiply; it offers: add, shout" in error.data["error"]
    assert fake_llm.requests == []
    assert await gone(pid_file)


async def test_a_declared_command_that_does_not_exist_is_a_node_error_naming_the_server(fake_llm, declare):
    declare(broken={"command": "/no/such/mcp-server", "args": ["--stdio"]})
    raw = graph([("chat", "chat-start", {}), agent(), ("mcp", "mcp-server", {"server": "broken"})],
                ["chat.output -> a.input", "mcp.tools => a.tools"])
    run, events = await run_graph(raw, payload="hi")
    assert run.status == "failed"
    [error] = of(events, "a", "error")
    assert error.data["error"].startswith("MCP server 'broken' failed to start: ")
    assert "No such file or directory" in error.data["error"]
    assert fake_llm.requests == [], "the agent must not run without its tools"


async def test_a_declared_server_that_exits_at_once_is_a_node_error(fake_llm, declare):
    declare(quits={"command": sys.executable, "args": ["-c", "raise SystemExit(3)"]})
    raw = graph([("chat", "chat-start", {}), agent(), ("mcp", "mcp-server", {"server": "quits"})],
                ["chat.output -> a.input", "mcp.tools => a.tools"])
    run, events = await run_graph(raw, payload="hi")
    assert run.status == "failed"
    [error] = of(events, "a", "error")
    assert error.data["error"] == ("MCP server 'quits' failed to start: "
                                   "the process exited before it answered (its error output is in the app's log)")


# A graph cannot start programs (issue 12) ---------------------------------------------------------------

async def test_a_command_written_in_a_graph_is_refused_and_never_started(fake_llm, tmp_path, declare):
    marker = tmp_path / "started"
    command = {"command": sys.executable, "args": [{"value": "-c"}, {"value": f"open({str(marker)!r}, 'w')"}]}
    declare(echo={"command": sys.executable, "args": [ECHO_SERVER]})
    raw = graph([("chat", "chat-start", {}), agent(), ("mcp", "mcp-server", {"server": "echo", **command})],
                ["chat.output -> a.input", "mcp.tools => a.tools"])
    raw["nodes"][2]["version"] = 2
    with pytest.raises(GraphInvalid, match="node 'MCP' \\(mcp-server\\) has no parameter 'command'"):
        await run_graph(raw, payload="hi")
    assert not marker.exists() and fake_llm.requests == []


async def test_an_old_graph_with_a_command_gets_a_clear_error_not_a_crash(fake_llm, tmp_path, declare):
    """A v1 MCP Server (command, args, env in the graph) migrates to v2: its command becomes a server name that
    the install does not declare, so the run fails naming the node, the command and how to declare a server."""
    marker = tmp_path / "started"
    declare(echo={"command": sys.executable, "args": [ECHO_SERVER]})
    raw = graph([("chat", "chat-start", {}), agent(),
                 ("mcp", "mcp-server", {"command": sys.executable, "env": [{"name": "X", "value": "1"}],
                                        "args": [{"value": "-c"}, {"value": f"open({str(marker)!r}, 'w')"}]})],
                ["chat.output -> a.input", "mcp.tools => a.tools"])
    raw["nodes"][2]["version"] = 1
    run, events = await run_graph(raw, payload="hi")
    assert run.status == "failed"
    [error] = of(events, "a", "error")
    assert error.data["error"].startswith(
        f"MCP Server 'MCP': {sys.executable!r} is not a stdio MCP server this install declares (declared: echo). "
        f"A graph cannot start programs: whoever runs NodeFlow declares stdio servers by name in the file "
        f"{SERVERS_ENV} points to")
    assert not marker.exists() and fake_llm.requests == []


async def test_without_declarations_the_error_says_how_to_declare(fake_llm, monkeypatch, tmp_path):
    monkeypatch.delenv(SERVERS_ENV, raising=False)
    raw = graph([("chat", "chat-start", {}), agent(), ("mcp", "mcp-server", {"server": ""})],
                ["chat.output -> a.input", "mcp.tools => a.tools"])
    run, events = await run_graph(raw, payload="hi")
    [error] = of(events, "a", "error")
    assert error.data["error"].startswith("MCP Server 'MCP': choose a declared server under Server. A graph cannot "
                                          "start programs")


async def test_an_mcp_url_to_an_internal_address_is_refused(fake_llm):
    raw = graph([("chat", "chat-start", {}), agent(),
                 ("mcp", "mcp-server", {"transport": "streamable-http", "url": "http://[::ffff:169.254.169.254]/mcp"})],
                ["chat.output -> a.input", "mcp.tools => a.tools"])
    run, events = await run_graph(raw, payload="hi")
    [error] = of(events, "a", "error")
    assert error.data["error"].startswith("MCP server at http://[::ffff:169.254.169.254]/mcp: refused ")
    assert "link-local address (169.254.169.254, embedded in ::ffff:a9fe:a9fe)" in error.data["error"]
    assert fake_llm.requests == []


async def test_a_url_that_does_not_parse_is_named(fake_llm):
    raw = graph([("chat", "chat-start", {}), agent(),
                 ("mcp", "mcp-server", {"transport": "streamable-http", "url": "http://[::1/mcp"})],
                ["chat.output -> a.input", "mcp.tools => a.tools"])
    run, events = await run_graph(raw, payload="hi")
    [error] = of(events, "a", "error")
    assert "MCP server at 'http://[::1/mcp': not a URL (" in error.data["error"] and fake_llm.requests == []


async def test_an_unreachable_url_is_a_node_error_naming_it(fake_llm, monkeypatch):
    monkeypatch.setenv("NODEFLOW_HTTP_ALLOWLIST", "127.0.0.1")
    raw = graph([("chat", "chat-start", {}), agent(),
                 ("mcp", "mcp-server", {"transport": "streamable-http", "url": "http://127.0.0.1:9/mcp"})],
                ["chat.output -> a.input", "mcp.tools => a.tools"])
    run, events = await run_graph(raw, payload="hi")
    assert run.status == "failed"
    [error] = of(events, "a", "error")
    assert error.data["error"].startswith("MCP server at http://127.0.0.1:9/mcp could not be reached: ")
    assert fake_llm.requests == []


@contextlib.contextmanager
def recording_server(seen: list) -> Iterator[int]:
    """An HTTP server on 127.0.0.1 that records each POST's Authorization header in `seen` and answers 500;
    yields its port."""
    class Recorder(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            seen.append(self.headers.get("Authorization"))
            self.send_response(500)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


async def test_a_name_that_resolves_to_an_internal_address_when_connecting_is_refused(fake_llm, monkeypatch):
    """The check before connecting saw a public address; the MCP SDK's own HTTP client resolves the name again
    when it connects (DNS rebinding) and that connection is refused too: nothing reaches the local server."""
    from nodeflow_app.net import guard

    answers = iter([["93.184.216.34"]])

    async def resolver(host: str, port: int) -> list[str]:
        return next(answers, ["127.0.0.1"])  # public for the check, loopback for the connection

    monkeypatch.setattr(guard, "system_resolver", resolver)
    monkeypatch.setenv("NODEFLOW_HTTP_ALLOWLIST", "")
    reached: list = []
    with recording_server(reached) as port:
        url = f"http://rebind.example:{port}/mcp"
        raw = graph([("chat", "chat-start", {}), agent(),
                     ("mcp", "mcp-server", {"transport": "streamable-http", "url": url})],
                    ["chat.output -> a.input", "mcp.tools => a.tools"])
        run, events = await run_graph(raw, payload="hi")
    assert run.status == "failed" and reached == []
    [error] = of(events, "a", "error")
    assert error.data["error"].startswith(f"MCP server at {url} could not be reached: ")
    assert "rebind.example is a loopback address (127.0.0.1)" in error.data["error"]


async def test_a_secret_header_reaches_the_mcp_url_decrypted(fake_llm, monkeypatch, tmp_path):
    """The graph holds the header sealed; the executor reveals it for the connection (and only there)."""
    from nodeflow_app.secret_values import seal_parameter

    monkeypatch.setenv("NODEFLOW_HTTP_ALLOWLIST", "127.0.0.1")
    seen: list[str | None] = []
    with recording_server(seen) as port:
        url = f"http://127.0.0.1:{port}/mcp"
        headers = seal_parameter(default_registry().definition("mcp-server").parameter("headers"),
                                 [{"name": "Authorization", "value": "Bearer tok-123456"}], {"url": url})
        raw = graph([("chat", "chat-start", {}), agent(),
                     ("mcp", "mcp-server", {"transport": "streamable-http", "url": url, "headers": headers})],
                    ["chat.output -> a.input", "mcp.tools => a.tools"])
        run, events = await run_graph(raw, payload="hi")
    assert run.status == "failed"
    assert seen and set(seen) == {"Bearer tok-123456"}
    [error] = of(events, "a", "error")
    assert "tok-123456" not in error.data["error"]

    # A pasted token's line break is dropped; one inside the value is refused by the header's name alone (the
    # MCP client's error quoted the value).
    for value, sent in (("Bearer tok-123456\n", {"Bearer tok-123456"}), ("Bearer tok\n123456", set())):
        seen.clear()
        with recording_server(seen) as port:
            url = f"http://127.0.0.1:{port}/mcp"
            headers = seal_parameter(default_registry().definition("mcp-server").parameter("headers"),
                                     [{"name": "Authorization", "value": value}], {"url": url})
            raw = graph([("chat", "chat-start", {}), agent(),
                         ("mcp", "mcp-server", {"transport": "streamable-http", "url": url, "headers": headers})],
                        ["chat.output -> a.input", "mcp.tools => a.tools"])
            run, events = await run_graph(raw, payload="hi")
        [error] = of(events, "a", "error")
        assert set(seen) == sent and "123456" not in error.data["error"], error.data["error"]
    assert "header 'Authorization': its value holds a line break" in error.data["error"]

    # Whoever may edit the graph points the URL elsewhere (here: another port, another origin): the header
    # sealed for the first origin is not revealed, and nothing is sent.
    seen.clear()
    with recording_server(seen) as other:
        raw["nodes"][-1]["data"]["url"] = f"http://127.0.0.1:{other}/mcp"
        run, events = await run_graph(raw, payload="hi")
    assert run.status == "failed" and seen == []
    [error] = of(events, "a", "error")
    assert (f"MCP Server 'MCP' header Authorization was entered for http://127.0.0.1:{port}, not for "
            f"http://127.0.0.1:{other}: a secret goes only to the address it was entered for; enter it again"
            ) in error.data["error"]
