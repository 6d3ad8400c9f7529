"""Teams in Chromium with separate browser contexts: the owner makes a team workspace and invites a viewer by
link; the viewer signs up through the link, sees the team with the role viewer, and the server refuses an
edit they try; an invitation link works once; an outsider is not a member and never sees the team."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from .conftest import signed_in_context


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
