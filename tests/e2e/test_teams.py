"""Teams in Chromium with separate browser contexts: the owner makes a team workspace and invites a viewer by
link; the viewer signs up through the link, sees the team with the role viewer, and the server refuses an
edit they try; an invitation link works once; an outsider is not a member and never sees the team.

The four-context test (owner, editor, viewer, outsider) runs on SQLite (the session's server), on the real
PostgreSQL (a server of its own on a fresh database, started for this module only) and on PostgreSQL with
Redis and two backend workers (the team setup of SPEC 11); it also covers the team's
credentials: the owner stores the team's provider key and a connection, the viewer's chat run uses that key,
and no key reaches any browser."""

from __future__ import annotations

import contextlib
import re
import uuid
from collections.abc import Iterator

import httpx
import pytest
from playwright.sync_api import expect

from nodeflow_app.llm import providers
from nodeflow_app.store.accounts import AccountStore
from nodeflow_app.store.graphs import GraphStore
from tests.llm.fake_openai import text
from tests.llm.graphs import refund_desk
from tests.redis_server import redis_database
from tests.store.postgres import POSTGRES_URL

from .server import OWNER_EMAIL, ROOT, Server, run_server, signed_in_context, tail
from .test_chat import LAYOUT, expect_answer_status, laid_out, last_answer, send

REDIS_URL = redis_database(3)
TEAM_KEY = "sk-team-acme-key-7319"
CONNECTION_TOKEN = "crm-token-e2e-5521"


@contextlib.contextmanager
def postgres_database() -> Iterator[str]:
    """A fresh database on the machines' PostgreSQL (dropped afterwards); fails, never skips."""
    from sqlalchemy import create_engine, make_url, text as sql

    name = f"nodeflow_e2e_{uuid.uuid4().hex[:10]}"
    admin = create_engine(POSTGRES_URL, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(sql(f'CREATE DATABASE "{name}"'))
    except Exception as error:  # noqa: BLE001 - the team configuration is tested for real, never skipped
        admin.dispose()
        pytest.fail(f"PostgreSQL not reachable at {POSTGRES_URL}: {error}")
    try:
        yield make_url(POSTGRES_URL).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgresql", marks=pytest.mark.own_server),
                                        pytest.param("postgresql-redis", marks=pytest.mark.own_server)])
def team_server(request, artifacts_dir, e2e_fake_server) -> Iterator[Server]:
    """The session's SQLite server, or a server of this module's own on a fresh PostgreSQL database (its tests
    run after every other e2e test: see conftest.py); `postgresql-redis` is the team setup: Reflex's state in
    Redis and two backend workers."""
    if request.param == "sqlite":
        yield request.getfixturevalue("nodeflow_server")
        return
    with postgres_database() as url:
        env = {providers.COMPATIBLE_BASE_URL_ENV: e2e_fake_server.fake.base_url, providers.MAX_RETRIES_ENV: "0",
               "REFLEX_DB_URL": url}
        if request.param == "postgresql-redis":
            env.update({"REFLEX_REDIS_URL": REDIS_URL, "GRANIAN_WORKERS": "2"})
        with run_server(artifacts_dir / request.param, env) as server:
            yield server


def test_invite_a_viewer_who_can_look_but_not_edit(browser, nodeflow_server):
    owner_context = signed_in_context(browser, nodeflow_server)
    owner = owner_context.new_page()
    owner.goto(f"{nodeflow_server.url}/workspace")
    expect(owner.get_by_test_id("workspace-title")).to_have_text(re.compile("'s workspace$"))  # the personal one
    expect(owner.get_by_test_id(f"member-{OWNER_EMAIL}")).to_be_visible()
    # Nobody can be removed from (or demoted in) their personal workspace: the page offers neither.
    expect(owner.get_by_test_id(f"remove-{OWNER_EMAIL}")).to_have_count(0)
    expect(owner.get_by_test_id(f"role-{OWNER_EMAIL}")).to_have_count(0)
    owner.get_by_test_id("team-name").fill("Support team")
    owner.get_by_test_id("team-create").click()
    expect(owner.get_by_test_id("user-menu")).to_contain_text("Support team", timeout=15_000)
    owner.goto(f"{nodeflow_server.url}/workspace")
    expect(owner.get_by_test_id("workspace-title")).to_have_text("Support team")
    owner.get_by_test_id("invite-create").click()  # viewer, 7 days
    link = owner.get_by_test_id("invite-link").inner_text()
    assert re.search(r"/invite/[\w-]{20,}$", link), link

    guest_context = browser.new_context(viewport={"width": 1280, "height": 800})
    guest = guest_context.new_page()
    guest.goto(f"{nodeflow_server.url}/invite/{link.rsplit('/', 1)[1]}")
    expect(guest.get_by_test_id("invite-title")).to_have_text("Join Support team")
    guest.get_by_test_id("invite-name").fill("Vic Viewer")
    guest.get_by_test_id("invite-email").fill("vic@example.org")
    guest.get_by_test_id("invite-password").fill("viewer password")
    guest.get_by_test_id("invite-accept").click()
    expect(guest.get_by_test_id("user-menu")).to_contain_text("Support team", timeout=15_000)
    expect(guest).to_have_url(f"{nodeflow_server.url}/")  # the address bar says where they are

    guest.get_by_test_id("new-graph").click()  # a viewer may look, not create: the server refuses
    expect(guest.get_by_text("Not allowed: a viewer cannot do this")).to_be_visible()
    guest.goto(f"{nodeflow_server.url}/workspace")
    expect(guest.get_by_test_id("members")).to_contain_text("vic@example.org")
    expect(guest.get_by_test_id("invite-create")).to_have_count(0)  # owners only
    expect(guest.get_by_test_id("members-tokens")).to_have_count(0)

    # The viewer makes an API token on the page (shown once); the owner sees it among the members' tokens and
    # revokes it, which cuts the API off for it at once.
    guest.get_by_test_id("token-name").fill("vic-ci")
    guest.get_by_test_id("token-create").click()
    raw_token = guest.get_by_test_id("token-value").inner_text()
    expect(guest.get_by_test_id("token-vic-ci")).to_contain_text("never")  # not used yet
    api = f"{nodeflow_server.url}/api/v1/graphs"
    assert httpx.get(api, headers={"Authorization": f"Bearer {raw_token}"}).status_code == 200
    owner.goto(f"{nodeflow_server.url}/workspace")
    expect(owner.get_by_test_id("members-tokens")).to_be_visible()
    row = owner.get_by_test_id("member-token-vic-ci")
    expect(row).to_contain_text("Vic Viewer")
    row.get_by_test_id("revoke-member-token").click()
    expect(row).to_contain_text("revoked")
    assert httpx.get(api, headers={"Authorization": f"Bearer {raw_token}"}).status_code == 401

    # The link was single use.
    third = browser.new_context().new_page()
    third.goto(f"{nodeflow_server.url}/invite/{link.rsplit('/', 1)[1]}")
    expect(third.get_by_test_id("invite-error")).to_contain_text("not valid any more")
    expect(third.get_by_test_id("invite-email")).to_have_count(0)  # and offers no sign-up

    # The owner sees the new member and can make them an editor; then creating a graph works for them.
    owner.goto(f"{nodeflow_server.url}/workspace")
    expect(owner.get_by_test_id("remove-vic@example.org")).to_be_visible()  # a team's members can be removed
    owner.get_by_test_id("role-vic@example.org").click()
    owner.get_by_role("option", name="editor").click()
    guest.goto(f"{nodeflow_server.url}/")
    guest.get_by_test_id("new-graph").click()
    guest.get_by_test_id("template-blank").click()
    expect(guest).to_have_url(re.compile(r"/graph/\w+$"), timeout=15_000)
    for context in (owner_context, guest_context, third.context):
        context.close()


def _invite(owner, server, role: str, previous: str = "") -> str:
    """A new invitation link's code; `previous`: the last one made, which a page restored from Redis may still
    show for a moment."""
    owner.goto(f"{server.url}/workspace")
    owner.get_by_test_id("invite-role").click()
    owner.get_by_role("option", name=role).click()
    owner.get_by_test_id("invite-create").click()
    link = owner.get_by_test_id("invite-link")
    expect(link).to_have_text(re.compile(r"/invite/[\w-]{20,}$"))
    if previous:
        expect(link).not_to_have_text(re.compile(re.escape(previous) + "$"))
    return link.inner_text().rsplit("/", 1)[1]


def _toolbar_fits(page) -> None:
    """At 1440 px the editor's toolbar squeezed the graph's name to ~30 px (a viewer's to nothing) and pushed
    Chat past the window's edge."""
    name, chat = page.get_by_test_id("graph-name").bounding_box(), page.get_by_test_id("toggle-chat").bounding_box()
    assert name["width"] >= 150, name
    assert chat["x"] + chat["width"] <= page.viewport_size["width"], (chat, page.viewport_size)


def _join(browser, server, code: str, name: str, email: str):
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.goto(f"{server.url}/invite/{code}")
    page.get_by_test_id("invite-name").fill(name)
    page.get_by_test_id("invite-email").fill(email)
    page.get_by_test_id("invite-password").fill(f"{name} password")
    page.get_by_test_id("invite-accept").click()
    expect(page.get_by_test_id("user-menu")).to_contain_text("Acme", timeout=15_000)
    return context, page


def _record_frames(page, frames: list[str]) -> None:
    page.on("websocket", lambda ws: ws.on("framereceived", lambda payload: frames.append(str(payload))))


def _team_workspace(server: Server, name: str) -> str:
    accounts = AccountStore(server.db_url)
    try:
        owner = accounts.user_by_email(OWNER_EMAIL)
        return next(w.id for w in accounts.workspaces(owner.id) if w.name == name)
    finally:
        accounts.engine.dispose()


def _store_team_credentials(owner, server: Server, screenshot: bool) -> None:
    """The owner stores the team's provider key and a connection on the team's credentials page."""
    owner.goto(f"{server.url}/")
    owner.get_by_test_id("settings-link").click()
    owner.wait_for_url("**/workspace/credentials")
    expect(owner.get_by_test_id("settings-title")).to_have_text("Credentials of Acme")
    owner.get_by_test_id("api-key-openai-compatible").fill(TEAM_KEY)
    owner.get_by_test_id("save-openai-compatible").click()
    expect(owner.get_by_test_id("key-openai-compatible")).to_have_text("Key: set ••••7319 (stored)")
    owner.get_by_test_id("connection-name").fill("crm")
    owner.get_by_test_id("connection-fields").fill(f"token={CONNECTION_TOKEN}\nhosts=crm.example.com")
    owner.get_by_test_id("connection-save").click()
    row = owner.get_by_test_id("connection-crm")
    expect(row).to_contain_text("http_bearer")
    expect(row).to_contain_text("hosts, token (sent only to crm.example.com)")
    owner.get_by_test_id("connection-check-crm").click()
    expect(owner.get_by_test_id("connection-test-crm")).to_contain_text(
        "the http_bearer connection is complete and goes only to crm.example.com")
    expect(owner.get_by_test_id("install-settings")).to_contain_text(providers.COMPATIBLE_BASE_URL_ENV)  # admin
    if screenshot:
        owner.get_by_test_id("connections").scroll_into_view_if_needed()
        owner.screenshot(path=str(ROOT / "docs" / "screenshot-credentials.png"))  # the README's picture


def test_owner_editor_viewer_and_outsider_on_one_team_graph(browser, team_server, fake_llm):
    server = team_server
    owner_context = signed_in_context(browser, server)
    owner = owner_context.new_page()
    owner_frames: list[str] = []
    _record_frames(owner, owner_frames)
    owner.goto(f"{server.url}/workspace")
    owner.get_by_test_id("team-name").fill("Acme")
    owner.get_by_test_id("team-create").click()
    expect(owner.get_by_test_id("user-menu")).to_contain_text("Acme", timeout=15_000)
    owner.get_by_test_id("new-graph").click()
    owner.get_by_test_id("template-blank").click()
    owner.wait_for_url("**/graph/*")
    graph_url = owner.url
    owner.wait_for_function("window.__nodeflowCanvas && window.__nodeflowCanvas.nodeCount() === 1")
    expect(owner.get_by_test_id("graph-name")).to_have_value("Untitled graph")  # loaded: typing now sticks
    owner.get_by_test_id("graph-name").fill("Acme desk")
    owner.get_by_test_id("graph-name").press("Enter")
    graphs = GraphStore(server.db_url)
    graph_id = graph_url.rsplit("/", 1)[1]
    for _ in range(50):  # the rename is saved before the owner leaves the page
        if graphs.get(graph_id).name == "Acme desk":
            break
        owner.wait_for_timeout(200)
    assert graphs.get(graph_id).name == "Acme desk"
    desk = graphs.create(  # the team's chat graph, as an import would store it
        "Refund desk", laid_out(refund_desk(), LAYOUT), workspace_id=_team_workspace(server, "Acme"))
    graphs.engine.dispose()
    _store_team_credentials(owner, server, screenshot=server.database_url is None)
    editor_code = _invite(owner, server, "editor")
    viewer_code = _invite(owner, server, "viewer", previous=editor_code)
    if server.database_url is None:
        owner.screenshot(path=str(ROOT / "docs" / "screenshot-workspace.png"))  # the README's picture of a team

    # The editor sees the team's graph and changes it; the team's credentials are not theirs to see.
    editor_context, editor = _join(browser, server, editor_code, "Eddie", "eddie@example.org")
    expect(editor.get_by_test_id("graph-row-Acme desk")).to_be_visible()
    expect(editor.get_by_test_id("settings-link")).to_have_count(0)
    editor.goto(f"{server.url}/workspace/credentials")
    expect(editor.get_by_text("Not allowed: a editor cannot do this (manage needs more).")).to_be_visible()
    expect(editor.get_by_test_id("settings-refused")).to_be_visible()
    expect(editor.get_by_test_id("provider-openai")).to_have_count(0)
    editor_frames: list[str] = []
    _record_frames(editor, editor_frames)
    editor.goto(graph_url)
    editor.wait_for_function("window.__nodeflowCanvas && window.__nodeflowCanvas.nodeCount() === 1")
    _toolbar_fits(editor)
    editor.get_by_test_id("palette-node-prompt-template").click()
    editor.wait_for_function("window.__nodeflowCanvas.nodeCount() === 2")
    expect(editor.get_by_test_id("save-status")).to_contain_text("Saved", timeout=10_000)

    # The viewer sees it read-only, and a tampered edit is refused by the server.
    viewer_context, viewer = _join(browser, server, viewer_code, "Vera", "vera@example.org")
    viewer_frames: list[str] = []
    _record_frames(viewer, viewer_frames)
    viewer.goto(graph_url)
    viewer.wait_for_function("window.__nodeflowCanvas && window.__nodeflowCanvas.nodeCount() === 2")
    expect(viewer.get_by_test_id("view-only")).to_be_visible()
    expect(viewer.get_by_test_id("palette-node-prompt-template")).to_have_count(0)
    for edit_only in ("save-graph", "rerun", "import-graph"):  # not offered to someone who may not use them
        expect(viewer.get_by_test_id(edit_only)).to_have_count(0)
    _toolbar_fits(viewer)
    name = viewer.get_by_test_id("graph-name")
    name.evaluate("el => el.removeAttribute('readonly')")  # what devtools would do
    name.fill("Vera was here")
    name.press("Enter")  # the rename event goes over the websocket: the server refuses it
    expect(viewer.get_by_text("Not allowed: a viewer cannot do this")).to_be_visible()

    # The viewer chats with the team's refund desk (on the team's key) and decides its approval.
    fake_llm.script(text("Refund 42 euros"), text(["Refund", " sent"]))
    viewer.goto(f"{server.url}/graph/{desk.id}")
    viewer.wait_for_function("window.__nodeflowCanvas && window.__nodeflowCanvas.rev() > 0")
    viewer.get_by_test_id("toggle-chat").click()
    send(viewer, "refund order 7")
    expect_answer_status(viewer, "paused")
    card = last_answer(viewer).get_by_test_id("approval-card")
    card.get_by_test_id("approval-approve").click()
    expect_answer_status(viewer, "complete")
    expect(card).to_have_attribute("data-decision", "approve")
    expect(card).to_contain_text("Vera")  # who decided
    assert fake_llm.headers and {h.get("authorization") for h in fake_llm.headers} == {f"Bearer {TEAM_KEY}"}

    # Everyone in the team sees the run with who started it; the owner's graph name did not change.
    owner.goto(f"{server.url}/graph/{desk.id}")
    owner.wait_for_function("window.__nodeflowCanvas && window.__nodeflowCanvas.rev() > 0")
    owner.get_by_test_id("toggle-runs").click()
    expect(owner.get_by_test_id("run-started-by").first).to_have_text("chat · Vera")
    owner.goto(f"{server.url}/")
    expect(owner.get_by_test_id("graph-row-Acme desk")).to_be_visible()

    # An outsider (an account of their own, not invited) finds nothing.
    accounts = AccountStore(server.db_url)
    accounts.create_user("Otto", "otto@example.org", "outsider password")
    accounts.engine.dispose()
    outsider_context = signed_in_context(browser, server, "otto@example.org", "outsider password")
    outsider = outsider_context.new_page()
    outsider_frames: list[str] = []  # both ways, shown when the page waits in vain (it did once, in a full run)
    outsider.on("websocket", lambda ws: (ws.on("framesent", lambda f: outsider_frames.append(f"sent {f}")),
                                         ws.on("framereceived", lambda f: outsider_frames.append(f"got {f}"))))
    outsider.goto(f"{server.url}/")
    expect(outsider.get_by_test_id("graph-count")).to_have_text("0 graphs")
    for url in (graph_url, f"{server.url}/graph/{desk.id}"):
        outsider.goto(url)
        try:  # two workers on Redis under a full test run: the page's first events can take a while
            expect(outsider.get_by_test_id("not-found")).to_contain_text("Graph not found", timeout=15_000)
        except AssertionError as error:
            frames = "\n".join(frame[:300] for frame in outsider_frames[-10:])
            raise AssertionError(f"{error}\nserver log:\n{tail(server.log, 40)}\nthe outsider's last websocket "
                                 f"frames ({len(outsider_frames)} in all):\n{frames}") from None
        # Said once, by the page (the loaders refused quietly; test_page_states counts the toasts).
        expect(outsider.get_by_text("Not found: it belongs to a workspace you are not in.")).to_have_count(0)
        expect(outsider.get_by_test_id("graph-name")).to_have_count(0)  # nothing of the graph reached the page

    # The owner removes Eddie while his editor has the team's graph open, then adds a node: Vera, still a member,
    # sees it at once; Eddie's page gets nothing of it (nor of any later change) and says his access ended.
    viewer.goto(graph_url)
    viewer.wait_for_function("window.__nodeflowCanvas && window.__nodeflowCanvas.nodeCount() === 2")
    owner.goto(f"{server.url}/workspace")
    owner.get_by_test_id("remove-eddie@example.org").click()
    expect(owner.get_by_test_id("member-eddie@example.org")).to_have_count(0)
    removed_at = len(editor_frames)
    owner.goto(graph_url)
    owner.wait_for_function("window.__nodeflowCanvas && window.__nodeflowCanvas.nodeCount() === 2")
    owner.get_by_test_id("palette-node-prompt-template").click()
    viewer.wait_for_function("window.__nodeflowCanvas.nodeCount() === 3")
    expect(editor.get_by_test_id("graph-access-ended")).to_be_visible()
    assert not any("add_node" in frame for frame in editor_frames[removed_at:]), editor_frames[removed_at:]

    # No stored secret reached any browser: not the owner who typed them, not the members.
    seen = "\n".join(owner_frames + viewer_frames) + owner.content() + viewer.content()
    assert owner_frames and viewer_frames, "no websocket frame was recorded"
    assert TEAM_KEY not in seen and CONNECTION_TOKEN not in seen
    for context in (owner_context, editor_context, viewer_context, outsider_context):
        context.close()
