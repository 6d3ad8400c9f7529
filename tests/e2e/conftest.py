"""E2E fixtures: one NodeFlow server per session, one headless Debian Chromium per session, a page per test."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from nodeflow_app.llm import providers
from tests.llm.fake_openai import FakeOpenAI, FakeServer

from .server import OWNER_EMAIL, OWNER_PASSWORD, Server, run_server, signed_in_context, tail  # noqa: F401

CHROMIUM = os.environ.get("NODEFLOW_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run",
]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark browser tests `e2e` and run them last (stable order otherwise); tests marked `own_server` (a second
    server, e.g. on PostgreSQL) run at the very end: building it rewrites `.web` with its own port, which the
    session's server's pages would then use."""
    here = Path(__file__).parent
    is_e2e = {id(item): here in Path(str(item.fspath)).parents for item in items}
    for item in items:
        if is_e2e[id(item)]:
            item.add_marker(pytest.mark.e2e)
    items.sort(key=lambda item: (is_e2e[id(item)], item.get_closest_marker("own_server") is not None))


@pytest.fixture(scope="session")
def e2e_fake_server() -> Iterator[FakeServer]:
    """The fake OpenAI-compatible server the NodeFlow server's `openai-compatible:*` models talk to."""
    server = FakeServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def nodeflow_server(artifacts_dir: Path, e2e_fake_server: FakeServer) -> Iterator[Server]:
    env = {providers.COMPATIBLE_BASE_URL_ENV: e2e_fake_server.fake.base_url, providers.MAX_RETRIES_ENV: "0"}
    with run_server(artifacts_dir, env) as server:  # its owner is OWNER_EMAIL (server.server_env)
        yield server


@pytest.fixture
def fake_llm(e2e_fake_server: FakeServer) -> Iterator[FakeOpenAI]:
    """The fake LLM with an empty script (it echoes the last user message); script replies per test."""
    fake = e2e_fake_server.fake
    fake.reset()
    yield fake
    fake.reset()


# Module scope, not session: Playwright's sync API keeps an asyncio loop running in this thread
# while it is open, which breaks every asyncio test that runs after it in the same session.
@pytest.fixture(scope="module")
def browser() -> Iterator["object"]:
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"Chromium not found at {CHROMIUM} (make test installs Debian's chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser, nodeflow_server: Server, request: pytest.FixtureRequest) -> Iterator["object"]:
    """A page signed in as the install's owner."""
    context = signed_in_context(browser, nodeflow_server)
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        print(f"\n--- server log tail ({nodeflow_server.log}) ---\n{tail(nodeflow_server.log)}")
    context.close()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    if report.when == "call":
        item.rep_call = report
    return report
