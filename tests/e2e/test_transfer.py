"""Copy and move a graph to another workspace in Chromium: the dialog lists only the workspaces where the
person may edit; a copy leaves the chats with the original; a move (from the editor's menu) takes the graph
out of the list of its old workspace into the new one's."""

from __future__ import annotations

import uuid

from playwright.sync_api import expect

from nodeflow_app.store.accounts import AccountStore
from nodeflow_app.store.chats import ChatStore
from nodeflow_app.store.graphs import GraphStore

from .server import OWNER_EMAIL, Server
from .test_editor import wait_loaded


def test_copy_from_the_list_and_move_from_the_editor(page, browser, nodeflow_server: Server):
    url = f"sqlite:///{nodeflow_server.data_dir / 'nodeflow.db'}"
    accounts, graphs, chats = AccountStore(url), GraphStore(url), ChatStore(url)
    tag = uuid.uuid4().hex[:6]
    owner = accounts.user_by_email(OWNER_EMAIL)
    mine = accounts.personal_workspace(owner.id)
    team = accounts.create_workspace(owner.id, f"Team {tag}")
    wes = accounts.create_user("Wes", f"wes-{tag}@example.org", "wes password")  # the owner only views his team
    watched = accounts.create_workspace(wes.id, f"Watched {tag}")
    raw, _ = accounts.invite(watched.id, "viewer", wes.id)
    accounts.accept(raw, owner.id)
    name = f"Pipeline {tag}"
    graph = graphs.create(name, {"nodes": []}, workspace_id=mine.id)
    chat = chats.create_chat(graph.id, user_id=owner.id)

    # Copy from the graph list: only workspaces where the owner may edit are offered.
    page.goto(f"{nodeflow_server.url}/")
    page.get_by_test_id(f"graph-menu-{name}").click()
    page.get_by_test_id("graph-copy-to").click()
    dialog = page.get_by_test_id("transfer-dialog")
    expect(dialog).to_contain_text(f"Copy “{name}” to a workspace")
    dialog.get_by_test_id("transfer-target").click()
    expect(page.get_by_test_id(f"transfer-target-Team {tag}")).to_be_visible()
    expect(page.get_by_test_id(f"transfer-target-Watched {tag}")).to_have_count(0)  # a viewer there
    expect(page.get_by_test_id(f"transfer-target-{mine.name}")).to_have_count(0)  # where it is already
    page.get_by_test_id(f"transfer-target-Team {tag}").click()
    dialog.get_by_test_id("transfer-confirm").click()
    expect(page.locator("[data-sonner-toast]").filter(has_text=f"Copied to Team {tag}")).to_be_visible()
    [copy] = graphs.list(workspace_id=team.id)
    assert copy.id != graph.id and graphs.workspace_of(graph.id) == mine.id
    assert [c.id for c in chats.list_chats(graph.id)] == [chat.id] and chats.list_chats(copy.id) == []

    # Move from the editor's menu: the graph keeps its id (and its chats) and joins the team.
    page.goto(f"{nodeflow_server.url}/graph/{graph.id}")
    wait_loaded(page)
    page.get_by_test_id("editor-menu").click()
    page.get_by_test_id("graph-move-to").click()
    expect(page.get_by_test_id("transfer-dialog")).to_contain_text(f"Move “{name}” to a workspace")
    page.get_by_test_id("transfer-target").click()
    page.get_by_test_id(f"transfer-target-Team {tag}").click()
    page.get_by_test_id("transfer-confirm").click()
    expect(page.locator("[data-sonner-toast]").filter(has_text=f"Moved to Team {tag}")).to_be_visible()
    assert graphs.workspace_of(graph.id) == team.id
    assert [c.id for c in chats.list_chats(graph.id)] == [chat.id]

    page.goto(f"{nodeflow_server.url}/")
    expect(page.get_by_test_id("graph-table").or_(page.get_by_test_id("graph-empty"))).to_be_visible()
    expect(page.get_by_test_id(f"graph-row-{name}")).to_have_count(0)
    page.get_by_test_id("user-menu").click()
    page.get_by_test_id(f"workspace-Team {tag}").click()
    expect(page.get_by_test_id(f"graph-row-{name}")).to_be_visible()
    expect(page.get_by_test_id(f"graph-row-{name} (copy)")).to_be_visible()
    for store in (accounts, graphs, chats):
        store.engine.dispose()
