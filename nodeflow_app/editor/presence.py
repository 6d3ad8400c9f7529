"""Who is in a co-editing room, as the browser sees them: initials, a colour, the selected nodes.

Pure helpers (no reflex): the room state (state/graph_room.py) keeps one entry per open tab, keyed by a
hash of the tab's client token (the token itself never reaches other browsers), and one face per person
(`user`, a hash of the account id) for the toolbar: a person with two tabs open shows once.
"""

from __future__ import annotations

import hashlib
from typing import Any

# Distinct on the dark canvas, none of them the red of an issue outline or the green of a diff.
COLOURS = ("#f59e0b", "#3b82f6", "#ec4899", "#14b8a6", "#a855f7", "#f97316", "#06b6d4", "#84cc16")


def presence_id(client_token: str) -> str:
    return hashlib.sha256(client_token.encode()).hexdigest()[:10]


def initials(name: str) -> str:
    """'Ada Lovelace' -> 'AL', 'ada.lovelace@x.org' -> 'AL', 'bob@x.org' -> 'BO'."""
    local = name.split("@")[0] if "@" in name else name
    words = [w for w in local.replace(".", " ").replace("_", " ").split() if w[:1].isalnum()]
    if len(words) >= 2:
        return (words[0][0] + words[1][0]).upper()
    return (words[0][:2] if words else "?").upper()


def user_key(user_id: str) -> str:
    """A person's key in the room: the same in all their tabs, and not their account id."""
    return hashlib.sha256(f"user:{user_id}".encode()).hexdigest()[:10]


def colour(user_id: str) -> str:
    """One colour per person, the same in every tab and on every worker."""
    return COLOURS[int(hashlib.sha256(user_id.encode()).hexdigest(), 16) % len(COLOURS)]


def person(pid: str, user_id: str, name: str, selected: list[str] | None = None) -> dict[str, Any]:
    return {"id": pid, "user": user_key(user_id), "name": name, "initials": initials(name), "color": colour(user_id),
            "selected": selected or []}


def faces(people: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One entry per person (their first tab's), without selections: what the toolbar shows."""
    seen: dict[str, dict[str, Any]] = {}
    for p in people:
        seen.setdefault(p["user"], {"user": p["user"], "name": p["name"], "initials": p["initials"], "color": p["color"]})
    return list(seen.values())
