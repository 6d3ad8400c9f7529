"""The real `make run` in Chromium: it stays up with the same backend process, and the page survives a restart.

`make run` runs in its own process group with a private data folder and its own Reflex web folder
(tests/.artifacts/make-run-web, seeded from .web and kept between sessions, so the build cache is
reused): the session's e2e server keeps serving its own build meanwhile. The port is fixed when free,
because the build cache is keyed by it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import psutil
import pytest
from playwright.sync_api import expect

from nodeflow_app.components.connection import BANNER_TESTID, RESTORED_TEXT
from nodeflow_app.store.graphs import GraphStore
from nodeflow_app.templates import BLANK, get_template

from .server import ROOT, _answers, _ping, server_env, tail

PREFERRED_PORT = 3917
START_TIMEOUT_S = 300
CANVAS = "window.__nodeflowCanvas"
STAMP = ROOT / ".venv" / ".nodeflow-installed"


@dataclass
class MakeRun:
    """One `make run` process group; `start()` again after `stop()` to restart it on the same port and data."""

    port: int
    env: dict[str, str]
    log: Path
    process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> float:
        """Start `make run PORT=...` and return the seconds until the page and the backend answer."""
        started = time.monotonic()
        # -o: the install step counts as done (the test session runs in an installed checkout; a shared
        # venv must not be reinstalled from here). Everything else is the user's `make run`.
        command = ["make", "-o", str(STAMP), "run", f"PORT={self.port}"]
        with open(self.log, "a") as log:
            self.process = subprocess.Popen(command, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, start_new_session=True)
        while not (_answers(self.url + "/") and _ping(self.url)):
            if self.process.poll() is not None:
                raise RuntimeError(f"make run exited with {self.process.returncode}; log {self.log}:\n{tail(self.log)}")
            if time.monotonic() - started > START_TIMEOUT_S:
                raise RuntimeError(f"make run did not answer within {START_TIMEOUT_S} s:\n{tail(self.log)}")
            time.sleep(0.1)
        return time.monotonic() - started

    def pids(self) -> set[int]:
        """Every process of the running `make run`: make, the server and its backend worker(s)."""
        root = psutil.Process(self.process.pid)
        return {root.pid, *(child.pid for child in root.children(recursive=True))}

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=5)


def _port() -> int:
    with socket.socket() as sock:
        # As servers do: a port whose last connections are in TIME_WAIT (a previous session) is free.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", PREFERRED_PORT))
        except OSError:
            sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _seed_web_dir(web: Path) -> None:
    """A private Reflex web folder, hard-linked from .web the first time (npm packages and all)."""
    source = ROOT / ".web"
    if (web / "node_modules").is_dir() or not (source / "node_modules").is_dir():
        return
    shutil.rmtree(web, ignore_errors=True)

    def link(src: str, dst: str) -> None:
        try:
            os.link(src, dst)
        except OSError:
            shutil.copy2(src, dst)

    def top_level_build(folder: str, names: list[str]) -> list[str]:
        return ["build"] if Path(folder) == source else []  # packages have build/ folders of their own

    shutil.copytree(source, web, symlinks=True, copy_function=link, ignore=top_level_build)


@pytest.fixture(scope="module")
def make_run(artifacts_dir: Path) -> Iterator[MakeRun]:
    web, data = artifacts_dir / "make-run-web", artifacts_dir / "make-run-data"
    _seed_web_dir(web)
    shutil.rmtree(data, ignore_errors=True)
    data.mkdir(parents=True)
    env = {**server_env(data), "REFLEX_WEB_WORKDIR": str(web)}
    for headless_owner in ("NODEFLOW_ADMIN_EMAIL", "NODEFLOW_ADMIN_PASSWORD"):
        env.pop(headless_owner)  # a fresh install as a newcomer has it: the first visit makes the owner
    server = MakeRun(port=_port(), env=env, log=artifacts_dir / "make-run.log")
    server.log.write_text("")
    print(f"\nmake run up on {server.url} in {server.start():.1f} s (log {server.log})")
    yield server
    server.stop()


@pytest.fixture
def store(make_run: MakeRun):
    graphs = GraphStore(f"sqlite:///{Path(make_run.env['NODEFLOW_DATA_DIR']) / 'nodeflow.db'}")
    yield graphs
    graphs.engine.dispose()


OWNER = {"name": "Newcomer", "email": "newcomer@example.org", "password": "first visit password"}


@pytest.fixture
def page(browser, make_run: MakeRun):
    """A fresh browser; once the owner exists (the first test makes it through the page), signed in."""
    from nodeflow_app.store.accounts import AccountStore

    context = browser.new_context(viewport={"width": 1440, "height": 900})
    accounts = AccountStore(f"sqlite:///{Path(make_run.env['NODEFLOW_DATA_DIR']) / 'nodeflow.db'}")
    if accounts.has_users():
        token, _ = accounts.sign_in(OWNER["email"], OWNER["password"])
        context.add_cookies([{"name": "nf_session", "value": token, "url": make_run.url}])
    accounts.engine.dispose()
    page = context.new_page()
    page.set_default_timeout(20_000)
    yield page
    context.close()


def wait_canvas(page, nodes: int) -> None:
    page.wait_for_function(f"{CANVAS} && {CANVAS}.rev() > 0 && {CANVAS}.nodeCount() === {nodes}")


def test_make_run_stays_up_and_keeps_what_was_made(page, make_run, store):
    # The first visit of a fresh install asks for the owner account.
    page.goto(make_run.url + "/")
    page.wait_for_url("**/setup")
    for field in ("name", "email", "password"):
        page.get_by_test_id(f"auth-{field}").fill(OWNER[field])
    page.get_by_test_id("auth-confirm").fill(OWNER["password"])
    page.get_by_test_id("auth-submit").click()
    # Signing in ends with a full page load (the session cookie is set by an HTTP route): the graph list's
    # prerendered buttons show before the page is live, so wait for the account's name, which only the server
    # fills in, as a person waits for the page to be ready.
    expect(page.get_by_test_id("user-menu")).to_contain_text(OWNER["name"])
    expect(page).to_have_url(make_run.url + "/")  # the address bar says where they are, not /setup
    # A graph and a node, made through the page.
    page.get_by_test_id("new-graph").click()
    page.get_by_test_id("template-blank").click()
    page.wait_for_url("**/graph/*")
    graph_id = page.url.rsplit("/", 1)[1]
    wait_canvas(page, 1)
    page.get_by_test_id("palette-node-prompt-template").click()
    wait_canvas(page, 2)
    expect(page.get_by_test_id("save-status")).to_contain_text("Saved", timeout=10_000)
    processes = make_run.pids()
    assert len(processes) >= 3, "make, the server and its backend worker"

    page.wait_for_timeout(10_000)
    page.reload()
    wait_canvas(page, 2)
    expect(page.get_by_test_id("node-Prompt Template")).to_be_visible()
    assert len(store.get(graph_id).graph["nodes"]) == 2
    assert make_run.pids() == processes, "a process of make run was restarted"
    assert make_run.log.read_text().count("NodeFlow running at") == 1


def test_the_page_says_when_the_server_is_gone_and_sends_edits_made_meanwhile(page, make_run, store):
    graph_id = store.create("Offline edits", get_template(BLANK).new_graph()).id
    page.goto(f"{make_run.url}/graph/{graph_id}")
    wait_canvas(page, 1)
    expect(page.get_by_test_id(BANNER_TESTID)).to_have_count(0)

    make_run.stop()
    expect(page.get_by_test_id(BANNER_TESTID)).to_be_visible(timeout=15_000)
    expect(page.get_by_test_id(BANNER_TESTID)).to_contain_text("edits are kept")
    page.get_by_test_id("palette-node-prompt-template").click()  # queued by the page while the server is down
    page.wait_for_timeout(500)
    assert len(store.get(graph_id).graph["nodes"]) == 1

    restart = make_run.start()
    print(f"\nmake run restarted in {restart:.1f} s (cached build)")
    expect(page.get_by_test_id(BANNER_TESTID)).to_have_count(0, timeout=20_000)
    expect(page.get_by_text(RESTORED_TEXT)).to_be_visible()
    wait_canvas(page, 2)
    deadline = time.monotonic() + 10
    while len(store.get(graph_id).graph["nodes"]) != 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert len(store.get(graph_id).graph["nodes"]) == 2, "the edit made while the server was down was not saved"
    assert restart < 15, f"a restart with an unchanged front end took {restart:.1f} s (the build cache missed)"


def test_after_a_restart_the_inspector_shows_the_selected_node_again(page, make_run, store):
    """The restarted server's fresh state reloads the graph, which started the tab's inspector empty while the
    canvas still showed the node selected."""
    graph_id = store.create("Selected through a restart", get_template(BLANK).new_graph()).id
    page.goto(f"{make_run.url}/graph/{graph_id}")
    wait_canvas(page, 1)
    page.locator(".react-flow__node .nf-header").first.click()
    form = page.locator("[data-testid^='inspector-form-']")
    expect(form).to_be_visible()
    worker = page.get_by_test_id("worker")
    before = worker.get_attribute("data-pid")

    make_run.stop()
    expect(page.get_by_test_id(BANNER_TESTID)).to_be_visible(timeout=15_000)
    make_run.start()
    # The new backend process loaded the graph for this tab (its pid comes with the load).
    page.wait_for_function("old => { const pid = document.querySelector('[data-testid=\"worker\"]')?.dataset.pid;"
                           " return pid && pid !== old; }", arg=before, timeout=30_000)
    wait_canvas(page, 1)
    expect(form).to_be_visible()
    expect(page.locator(".react-flow__node.selected")).to_have_count(1)


def test_edits_of_the_last_seconds_before_a_stop_are_saved(page, make_run, store):
    """A tab whose autosave never goes out (dropped on its way) edits, and the server is stopped before the room's
    own autosave (SERVER_AUTOSAVE_S after the edit) was due: the server saves the edit as it stops."""
    from .test_coedit import GRAPH, _route_events, commit

    graph_id = store.create("Stopped at once", GRAPH).id
    _route_events(page, dropped=("editor_state.save", "editor_state.leave_room"))
    page.goto(f"{make_run.url}/graph/{graph_id}")
    wait_canvas(page, 3)
    edits = page.evaluate(f"{CANVAS}.lastSeq()")
    commit(page, "inline-Check-value", "typed just before the stop")
    page.wait_for_function(f"{CANVAS}.lastSeq() > {edits}")  # the room has it
    processes = [psutil.Process(pid) for pid in make_run.pids()]

    make_run.stop()
    _, alive = psutil.wait_procs(processes, timeout=20)  # make may exit before the server's worker is done
    values = {n["name"]: n.get("data", {}).get("value") for n in store.get(graph_id).graph["nodes"]}
    make_run.start()  # for the tests after this one
    assert not alive, f"still running after the stop: {alive}"
    assert values["Check"] == "typed just before the stop", "the edit was lost with the server"


def test_the_http_api_answers_on_the_same_port(make_run):
    """`make run` serves the API (nodeflow_app/api) beside the pages: it asks for a token and shows its schema."""
    refused = httpx.get(make_run.url + "/api/v1/graphs", timeout=10)
    assert (refused.status_code, refused.headers["content-type"]) == (401, "application/json")
    assert httpx.get(make_run.url + "/api/v1/openapi.json", timeout=10).json()["info"]["title"] == "NodeFlow API"
