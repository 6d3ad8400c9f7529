"""Roles per workspace and the actions each allows (SPEC 10). The one place this vocabulary is defined.

| action   | what it covers                                                  | least role |
| -------- | --------------------------------------------------------------- | ---------- |
| view     | open a graph (read-only canvas), see its runs, search knowledge | viewer     |
| chat     | chat with a graph (own chats), answer own approvals             | viewer     |
| edit     | edit, import, delete, test-run, pin, activate graphs; knowledge | editor     |
| manage   | credentials, members, roles, invitations, others' API tokens    | owner      |
"""

from __future__ import annotations

from typing import Literal

Role = Literal["viewer", "editor", "owner"]
Action = Literal["view", "chat", "edit", "manage"]

ROLES: tuple[Role, ...] = ("viewer", "editor", "owner")  # weakest first
LEAST_ROLE: dict[Action, Role] = {"view": "viewer", "chat": "viewer", "edit": "editor", "manage": "owner"}


def check_role(role: str) -> Role:
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}: use one of {', '.join(ROLES)}")
    return role  # type: ignore[return-value]


def allows(role: str | None, action: Action) -> bool:
    """Whether `role` (None: not a member) may do `action`."""
    if role not in ROLES:
        return False
    return ROLES.index(role) >= ROLES.index(LEAST_ROLE[action])  # type: ignore[arg-type]
