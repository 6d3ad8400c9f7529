"""The HTTP API on the real production server (front end, Reflex backend and API on one port)."""

from __future__ import annotations

import httpx

from nodeflow_app.store.accounts import AccountStore
from nodeflow_app.store.graphs import GraphStore

from .server import OWNER_EMAIL, Server


def owner_token(server: Server) -> tuple[str, str]:
    """(a new API token of the install's owner for their workspace, that workspace's id)."""
    accounts = AccountStore(f"sqlite:///{server.data_dir / 'nodeflow.db'}")
    try:
        owner = accounts.user_by_email(OWNER_EMAIL)
        workspace = accounts.personal_workspace(owner.id).id
        return accounts.create_api_token(owner.id, workspace, "e2e")[0], workspace
    finally:
        accounts.engine.dispose()


def test_the_api_answers_beside_the_pages_with_a_token(nodeflow_server: Server):
    token, workspace = owner_token(nodeflow_server)
    graphs = GraphStore(f"sqlite:///{nodeflow_server.data_dir / 'nodeflow.db'}")
    try:
        graph_id = graphs.create("API e2e graph", workspace_id=workspace).id
    finally:
        graphs.engine.dispose()
    with httpx.Client(base_url=nodeflow_server.url, timeout=10) as client:
        refused = client.get("/api/v1/graphs")
        assert refused.status_code == 401 and refused.headers["www-authenticate"] == "Bearer"
        listed = client.get("/api/v1/graphs", headers={"authorization": f"Bearer {token}"})
        assert listed.status_code == 200 and graph_id in [g["id"] for g in listed.json()]
        assert client.get("/api/v1/openapi.json").json()["info"]["title"] == "NodeFlow API"
        assert client.get("/ping").status_code == 200 and client.get("/").status_code == 200
