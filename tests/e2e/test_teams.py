"""Teams in Chromium with separate browser contexts: the owner makes a team workspace and invites a viewer by
link; the viewer signs up through the link, sees the team with the role viewer, and the server refuses an
edit they try; an invitation link works once; an outsider is not a member and never sees the team."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from .server import signed_in_context
from .server import ROOT
from .test_chat import expect_answer_status, send


def test_invite_a_viewer_who_can_look_but_not_edit(browser, nodeflow_server):
    owner_context = signed_in_context(browser, nodeflow_server)
    owner = owner_context.new_page()
    owner.goto(f"{nodeflow_server.url}/workspace")
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

    guest.get_by_test_id("new-graph").click()  # a viewer may look, not create: the server refuses
    expect(guest.get_by_text("Not allowed: a viewer cannot do this")).to_be_visible()
    guest.goto(f"{nodeflow_server.url}/workspace")
    expect(guest.get_by_test_id("members")).to_contain_text("vic@example.org")
    expect(guest.get_by_test_id("invite-create")).to_have_count(0)  # owners only

    # The link was single use.
    third = browser.new_context().new_page()
    third.goto(f"{nodeflow_server.url}/invite/{link.rsplit('/', 1)[1]}")
    expect(third.get_by_test_id("invite-error")).to_contain_text("not valid any more")

    # The owner sees the new member and can make them an editor; then creating a graph works for them.
    owner.goto(f"{nodeflow_server.url}/workspace")
    owner.get_by_test_id("role-vic@example.org").click()
    owner.get_by_role("option", name="editor").click()
    guest.goto(f"{nodeflow_server.url}/")
    guest.get_by_test_id("new-graph").click()
    guest.get_by_test_id("template-blank").click()
    expect(guest).to_have_url(re.compile(r"/graph/\w+$"), timeout=15_000)
    for context in (owner_context, guest_context, third.context):
        context.close()


def _invite(owner, server, role: str) -> str:
    owner.goto(f"{server.url}/workspace")
    owner.get_by_test_id("invite-role").click()
    owner.get_by_role("option", name=role).click()
    owner.get_by_test_id("invite-create").click()
    expect(owner.get_by_test_id("invite-link")).to_be_visible()
    return owner.get_by_test_id("invite-link").inner_text().rsplit("/", 1)[1]


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


def test_owner_editor_viewer_and_outsider_on_one_team_graph(browser, nodeflow_server, fake_llm):
    from nodeflow_app.store.accounts import AccountStore

    owner_context = signed_in_context(browser, nodeflow_server)
    owner = owner_context.new_page()
    owner.goto(f"{nodeflow_server.url}/workspace")
    owner.get_by_test_id("team-name").fill("Acme")
    owner.get_by_test_id("team-create").click()
    expect(owner.get_by_test_id("user-menu")).to_contain_text("Acme", timeout=15_000)
    owner.get_by_test_id("new-graph").click()
    owner.get_by_test_id("template-blank").click()
    owner.wait_for_url("**/graph/*")
    graph_url = owner.url
    owner.get_by_test_id("graph-name").fill("Acme desk")
    owner.get_by_test_id("graph-name").press("Enter")
    editor_code, viewer_code = _invite(owner, nodeflow_server, "editor"), _invite(owner, nodeflow_server, "viewer")
    owner.screenshot(path=str(ROOT / "docs" / "screenshot-workspace.png"))  # the README's picture of a team

    # The editor sees the team's graph and changes it.
    editor_context, editor = _join(browser, nodeflow_server, editor_code, "Eddie", "eddie@example.org")
    expect(editor.get_by_test_id("graph-row-Acme desk")).to_be_visible()
    editor.goto(graph_url)
    editor.wait_for_function("window.__nodeflowCanvas && window.__nodeflowCanvas.nodeCount() === 1")
    editor.get_by_test_id("palette-node-prompt-template").click()
    editor.wait_for_function("window.__nodeflowCanvas.nodeCount() === 2")
    expect(editor.get_by_test_id("save-status")).to_contain_text("Saved", timeout=10_000)

    # The viewer sees it read-only, chats with it, and a tampered edit is refused by the server.
    viewer_context, viewer = _join(browser, nodeflow_server, viewer_code, "Vera", "vera@example.org")
    viewer.goto(graph_url)
    viewer.wait_for_function("window.__nodeflowCanvas && window.__nodeflowCanvas.nodeCount() === 2")
    expect(viewer.get_by_test_id("view-only")).to_be_visible()
    viewer.get_by_test_id("toggle-chat").click()
    send(viewer, "hello from a viewer")
    expect_answer_status(viewer, "complete")
    expect(viewer.get_by_test_id("palette-node-prompt-template")).to_have_count(0)
    name = viewer.get_by_test_id("graph-name")
    name.evaluate("el => el.removeAttribute('readonly')")  # what devtools would do
    name.fill("Vera was here")
    name.press("Enter")
    expect(viewer.get_by_text("Not allowed: a viewer cannot do this")).to_be_visible()
    owner.goto(f"{nodeflow_server.url}/")
    expect(owner.get_by_test_id("graph-row-Acme desk")).to_be_visible()  # the name did not change

    # An outsider (an account of their own, not invited) finds nothing.
    accounts = AccountStore(f"sqlite:///{nodeflow_server.data_dir / 'nodeflow.db'}")
    accounts.create_user("Otto", "otto@example.org", "outsider password")
    accounts.engine.dispose()
    outsider_context = signed_in_context(browser, nodeflow_server, "otto@example.org", "outsider password")
    outsider = outsider_context.new_page()
    outsider.goto(f"{nodeflow_server.url}/")
    expect(outsider.get_by_test_id("graph-count")).to_have_text("0 graphs")
    outsider.goto(graph_url)
    expect(outsider.get_by_text("Not found: it belongs to a workspace you are not in.").first).to_be_visible()
    for context in (owner_context, editor_context, viewer_context, outsider_context):
        context.close()
