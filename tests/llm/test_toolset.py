"""nodes/tools/toolset: what its link delivers, its own tools (calculator, current_datetime, http_get), and an
agent calling one of them through real Agno and real HTTP against the fake OpenAI server."""

from __future__ import annotations

import asyncio
import threading
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Iterator
from zoneinfo import ZoneInfo

import pytest

from nodes._registry import default_registry
from nodeflow_app.contract import FlowContext, NodeError
from nodes.tools.toolset import builtin
from nodeflow_app.net.guard import ALLOWLIST_ENV
from nodes.tools.toolset.builtin import calculator, current_datetime, http_get
from nodes.tools.toolset.definition import definition
from nodes.tools.toolset.executor import CATALOG, executor
from tests.llm.fake_openai import text, tool_call
from tests.llm.graphs import MODEL, graph, of, run_graph


def materialize(tools) -> list:
    ctx = FlowContext(node_id="kit", node_type="toolset", run_id="r", runtime=None)  # materialize needs no runtime
    return asyncio.run(executor.materialize({"tool_names": tools}, "tools", ctx))


# 1. The node ------------------------------------------------------------------------------------------

def test_the_options_are_the_catalog():
    assert [o.value for o in definition.parameter("tool_names").options] == list(CATALOG)
    assert default_registry().nodes["toolset"].definition is definition


def test_materialize_returns_the_chosen_tools_in_order():
    from agno.tools.calculator import CalculatorTools
    from agno.tools.reasoning import ReasoningTools

    tools = materialize(["http_get", "calculator", "agno-calculator", "agno-reasoning", "calculator"])
    assert tools[:2] == [http_get, calculator]
    assert isinstance(tools[2], CalculatorTools) and isinstance(tools[3], ReasoningTools) and len(tools) == 4
    assert materialize(list(definition.defaults()["tool_names"])) == [calculator, current_datetime]


def test_agnos_calculator_refuses_what_would_stall_the_event_loop():
    """Its tools run on the server's event loop: factorial(10**7) or is_prime(10**18) would stall every run."""
    import json
    import time

    [toolkit] = materialize(["agno-calculator"])
    functions = toolkit.get_functions() if hasattr(toolkit, "get_functions") else toolkit.functions
    factorial, is_prime = functions["factorial"].entrypoint, functions["is_prime"].entrypoint
    started = time.perf_counter()
    assert json.loads(factorial(n=10**7)) == {"operation": "factorial", "error": "n must be at most 1,500"}
    assert len(str(json.loads(factorial(n=1_500))["result"])) > 4000  # the largest one still fits in JSON
    assert json.loads(is_prime(n=10**18 + 9)) == {"operation": "prime_check", "error": "n must be at most 1,000,000,000,000"}
    assert time.perf_counter() - started < 1
    assert json.loads(factorial(n=5))["result"] == 120 and json.loads(is_prime(n=97))["result"] is True
    assert "Calculate the factorial" in factorial.__doc__  # what the model is told, as Agno wrote it


@pytest.mark.parametrize("tools, message", [
    ([], "choose at least one tool"),
    (None, "choose at least one tool"),
    (["calculator", "shell"], "unknown tool 'shell'; choose from: calculator, current_datetime"),
])
def test_materialize_refuses_a_bad_choice(tools, message):
    with pytest.raises(NodeError, match=message):
        materialize(tools)


# 2. calculator -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("expression, result", [
    ("6*7", "42"), ("(2 + 3) * 4 ** 2", "80"), ("7 / 2", "3.5"), ("6 / 3", "2"), ("-3 % 5", "2"),
    ("10 // 3", "3"), ("2 ** -1", "0.5"), ("1.5e3 + 1", "1501"), ("1/3", "0.3333333333333333"),
])
def test_calculator(expression, result):
    assert calculator(expression) == result


@pytest.mark.parametrize("expression, message", [
    ("__import__('os')", "only numbers"),
    ("__import__('os').system('true')", "only numbers"),
    ("(1).__class__", "only numbers"),
    ("x + 1", "only numbers"),
    ("'a' * 3", "only numbers"),
    ("True + 1", "only numbers"),
    ("1 << 8", "only numbers"),
    ("1/0", "division by zero"),
    ("9 ** 9 ** 9", "too large"),
    ("1e308 * 10", "too large"),
    ("(-8) ** 0.5", "not a real number"),
    ("-" * 990 + "1", "nested too deeply"),
    ("2 +", "not an arithmetic expression"),
    ("1" * 1001, "longer than 1000 characters"),
])
def test_calculator_refuses(expression, message):
    with pytest.raises(ValueError, match=message):
        calculator(expression)


# 3. current_datetime --------------------------------------------------------------------------------------

def test_current_datetime():
    stamp, rest = current_datetime().split(" ", 1)
    now = datetime.fromisoformat(stamp)
    assert now.utcoffset() == timedelta(0) and abs(datetime.now(timezone.utc) - now) < timedelta(seconds=5)
    assert rest == f"({now.strftime('%A')}, UTC)"
    paris = datetime.fromisoformat(current_datetime("Europe/Paris").split(" ")[0])
    assert paris.utcoffset() == datetime.now(ZoneInfo("Europe/Paris")).utcoffset()
    with pytest.raises(ValueError, match="unknown time zone 'Mars/Olympus'"):
        current_datetime("Mars/Olympus")


# 4. http_get ----------------------------------------------------------------------------------------------

class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        port = self.server.server_address[1]
        routes = {
            "/hello": (200, "text/plain; charset=utf-8", "héllo from the test server".encode()),
            "/big": (200, "text/plain", b"x" * (100 * 1024)),
            "/image": (200, "image/png", b"\x89PNG\r\n\x1a\n"),
            "/missing": (404, "text/plain", b"no such page"),
        }
        if self.path == "/redirect-internal":
            self.send_response(302)
            self.send_header("Location", f"http://127.0.0.2:{port}/hello")
            self.end_headers()
            return
        if self.path == "/redirect-ok":
            self.send_response(301)
            self.send_header("Location", "/hello")
            self.end_headers()
            return
        status, kind, body = routes.get(self.path, routes["/missing"])
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    """A real HTTP server on 127.0.0.1 (a loopback address http_get refuses unless allowlisted)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("url, kind", [
    ("http://127.0.0.1/", "loopback"), ("http://localhost:8000/x", "loopback"), ("http://[::1]/", "loopback"),
    ("http://[::ffff:127.0.0.1]/", "loopback"), ("http://10.1.2.3/", "private"), ("http://192.168.0.1/", "private"),
    ("http://169.254.169.254/latest/meta-data", "link-local"), ("http://0.0.0.0/", "unspecified"),
])
async def test_http_get_refuses_internal_addresses(url, kind, monkeypatch):
    monkeypatch.delenv(ALLOWLIST_ENV, raising=False)
    with pytest.raises(ValueError, match=f"is a {kind} address .*unless NODEFLOW_HTTP_ALLOWLIST lists the host"):
        await http_get(url)


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://example.com/", "http:///path"])
async def test_http_get_refuses_other_schemes(url):
    with pytest.raises(ValueError, match="only http:// and https:// URLs"):
        await http_get(url)


async def test_http_get_refuses_the_test_server_until_allowlisted(site, monkeypatch):
    monkeypatch.delenv(ALLOWLIST_ENV, raising=False)
    with pytest.raises(ValueError, match="loopback"):
        await http_get(f"{site}/hello")
    monkeypatch.setenv(ALLOWLIST_ENV, "example.org, 127.0.0.1")
    assert await http_get(f"{site}/hello") == (
        "HTTP 200 OK\ncontent-type: text/plain; charset=utf-8\n\nhéllo from the test server")
    assert (await http_get(f"{site}/missing")).startswith("HTTP 404 Not Found\n")
    assert await http_get(f"{site}/redirect-ok") == await http_get(f"{site}/hello")


async def test_http_get_allowlists_networks_too(site, monkeypatch):
    monkeypatch.setenv(ALLOWLIST_ENV, "127.0.0.0/8")
    assert (await http_get(f"{site}/hello")).startswith("HTTP 200 OK")


async def test_http_get_checks_every_redirect(site, monkeypatch):
    monkeypatch.setenv(ALLOWLIST_ENV, "127.0.0.1")
    with pytest.raises(ValueError, match=r"refused http://127\.0\.0\.2:\d+/hello: 127\.0\.0\.2 is a loopback"):
        await http_get(f"{site}/redirect-internal")


async def test_http_get_limits_size_and_skips_binary(site, monkeypatch):
    monkeypatch.setenv(ALLOWLIST_ENV, "127.0.0.1")
    big = await http_get(f"{site}/big")
    assert big.endswith("x" * 10 + "\n[truncated at 32 KB]")
    assert big.split("\n\n", 1)[1].count("x") == builtin.MAX_TEXT_BYTES
    assert (await http_get(f"{site}/image")).endswith("\n\n[image/png content not shown]")


async def test_http_get_reports_a_connection_failure(monkeypatch):
    monkeypatch.setenv(ALLOWLIST_ENV, "127.0.0.1")
    with pytest.raises(ValueError, match=r"GET http://127\.0\.0\.1:9/ failed"):
        await http_get("http://127.0.0.1:9/")


# 5. An agent using the toolset ------------------------------------------------------------------------------

#  Chat Start --> Agent      (Toolset[calculator] ==tools==> Agent.tools)
async def test_an_agent_calls_the_calculator_from_a_toolset(fake_llm):
    fake_llm.script(tool_call("calculator", {"expression": "6*7"}), text(["It", " is", " 42"]))
    raw = graph([("chat", "chat-start", {}), ("a", "agent", {"model": MODEL}),
                 ("kit", "toolset", {"tool_names": ["calculator"]})],
                ["chat.output -> a.input", "kit.tools => a.tools"])
    run, events = await run_graph(raw, payload="What is 6 times 7?")
    assert run.status == "completed", run.error
    [completed] = of(events, "a", "tool_call_completed")
    assert (completed.data["name"], completed.data["result"], completed.data["error"]) == ("calculator", "42", None)
    assert run.outputs_by_name()["A"]["output"]["response"] == "It is 42"
    [offered] = fake_llm.requests[0]["tools"]
    assert offered["function"]["name"] == "calculator"
    assert offered["function"]["description"].startswith("Evaluate an arithmetic expression")
    assert fake_llm.requests[1]["messages"][-1]["content"] == "42"
    assert of(events, "kit", "started") == []  # a toolset only materializes; it never runs as a step
