"""The API in process (httpx over ASGI) on its own SQLite database: a team workspace with an owner, a viewer,
an outsider, a token each, one graph and one finished run of it."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from argon2 import PasswordHasher

from nodeflow_app.api.app import create_api
from nodeflow_app.api.services import Services
from nodeflow_app.runs.launcher import RunLauncher
from nodeflow_app.runs.service import RunService
from nodeflow_app.store import accounts as accounts_module
from nodeflow_app.store.accounts import AccountStore
from nodeflow_app.store.graphs import GraphStore
from tests.llm.graphs import graph

PASSWORD = "correct horse"


def fields(**values: Any) -> dict:
    return {"fields": [{"name": k, "value": v} for k, v in values.items()]}


def said(answer: httpx.Response) -> Any:
    """What an error answer says: the API's `detail`, or the `error.message` of the OpenAI-compatible routes
    (`/api/v1/models`, `/api/v1/chat/completions`), which answer in OpenAI's shape."""
    body = answer.json()
    return body["error"]["message"] if set(body) == {"error"} else body["detail"]


def two_steps() -> dict:
    """Manual Trigger -> Edit Fields (adds done: true)."""
    return graph([("manual", "manual-trigger", {"payload": {"n": 1}}), ("done", "edit-fields", fields(done=True))],
                 ["manual.output -> done.input"])


@dataclass
class Team:
    api: Any
    accounts: AccountStore
    graphs: GraphStore
    launcher: RunLauncher
    workspace_id: str
    graph_id: str
    run_id: str
    tokens: dict[str, str]  # "owner" | "viewer" | "outsider" -> raw API token
    sessions: dict[str, str]  # the same people's session tokens (the nf_session cookie)

    def client(self, who: str | None = None, *, session: bool = False) -> httpx.AsyncClient:
        headers = {"authorization": f"Bearer {self.tokens[who]}"} if who and not session else {}
        cookies = {"nf_session": self.sessions[who]} if who and session else {}
        return httpx.AsyncClient(transport=httpx.ASGITransport(app=self.api), base_url="http://api.test",
                                 headers=headers, cookies=cookies)


async def _finish(launcher: RunLauncher, raw: dict, graph_id: str) -> str:
    run = launcher.start(raw, started_by="test", graph_id=graph_id)
    async for _event in run.events():
        pass
    launcher.store.flush()
    return run.run_id


@pytest.fixture
def team(tmp_path, monkeypatch) -> Team:
    monkeypatch.setattr(accounts_module, "PASSWORD_HASHER", PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1))
    url = f"sqlite:///{tmp_path / 'nodeflow.db'}"
    monkeypatch.setenv("REFLEX_DB_URL", url)
    accounts, graphs, launcher = AccountStore(url), GraphStore(url), RunLauncher(url)
    owner = accounts.create_user("Ada", "ada@example.org", PASSWORD)
    viewer = accounts.create_user("Vic", "vic@example.org", PASSWORD)
    outsider = accounts.create_user("Eve", "eve@example.org", PASSWORD)
    workspace = accounts.create_workspace(owner.id, "Team")
    raw, _invitation = accounts.invite(workspace.id, "viewer", owner.id)
    accounts.accept(raw, viewer.id)
    graph_id = graphs.create("Two steps", two_steps(), workspace_id=workspace.id).id
    run_id = asyncio.run(_finish(launcher, graphs.get(graph_id).graph, graph_id))
    tokens = {"owner": accounts.create_api_token(owner.id, workspace.id, "ci")[0],
              "viewer": accounts.create_api_token(viewer.id, workspace.id, "ci")[0],
              "outsider": accounts.create_api_token(outsider.id, accounts.personal_workspace(outsider.id).id, "ci")[0]}
    sessions = {"owner": accounts.sign_in("ada@example.org", PASSWORD)[0],
                "viewer": accounts.sign_in("vic@example.org", PASSWORD)[0],
                "outsider": accounts.sign_in("eve@example.org", PASSWORD)[0]}
    runs = RunService(launcher=launcher)
    api = create_api(Services(accounts=lambda: accounts, graphs=lambda: graphs, launcher=lambda: launcher,
                              runs=lambda: runs))
    yield Team(api, accounts, graphs, launcher, workspace.id, graph_id, run_id, tokens, sessions)
    launcher.close()
    for store in (accounts, graphs):
        store.engine.dispose()


@pytest.fixture(autouse=True)
def no_process_wide_services(monkeypatch):
    """Every service comes from the test's Services: the process's own (on the app database) must stay unused."""
    for getter in ("nodeflow_app.store.accounts.account_store", "nodeflow_app.store.graphs.graph_store",
                   "nodeflow_app.runs.launcher.run_launcher", "nodeflow_app.runs.service.run_service"):
        monkeypatch.setattr(getter, lambda getter=getter: pytest.fail(f"a route used {getter}()"))
