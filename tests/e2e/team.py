"""A team workspace made straight in a test server's database: the owner, editors and viewers, and a graph."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from nodeflow_app.store.accounts import AccountStore
from nodeflow_app.store.graphs import GraphStore

from .server import OWNER_EMAIL, OWNER_PASSWORD, Server, signed_in_context


@dataclass
class Member:
    name: str
    email: str
    password: str
    role: str


@dataclass
class Team:
    server: Server
    workspace_id: str
    owner: Member
    members: list[Member] = field(default_factory=list)

    def graph(self, name: str, graph: dict[str, Any]) -> str:
        store = GraphStore(f"sqlite:///{self.server.data_dir / 'nodeflow.db'}")
        try:
            return store.create(name, graph, workspace_id=self.workspace_id).id
        finally:
            store.engine.dispose()

    def context(self, browser, member: Member, **options):
        return signed_in_context(browser, self.server, member.email, member.password, **options)


def make_team(server: Server, roles: list[str]) -> Team:
    """A new team workspace of the install's owner with one new member per role in `roles` (invited and accepted)."""
    accounts = AccountStore(f"sqlite:///{server.data_dir / 'nodeflow.db'}")
    tag = uuid.uuid4().hex[:6]
    try:
        owner_user = accounts.user_by_email(OWNER_EMAIL)
        owner = Member(owner_user.name, OWNER_EMAIL, OWNER_PASSWORD, "owner")
        workspace = accounts.create_workspace(owner_user.id, f"Room {tag}")
        team = Team(server, workspace.id, owner)
        for i, role in enumerate(roles):
            first = ["Eddie", "Vera", "Nina", "Omar", "Pia", "Quinn", "Rosa", "Sam", "Tara", "Uma", "Yann"][i % 11]
            member = Member(f"{first} {role.title()}{i}", f"{first.lower()}{i}-{tag}@example.org",
                            f"{first} password {tag}", role)
            user = accounts.create_user(member.name, member.email, member.password, admin=False)
            raw, _ = accounts.invite(workspace.id, role, owner_user.id)
            accounts.accept(raw, user.id)
            team.members.append(member)
        return team
    finally:
        accounts.engine.dispose()
