"""Who is asking for a run: the signed-in person and the workspace they act in (set by the UI's access check).

A context variable, so the services below the UI learn it without every call passing it along: the launcher
records the person on the run and gives nodes the workspace (knowledge collections are per workspace).
"""

from __future__ import annotations

import contextvars
from dataclasses import dataclass

USER = "user"  # the run context's key for the name of who started it


@dataclass(frozen=True)
class Caller:
    user_id: str | None = None
    user_name: str = ""
    workspace_id: str | None = None


_caller: contextvars.ContextVar[Caller] = contextvars.ContextVar("nodeflow_caller", default=Caller())


def current_caller() -> Caller:
    return _caller.get()


def set_caller(caller: Caller) -> None:
    _caller.set(caller)
