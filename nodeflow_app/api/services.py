"""The stores and the launcher the API's routes use: the process's own, or a test's (`create_api(services)`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable


def _accounts() -> Any:
    from nodeflow_app.store.accounts import account_store

    return account_store()


def _graphs() -> Any:
    from nodeflow_app.store.graphs import graph_store

    return graph_store()


def _launcher() -> Any:
    from nodeflow_app.runs.launcher import run_launcher

    return run_launcher()


def _runs() -> Any:
    from nodeflow_app.runs.service import run_service

    return run_service()


@dataclass(frozen=True)
class Services:
    """Getters, so nothing opens a database before the first request."""

    accounts: Callable[[], Any] = field(default=_accounts)
    graphs: Callable[[], Any] = field(default=_graphs)
    launcher: Callable[[], Any] = field(default=_launcher)
    runs: Callable[[], Any] = field(default=_runs)  # RunService: answers to paused nodes
