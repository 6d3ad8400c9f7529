"""Every HTTP route declares who may call it, and the one check refuses outsiders and viewers wherever the
declaration asks for more: each route is called for real, anonymously, with an outsider's token, with a
viewer's token and with a viewer's session."""

from __future__ import annotations

import re
import time

import pytest
from fastapi import Request
from fastapi.routing import APIRoute, iter_route_contexts
from sqlalchemy import delete

from nodeflow_app.accounts.roles import LEAST_ROLE
from nodeflow_app.api.access import NO_CALLER, requires
from nodeflow_app.api.app import create_api
from nodeflow_app.state.access import declared
from nodeflow_app.store.models import MembershipRow
from tests.api.conftest import said

# The OpenAPI schema, its docs page and Swagger UI's files for it describe the API and hold no data.
DOCS = {"/api/v1/openapi.json", "/api/v1/docs", "/api/v1/docs/assets"}
# A public route must be added here on purpose (and reviewed as such).
PUBLIC: set[str] = {"/api/hooks/{hook_id}", "/api/hooks-test/{hook_id}",  # webhooks check their own callers
                    "/api/session/start",  # the short session in its query is the credential (test_session_route.py)
                    "/api/session/end",  # ends the session its own cookie names
                    "/api/{rest:path}"}  # the last route: a JSON 404 / 405 for a path no other route takes


def _routes():
    """(method, route) of every endpoint, included routers flattened; anything else must be FastAPI's docs."""
    for context in iter_route_contexts(create_api().routes):
        route = context.original_route
        if isinstance(route, APIRoute):
            for method in sorted(route.methods):
                yield method, route
        else:
            assert context.path in DOCS, f"{context.path} is a route outside the access check"


ROUTES = list(_routes())
IDS = [f"{method} {route.path}" for method, route in ROUTES]


def test_the_api_has_routes_to_check():
    assert len(ROUTES) >= 1


def test_every_route_declares_its_access_rule():
    missing = [f"{method} {route.path}" for method, route in ROUTES if declared(route.endpoint) is None]
    assert missing == [], f"routes without @requires(...): {missing}"


def test_only_the_listed_routes_are_public():
    assert {route.path for _m, route in ROUTES if declared(route.endpoint) == "public"} == PUBLIC


def _path(route: APIRoute, team) -> str:
    values = {"graph_id": team.graph_id, "run_id": team.run_id, "workspace_id": team.workspace_id}
    return re.sub(r"\{(\w+)(:\w+)?\}", lambda m: values.get(m.group(1), "x"), route.path)


@pytest.mark.parametrize("method, route", ROUTES, ids=IDS)
async def test_outsiders_and_viewers_are_refused_where_the_declaration_says(team, method, route):
    need, path = declared(route.endpoint), _path(route, team)
    if need == "public":
        return
    ask = {"json": {}, "params": {"workspace": team.workspace_id}}  # routes without a path id act where it says
    async with team.client() as anonymous:
        answer = await anonymous.request(method, path, **ask)
        assert (answer.status_code, said(answer)) == (401, NO_CALLER)
    async with team.client("outsider") as outsider:
        answer = await outsider.request(method, path, **ask)
        if need != "signed_in":
            assert (answer.status_code, said(answer)) == (404, "not found")
    if need in ("signed_in", "admin") or LEAST_ROLE[need] == "viewer":
        return
    for viewer in (team.client("viewer"), team.client("viewer", session=True)):
        async with viewer:
            answer = await viewer.request(method, path, **ask)
            assert answer.status_code == 403 and "a viewer cannot do this" in said(answer)


async def test_an_undeclared_route_is_refused_even_to_the_owner(team):
    @team.api.get("/probe/undeclared")  # outside /api/, whose last route takes any path added after it
    def undeclared() -> dict:
        return {"secret": 1}

    async with team.client("owner") as owner:
        answer = await owner.get("/probe/undeclared")
    assert (answer.status_code, answer.json()) == (403, {"detail": "this action declares no access rule"})


async def test_a_token_lists_its_workspace_and_records_its_last_use(team):
    async with team.client("viewer") as viewer:
        answer = await viewer.get("/api/v1/graphs")
    assert answer.status_code == 200 and [g["id"] for g in answer.json()] == [team.graph_id]
    [token] = team.accounts.api_tokens(team.accounts.user_by_email("vic@example.org").id)
    assert token.last_used_at and time.time() - token.last_used_at < 5


async def test_a_token_acts_only_in_its_own_workspace(team):
    """The owner's personal-workspace token does not reach the team's graph, though the owner is its owner."""
    owner = team.accounts.user_by_email("ada@example.org")
    personal, _ = team.accounts.create_api_token(owner.id, team.accounts.personal_workspace(owner.id).id, "me")
    team.tokens["personal"] = personal
    async with team.client("personal") as client:
        assert (await client.get("/api/v1/graphs")).json() == []
        answer = await client.get("/api/v1/graphs", params={"workspace": team.workspace_id})
    assert (answer.status_code, answer.json()) == (404, {"detail": "not found"})


async def test_revoked_and_forged_tokens_are_refused(team):
    owner = team.accounts.user_by_email("ada@example.org")
    [token] = team.accounts.api_tokens(owner.id)
    team.accounts.revoke_api_token(owner.id, token.id)
    team.tokens["forged"] = "nf_forged"
    for who in ("owner", "forged"):
        async with team.client(who) as client:
            answer = await client.get("/api/v1/graphs")
            assert (answer.status_code, answer.json()) == (401, {"detail": NO_CALLER})


async def test_a_session_cookie_acts_in_the_workspace_it_names(team):
    async with team.client("viewer", session=True) as viewer:
        assert (await viewer.get("/api/v1/graphs")).json() == []  # the personal workspace by default
        team_graphs = await viewer.get("/api/v1/graphs", params={"workspace": team.workspace_id})
    assert [g["id"] for g in team_graphs.json()] == [team.graph_id]



async def test_a_session_of_someone_in_no_personal_workspace_finds_nothing_by_default(team):
    """Someone removed from their personal workspace before that was refused has no default workspace: a call that
    names none failed with a server error instead of finding nothing."""
    vic = team.accounts.user_by_email("vic@example.org")
    with team.accounts.engine.begin() as conn:
        conn.execute(delete(MembershipRow).where(
            MembershipRow.workspace_id == team.accounts.personal_workspace(vic.id).id))
    assert team.accounts.personal_workspace(vic.id) is None
    async with team.client("viewer", session=True) as viewer:
        answer = await viewer.get("/api/v1/graphs")
        assert (answer.status_code, answer.json()) == (404, {"detail": "not found"})
        team_graphs = await viewer.get("/api/v1/graphs", params={"workspace": team.workspace_id})
    assert [g["id"] for g in team_graphs.json()] == [team.graph_id]

async def test_a_public_route_answers_without_a_caller_and_without_looking_one_up(team, monkeypatch):
    @team.api.get("/probe/public")  # outside /api/, whose last route takes any path added after it
    @requires("public")
    def probe(request: Request) -> dict:
        return {"user": request.state.access.user if hasattr(request.state, "access") else None}

    monkeypatch.setattr(team.accounts, "api_caller", lambda raw: pytest.fail("a public route looked up a token"))
    async with team.client("owner") as client:
        answer = await client.get("/probe/public")
    assert (answer.status_code, answer.json()) == (200, {"user": None})
