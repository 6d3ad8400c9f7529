"""Copying or moving a graph to another workspace (issue 14, point 2): the person needs edit in both, and to move
it out, owner in its workspace.

A copy is a new graph (new id, its own history) in the target; chats, runs and pins stay with the original,
which they name by id, and so do its secrets: the copy asks for them again (an editor may use a team's secrets,
not take them along). A move keeps the id, so the graph takes its chats, runs and pins along.
"""

from __future__ import annotations

from typing import Literal

from nodeflow_app.accounts.roles import allows
from nodeflow_app.store.accounts import AccountStore, Workspace
from nodeflow_app.store.graphs import GraphStore, GraphSummary
from nodes._registry import default_registry

Mode = Literal["copy", "move"]


class TransferRefused(ValueError):
    """The copy or move is not allowed or not possible; the message says why (for a toast)."""


def edit_targets(accounts: AccountStore, user_id: str, source_workspace: str | None) -> list[Workspace]:
    """The workspaces `user_id` may edit in, other than the graph's own."""
    return [w for w in accounts.workspaces(user_id) if w.id != source_workspace and allows(w.role, "edit")]


def transfer(graphs: GraphStore, accounts: AccountStore, user_id: str, graph_id: str, workspace_id: str,
             mode: Mode) -> GraphSummary | None:
    """Copy (returns the copy) or move (returns None) `graph_id` to `workspace_id`, if `user_id` may edit both."""
    source = graphs.workspace_of(graph_id)
    if source is None or not allows(accounts.role(user_id, source), "edit"):
        raise TransferRefused("the graph was not found in a workspace you may edit")
    if not allows(accounts.role(user_id, workspace_id), "edit"):
        raise TransferRefused("you may not edit in that workspace")
    if workspace_id == source:
        raise TransferRefused("the graph is in that workspace already")
    if mode == "copy":  # secrets stay where they were entered: whoever may use them there may not read them
        return graphs.duplicate(graph_id, workspace_id, forget_secrets=default_registry())
    if not allows(accounts.role(user_id, source), "manage"):  # the graph takes its history, secrets included
        raise TransferRefused("only an owner of the graph's workspace may move it out (an editor may copy it)")
    graphs.move(graph_id, workspace_id)
    return None
