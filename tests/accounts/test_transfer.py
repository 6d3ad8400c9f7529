"""Copy or move a graph to another workspace: edit is needed in both; a copy leaves chats with the original."""

from __future__ import annotations

import pytest

from nodeflow_app.accounts.transfer import TransferRefused, edit_targets, transfer
from nodeflow_app.store.accounts import AccountStore
from nodeflow_app.store.chats import ChatStore
from nodeflow_app.store.graphs import GraphStore

PASSWORD = "correct horse"


@pytest.fixture
def stores(tmp_path):
    url = f"sqlite:///{tmp_path / 'nodeflow.db'}"
    accounts, graphs, chats = AccountStore(url), GraphStore(url), ChatStore(url)
    yield accounts, graphs, chats
    for store in (accounts, graphs, chats):
        store.engine.dispose()


def people(accounts: AccountStore):
    """Ada owns her workspace and Team; Bob is a viewer of Team and owns his own workspace."""
    ada, bob = accounts.create_user("Ada", "ada@example.org", PASSWORD), accounts.create_user("Bob", "bob@example.org", PASSWORD)
    team = accounts.create_workspace(ada.id, "Team")
    raw, _ = accounts.invite(team.id, "viewer", ada.id)
    accounts.accept(raw, bob.id)
    return ada, bob, team


def test_the_targets_are_the_other_workspaces_where_the_person_may_edit(stores):
    accounts, _graphs, _chats = stores
    ada, bob, team = people(accounts)
    assert [w.name for w in edit_targets(accounts, ada.id, accounts.personal_workspace(ada.id).id)] == ["Team"]
    assert [w.name for w in edit_targets(accounts, ada.id, team.id)] == ["Ada's workspace"]
    assert edit_targets(accounts, bob.id, accounts.personal_workspace(bob.id).id) == []  # only a viewer of Team


def test_a_copy_is_a_new_graph_in_the_target_and_the_chats_stay_with_the_original(stores):
    accounts, graphs, chats = stores
    ada, _bob, team = people(accounts)
    mine = accounts.personal_workspace(ada.id).id
    original = graphs.create("Pipeline", {"nodes": []}, workspace_id=mine)
    chat = chats.create_chat(original.id, user_id=ada.id)
    copy = transfer(graphs, accounts, ada.id, original.id, team.id, "copy")
    assert copy is not None and copy.id != original.id
    assert (graphs.workspace_of(original.id), graphs.workspace_of(copy.id)) == (mine, team.id)
    assert [c.id for c in chats.list_chats(original.id)] == [chat.id] and chats.list_chats(copy.id) == []


def test_a_copy_for_another_workspace_leaves_the_secrets_behind(stores, tmp_path, monkeypatch):
    """An editor of a team may use its secrets, not take them along: the copy asks for them again."""
    from nodeflow_app.secret_values import is_set, origin, reveal, seal

    monkeypatch.setenv("NODEFLOW_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("NODEFLOW_SECRET_KEY", raising=False)
    accounts, graphs, _chats = stores
    ada, _bob, team = people(accounts)
    mcp = {"id": "m", "type": "mcp-server", "version": 2, "name": "MCP", "position": {"x": 0, "y": 0},
           "data": {"transport": "streamable-http", "url": "https://mcp.example/mcp",
                    "headers": [{"name": "Authorization", "value": seal("Bearer sk-team", origin("https://mcp.example/mcp"))}]}}
    original = graphs.create("Team tools", {"nodes": [mcp], "edges": []}, workspace_id=team.id)
    copy = transfer(graphs, accounts, ada.id, original.id, accounts.personal_workspace(ada.id).id, "copy")
    copied = graphs.get(copy.id).graph["nodes"][0]["data"]["headers"]
    assert [row["name"] for row in copied] == ["Authorization"] and not is_set(copied[0]["value"])
    kept = graphs.get(original.id).graph["nodes"][0]["data"]["headers"][0]["value"]
    assert reveal(kept, "the header", url="https://mcp.example/mcp") == "Bearer sk-team"


def test_a_move_keeps_the_id_and_changes_the_workspace(stores):
    accounts, graphs, _chats = stores
    ada, _bob, team = people(accounts)
    graph = graphs.create("Pipeline", workspace_id=accounts.personal_workspace(ada.id).id)
    assert transfer(graphs, accounts, ada.id, graph.id, team.id, "move") is None
    assert graphs.workspace_of(graph.id) == team.id
    with pytest.raises(TransferRefused, match="already"):
        transfer(graphs, accounts, ada.id, graph.id, team.id, "move")


def test_only_an_owner_moves_a_graph_out_of_its_workspace(stores):
    """A move takes the graph's history along, its sealed secrets included: an editor who moved a team's graph
    into a personal workspace, duplicated it there and moved it back would keep the team's secrets."""
    accounts, graphs, _chats = stores
    ada, bob, team = people(accounts)
    accounts.set_role(team.id, bob.id, "editor")
    in_team = graphs.create("Team's", workspace_id=team.id)
    with pytest.raises(TransferRefused, match="only an owner of the graph's workspace may move it out"):
        transfer(graphs, accounts, bob.id, in_team.id, accounts.personal_workspace(bob.id).id, "move")
    assert graphs.workspace_of(in_team.id) == team.id
    assert transfer(graphs, accounts, bob.id, in_team.id, accounts.personal_workspace(bob.id).id, "copy") is not None
    assert transfer(graphs, accounts, ada.id, in_team.id, accounts.personal_workspace(ada.id).id, "move") is None


def test_edit_is_needed_in_the_source_and_in_the_target(stores):
    accounts, graphs, _chats = stores
    ada, bob, team = people(accounts)
    adas = graphs.create("Ada's", workspace_id=accounts.personal_workspace(ada.id).id)
    in_team = graphs.create("Team's", workspace_id=team.id)
    bobs = graphs.create("Bob's", workspace_id=accounts.personal_workspace(bob.id).id)
    with pytest.raises(TransferRefused, match="not found"):  # not a member of Ada's workspace
        transfer(graphs, accounts, bob.id, adas.id, accounts.personal_workspace(bob.id).id, "copy")
    with pytest.raises(TransferRefused, match="not found"):  # a viewer of Team cannot take its graphs away
        transfer(graphs, accounts, bob.id, in_team.id, accounts.personal_workspace(bob.id).id, "move")
    with pytest.raises(TransferRefused, match="may not edit"):  # nor put graphs into it
        transfer(graphs, accounts, bob.id, bobs.id, team.id, "copy")
    assert (graphs.workspace_of(in_team.id), graphs.workspace_of(bobs.id)) == (
        team.id, accounts.personal_workspace(bob.id).id)
    assert len(graphs.list(workspace_id=team.id)) == 1
