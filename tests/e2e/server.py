"""One production NodeFlow server (`reflex run --env prod`, front end and backend on one port) per test session."""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
NODE_BINS = [ROOT / ".tools" / "node_modules" / "node" / "bin", ROOT / ".tools" / "node_modules" / ".bin"]
START_TIMEOUT_S = float(os.environ.get("NODEFLOW_E2E_START_TIMEOUT", "240"))


# The owner account every server started here creates at its first start (the headless-install path), and
# the session `signed_in_context` carries: tests and benchmarks reach pages as a signed-in person.
OWNER_EMAIL, OWNER_PASSWORD = "owner@example.org", "e2e owner password"


@dataclass(frozen=True)
class Server:
    url: str
    port: int
    log: Path
    data_dir: Path | None = None  # NODEFLOW_DATA_DIR of the server (its SQLite database is in there)
    database_url: str | None = None  # REFLEX_DB_URL when it is not that SQLite file (a PostgreSQL server)

    @property
    def db_url(self) -> str:
        return self.database_url or f"sqlite:///{self.data_dir / 'nodeflow.db'}"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def server_env(data_dir: Path | None = None) -> dict[str, str]:
    """The server's environment; with `data_dir`, its data folder and SQLite database live there."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([*(str(p) for p in NODE_BINS if p.is_dir()), str(VENV_BIN), env.get("PATH", "")])
    env.update({
        "REFLEX_USE_NPM": "1",
        "REFLEX_CHECK_LATEST_VERSION": "0",
        "REFLEX_HTTP_CLIENT_BIND_ADDRESS": "0.0.0.0",
        "AGNO_TELEMETRY": "false",
        "npm_config_prefer_offline": "true",
        "PYTHONUNBUFFERED": "1",
    })
    env.setdefault("NPM_CONFIG_REGISTRY", "https://registry.npmjs.org/")
    env.setdefault("NODEFLOW_ADMIN_EMAIL", OWNER_EMAIL)
    env.setdefault("NODEFLOW_ADMIN_PASSWORD", OWNER_PASSWORD)
    if data_dir is not None:
        env["NODEFLOW_DATA_DIR"] = str(data_dir)
        env["REFLEX_DB_URL"] = f"sqlite:///{data_dir / 'nodeflow.db'}"
    return env


def fresh_data_dir(artifacts: Path) -> Path:
    """An empty data folder for this session's server, so tests see only the graphs they made."""
    data_dir = artifacts / "e2e-data"
    shutil.rmtree(data_dir, ignore_errors=True)
    data_dir.mkdir(parents=True)
    return data_dir


def tail(path: Path, lines: int = 60) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no server log)"


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


def _ping(url: str) -> bool:
    return _answers(url.rstrip("/") + "/ping")


@contextlib.contextmanager
def _build_lock(artifacts: Path) -> Iterator[None]:
    """Serialises e2e servers of concurrent pytest sessions in this checkout: they share `.web/`."""
    with open(artifacts / "e2e.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=5)


@contextlib.contextmanager
def run_server(artifacts: Path, extra_env: dict[str, str] | None = None) -> Iterator[Server]:
    """Build and serve the app once; yield when both the page and the backend answer; kill the group after.

    `extra_env` adds to the server's environment (e.g. the fake LLM's base URL)."""
    artifacts.mkdir(parents=True, exist_ok=True)
    log_path = artifacts / "e2e-server.log"
    with _build_lock(artifacts):
        data_dir = fresh_data_dir(artifacts)  # under the lock: a concurrent session's server may be using it
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        started = time.monotonic()
        with open(log_path, "w") as log:
            process = subprocess.Popen(
                [str(VENV_BIN / "reflex"), "run", "--env", "prod",
                 "--frontend-port", str(port), "--backend-port", str(port), "--loglevel", "info"],
                cwd=ROOT, env={**server_env(data_dir), **(extra_env or {})}, stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True,
            )
        try:
            while not (_answers(url + "/") and _ping(url)):
                if process.poll() is not None:
                    raise RuntimeError(
                        f"NodeFlow server exited with {process.returncode} before answering; "
                        f"log {log_path}:\n{tail(log_path)}")
                if time.monotonic() - started > START_TIMEOUT_S:
                    raise RuntimeError(
                        f"NodeFlow server did not answer on {url} within {START_TIMEOUT_S:.0f} s; "
                        f"log {log_path}:\n{tail(log_path)}")
                time.sleep(0.25)
            print(f"\nNodeFlow e2e server up on {url} in {time.monotonic() - started:.1f} s (log {log_path})")
            database = (extra_env or {}).get("REFLEX_DB_URL")
            yield Server(url=url, port=port, log=log_path, data_dir=data_dir, database_url=database)
        finally:
            _stop(process)


def signed_in_context(browser, server: Server, email: str = OWNER_EMAIL, password: str = OWNER_PASSWORD,
                      **options):
    """A browser context carrying a session of `email`, made through the account store (as signing in does)."""
    from nodeflow_app.store.accounts import AccountStore

    accounts = AccountStore(server.db_url)
    try:
        token, _user = accounts.sign_in(email, password)
    finally:
        accounts.engine.dispose()
    context = browser.new_context(**{"viewport": {"width": 1440, "height": 900}, **options})
    context.add_cookies([{"name": "nf_session", "value": token, "url": server.url, "sameSite": "Strict"}])
    return context


def owner_graph(server: Server, name: str) -> str:
    """A new blank graph in the owner's workspace of `server`; its id."""
    from nodeflow_app.store.accounts import AccountStore
    from nodeflow_app.store.graphs import GraphStore
    from nodeflow_app.templates import BLANK, get_template

    accounts, graphs = AccountStore(server.db_url), GraphStore(server.db_url)
    try:
        return graphs.create(name, get_template(BLANK).new_graph(), workspace_id=accounts.owner_workspace_id()).id
    finally:
        accounts.engine.dispose()
        graphs.engine.dispose()
