"""A path under /api/ that no route takes, or a method its route does not take, answers JSON as every API error
does, also with Reflex's backend and front end mounted at "" behind the API (as `make run` serves it: there the
request fell through to the front end's HTML 404 page). The real server: tests/e2e/test_api.py."""

from __future__ import annotations

import httpx
import pytest
from starlette.applications import Starlette
from starlette.responses import HTMLResponse, PlainTextResponse
from starlette.routing import Route

from nodeflow_app.api.app import create_api


def served_like_make_run(api):
    """`api` (the API app) with a stand-in for what Reflex mounts at "" under `make run` (rx.App.__call__): the front end,
    which answers any path with its HTML 404 page and any method but GET with a plain-text 405."""
    def front_end(request):
        if request.method != "GET":
            return PlainTextResponse("Method Not Allowed", 405)
        return HTMLResponse("<html>404: This page could not be found.</html>", 404)

    api.mount("", Starlette(routes=[Route("/{path:path}", front_end, methods=["GET", "POST", "PUT", "DELETE"])]))
    return api


REFUSED = [
    ("GET", "/api/mcp/WS", 405, "DELETE, POST"),
    ("GET", "/api/v1/runs/RUN/stop", 405, "POST"),
    ("DELETE", "/api/v1/graphs", 405, "GET"),
    ("GET", "/api/v1/graphs/GRAPH", 404, None),
    ("GET", "/api/v1/nothing", 404, None),
    ("POST", "/api/nothing/at/all", 404, None),
]


@pytest.mark.parametrize("served", [False, True], ids=["bare", "served"])
@pytest.mark.parametrize("method, path, status, allow", REFUSED, ids=[f"{m} {p}" for m, p, *_ in REFUSED])
async def test_an_unknown_api_path_or_method_answers_json_naming_it(method, path, status, allow, served):
    api = served_like_make_run(create_api()) if served else create_api()
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=api), base_url="http://api.test") as client:
        answer = await client.request(method, path)
    assert (answer.status_code, answer.headers["content-type"]) == (status, "application/json"), answer.text
    assert answer.headers.get("allow") == allow
    assert f"{method} {path}" in answer.json()["detail"]


OPENAI_REFUSED = [("PUT", "/api/v1/chat/completions", "POST"), ("GET", "/api/v1/chat/completions", "POST"),
                  ("POST", "/api/v1/models", "GET")]


@pytest.mark.parametrize("served", [False, True], ids=["bare", "served"])
@pytest.mark.parametrize("method, path, allow", OPENAI_REFUSED, ids=[f"{m} {p}" for m, p, _ in OPENAI_REFUSED])
async def test_a_wrong_method_on_an_openai_route_answers_in_openais_shape(method, path, allow, served):
    """OpenAI's clients show an error's message only from `{"error": {...}}` (tests/api/test_openai_compat.py)."""
    api = served_like_make_run(create_api()) if served else create_api()
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=api), base_url="http://api.test") as client:
        answer = await client.request(method, path)
    assert (answer.status_code, answer.headers["content-type"], answer.headers["allow"]) == (
        405, "application/json", allow)
    assert answer.json() == {"error": {"message": f"{method} {path} is not allowed: this path takes {allow}",
                                       "type": "invalid_request_error", "param": None, "code": "method_not_allowed"}}


async def test_the_pages_and_the_known_routes_still_answer_behind_it(team):
    served_like_make_run(team.api)
    async with team.client("owner") as client:
        assert (await client.get("/graphs/x")).headers["content-type"].startswith("text/html")  # the front end's
        assert [g["id"] for g in (await client.get("/api/v1/graphs")).json()] == [team.graph_id]
        assert (await client.get("/api/v1/openapi.json")).status_code == 200
