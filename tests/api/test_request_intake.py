"""How /api/v1 takes a request body: a caller without access is refused before a byte of it is read, a body past
the API's limit is a 413 naming the limit, and JSON Python cannot hold is a 422 naming why (not FastAPI's 400)."""

from __future__ import annotations

import httpx
import pytest

from nodeflow_app.api.app import create_api
from nodeflow_app.api.intake import MAX_BODY_ENV, max_body_bytes
from tests.api.conftest import said

CHUNKS = 2000  # of 10 KB: a 20 MB body


def streamed(sent: list[int]):
    """A JSON body of about 20 MB, sent in chunks as the server asks for them (counted in `sent`)."""
    async def body():
        yield b'{"input": ['
        for _ in range(CHUNKS):
            sent.append(1)
            yield b"1," * 5_000
        yield b"1]}"
    return body()


def routes(team) -> list[str]:
    return [f"/api/v1/graphs/{team.graph_id}/runs", "/api/v1/chat/completions", f"/api/v1/runs/{team.run_id}/resume"]


@pytest.mark.parametrize("authorization", [None, "Bearer nf_wrong"])
async def test_a_caller_without_a_valid_token_is_refused_before_the_body_is_read(team, authorization):
    headers = {"content-type": "application/json"} | ({"authorization": authorization} if authorization else {})
    for path in routes(team):
        sent: list[int] = []
        async with team.client() as client:
            refused = await client.post(path, content=streamed(sent), headers=headers)
        assert refused.status_code == 401, path
        assert said(refused) == "a valid API token is required (Authorization: Bearer nf_...)"
        assert len(sent) <= 2, f"{path}: the server read {len(sent) * 10} KB of an unauthenticated call"


async def test_a_role_too_weak_is_refused_before_the_body_is_read(team):
    sent: list[int] = []
    async with team.client("viewer") as viewer:  # viewers may not start runs
        refused = await viewer.post(f"/api/v1/graphs/{team.graph_id}/runs", content=streamed(sent),
                                    headers={"content-type": "application/json"})
    assert refused.status_code == 403 and len(sent) <= 2


def small_limit_api(team, monkeypatch):
    monkeypatch.setenv(MAX_BODY_ENV, "0.5")
    api = create_api(team.api.state.services)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=api), base_url="http://api.test",
                             headers={"authorization": f"Bearer {team.tokens['owner']}"})


async def test_a_body_past_the_limit_is_413_naming_it_announced_or_streamed(team, monkeypatch):
    too_big = b'{"input": "' + b"x" * 600_000 + b'"}'
    async with small_limit_api(team, monkeypatch) as owner:
        announced = await owner.post(f"/api/v1/graphs/{team.graph_id}/runs", content=too_big,
                                     headers={"content-type": "application/json"})
        sent: list[int] = []
        chunked = await owner.post("/api/v1/chat/completions", content=streamed(sent),
                                   headers={"content-type": "application/json"})
        fits = await owner.post(f"/api/v1/graphs/{team.graph_id}/runs", json={"input": "x" * 400_000})
    message = "the request body is larger than the API's limit of 0.5 MB (NODEFLOW_API_MAX_BODY_MB)"
    assert (announced.status_code, announced.json()) == (413, {"detail": message})
    assert (chunked.status_code, said(chunked)) == (413, message)  # in OpenAI's shape there
    assert len(sent) < 60  # read up to the limit, not the whole 20 MB
    assert fits.status_code == 202


def test_the_limit_is_10_mb_unless_set_and_a_wrong_setting_says_which(monkeypatch):
    monkeypatch.delenv(MAX_BODY_ENV, raising=False)
    assert max_body_bytes() == 10 * 1024 * 1024
    monkeypatch.setenv(MAX_BODY_ENV, "ten")
    with pytest.raises(ValueError, match="NODEFLOW_API_MAX_BODY_MB must be a number of megabytes above 0, not 'ten'"):
        max_body_bytes()


@pytest.mark.parametrize(("body", "why"), [
    (b'{"input": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
     "the JSON is nested too deeply (a run carries at most 100 levels)"),
    (b'{"input": 1' + b"0" * 5_000 + b"}", "a whole number of over 4,300 digits is not valid JSON here"),
    (b'{"input": "\xff"}', "the body is not UTF-8 text"),
])
async def test_json_python_cannot_hold_is_a_422_naming_why(team, body, why):
    async with team.client("owner") as owner:
        for path in routes(team):
            refused = await owner.post(path, content=body, headers={"content-type": "application/json"})
            assert refused.status_code == 422, path
            if "chat/completions" in path:  # OpenAI's shape
                assert refused.json() == {"error": {"message": why, "type": "invalid_request_error", "param": None,
                                                    "code": "json_invalid"}}
            else:
                assert refused.json() == {"detail": [{"loc": ["body"], "msg": why, "type": "json_invalid"}]}
