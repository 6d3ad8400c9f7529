"""Webhook calls through the API in process: the active version runs, the call's checks (method, token,
Basic, size), the three ways to answer, the test address, and runs recorded as started by "webhook"."""

from __future__ import annotations

import asyncio
import base64
import json
import logging

import pytest
from sqlalchemy import select

from nodeflow_app.api.hooks import FAILED
from nodeflow_app.secret_values import seal
from nodeflow_app.store.connections import ConnectionStore
from nodeflow_app.store.runs import RUNS
from tests.api.sse import sse
from tests.llm.graphs import graph
from tests.store.writes import recorded_writes
from nodeflow_app.triggers.webhooks import hook_id
from tests.triggers.conftest import hooked


async def settled(hooks, run_id: str) -> dict:
    for _ in range(200):
        hooks.launcher.store.flush()
        run = hooks.launcher.store.get_run(run_id)
        if run and run["status"] not in ("running", "pending"):
            return run
        await asyncio.sleep(0.02)
    raise AssertionError(f"run {run_id} did not finish")


async def test_answers_with_the_last_node_output_status_and_headers(hooks):
    _, hook = hooks.create(hooked({"respond": "last_node", "status_code": 201,
                                   "response_headers": [{"name": "X-Shop", "value": "yes"}]}))
    async with hooks.client() as client:
        answer = await client.post(f"/api/hooks/{hook}?source=shop", json={"n": 7})
    assert answer.status_code == 201 and answer.headers["x-shop"] == "yes"
    assert answer.json() == {"n": 7, "done": True}
    run = await settled(hooks, answer.headers["x-run-id"])
    assert run["started_by"] == "webhook" and run["status"] == "completed"
    payload = run["payload"]
    assert payload["body"] == {"n": 7} and payload["query"] == {"source": "shop"}
    assert payload["headers"]["content-type"] == "application/json"


async def test_a_run_answered_when_it_ends_is_written_once_with_its_end(hooks):
    _, hook = hooks.create(hooked({"respond": "last_node"}))
    writes = recorded_writes(hooks.launcher.store)
    async with hooks.client() as client:
        answer = await client.post(f"/api/hooks/{hook}", json={"n": 3})
    assert answer.json() == {"n": 3, "done": True}
    assert sorted(writes) == [("node", "completed")] * 3 + [("run", "completed")]  # nothing `running` first
    assert (await settled(hooks, answer.headers["x-run-id"]))["status"] == "completed"


def failing(hook: dict) -> dict:
    """Webhook -> HTTP Request to an internal address (the SSRF guard refuses it: the run fails naming it)."""
    return graph([("hook", "webhook-trigger", hook),
                  ("fetch", "http-request", {"method": "GET", "url": "http://127.0.0.1:9/admin/backup"})],
                 ["hook.output -> fetch.input"])


async def test_a_failed_run_answers_500_without_its_error_unless_the_node_says_so(hooks):
    """The error of a failed run (here an internal address) went to whoever called the webhook."""
    _, quiet = hooks.create(failing({"respond": "last_node"}))
    _, telling = hooks.create(failing({"respond": "last_node", "error_details": True}))
    async with hooks.client() as client:
        answer, told = await client.post(f"/api/hooks/{quiet}", json={}), await client.post(f"/api/hooks/{telling}")
    assert answer.status_code == told.status_code == 500
    run_id = answer.headers["x-run-id"]
    assert answer.json() == {"run_id": run_id, "status": "failed", "error": FAILED}
    run = await settled(hooks, run_id)
    assert run["status"] == "failed" and "127.0.0.1" in run["error"]  # the record keeps it
    assert told.json()["status"] == "failed" and "127.0.0.1" in told.json()["error"]


async def test_at_once_answers_202_with_the_run_id_and_the_run_goes_on(hooks):
    _, hook = hooks.create(hooked())
    async with hooks.client() as client:
        answer = await client.post(f"/api/hooks/{hook}", json={"n": 1})
    assert answer.status_code == 202 and answer.json()["status"] == "started"
    with hooks.launcher.engine.connect() as conn:  # on record when its id is given out, before any flush here
        assert conn.execute(select(RUNS.c.started_by).where(RUNS.c.id == answer.json()["run_id"])).scalar() == "webhook"
    run = await settled(hooks, answer.json()["run_id"])
    assert run["status"] == "completed" and run["started_by"] == "webhook"


async def test_streams_the_run_in_the_apis_event_format_ending_with_its_outcome(hooks):
    """The API's stream (docs/api.md): `run`, a `node` per event, `end`; `end` is what the webhook's other answers
    tell (run id, status, output), not the run's record with its payload and every node's inputs."""
    _, hook = hooks.create(hooked({"respond": "stream"}))
    async with hooks.client() as client:
        answer = await client.post(f"/api/hooks/{hook}", json={"n": 3})
    assert answer.headers["content-type"].startswith("text/event-stream")
    assert (answer.headers["cache-control"], answer.headers["x-accel-buffering"]) == ("no-cache", "no")
    run_id, messages = answer.headers["x-run-id"], sse(answer.text)
    assert messages[0] == ("run", {"run_id": run_id})
    nodes = [(data["node_id"], data["event_type"]) for name, data in messages[1:-1] if name == "node"]
    assert nodes == [(node, step) for node in ("hook", "pick", "done") for step in ("started", "completed")]
    assert messages[-1] == ("end", {"run_id": run_id, "status": "completed", "output": {"n": 3, "done": True}})


async def test_a_quiet_streamed_webhook_run_sends_keep_alive_comments(hooks, monkeypatch):
    monkeypatch.setattr("nodeflow_app.runs.detached.KEEPALIVE_S", 0.05)
    slow = graph([("hook", "webhook-trigger", {"respond": "stream"}), ("wait", "wait", {"amount": 0.4}),
                  ("done", "edit-fields", {"fields": [{"name": "done", "value": True}]})],
                 ["hook.output -> wait.input", "wait.output -> done.input"])
    _, hook = hooks.create(slow)
    async with hooks.client() as client:
        answer = await client.post(f"/api/hooks/{hook}", json={})
    assert answer.text.count(": keep-alive\n\n") >= 3
    assert sse(answer.text)[-1][1]["status"] == "completed"


async def test_an_inactive_graph_or_an_unknown_address_is_404(hooks):
    graph_id, hook = hooks.create(hooked())
    hooks.activation.deactivate(graph_id)
    async with hooks.client() as client:
        assert (await client.post(f"/api/hooks/{hook}", json={})).status_code == 404
        assert (await client.post("/api/hooks/nothing-here", json={})).status_code == 404


async def test_the_active_version_runs_not_later_saves(hooks):
    graph_id, hook = hooks.create(hooked({"respond": "last_node"}, fields={"v": "one"}))
    hooks.graphs.save(graph_id, hooked({"respond": "last_node"}, fields={"v": "two"}))
    async with hooks.client() as client:
        assert (await client.post(f"/api/hooks/{hook}", json={"n": 1})).json()["v"] == "one"
        hooks.activation.activate(graph_id)  # switching on again makes the latest version live
        assert (await client.post(f"/api/hooks/{hook}", json={"n": 1})).json()["v"] == "two"


async def test_methods_other_than_the_chosen_ones_are_405(hooks):
    _, hook = hooks.create(hooked({"methods": "GET, PUT"}))
    async with hooks.client() as client:
        refused = await client.post(f"/api/hooks/{hook}", json={})
        assert refused.status_code == 405 and refused.headers["allow"] == "GET, PUT"
        assert (await client.get(f"/api/hooks/{hook}?n=1")).status_code == 202


async def test_a_payload_over_the_limit_is_413_with_a_clear_message(hooks):
    _, hook = hooks.create(hooked({"max_body_kb": 1}))
    async with hooks.client() as client:
        refused = await client.post(f"/api/hooks/{hook}", content=b"x" * 2048)
        assert refused.status_code == 413
        assert refused.json()["detail"] == "the payload is larger than this webhook's limit of 1 KB"
        assert (await client.post(f"/api/hooks/{hook}", content=b"x" * 1000)).status_code == 202


async def test_a_header_token_from_a_secret_parameter(hooks):
    _, hook = hooks.create(hooked({"auth": "header", "auth_name": "X-Token", "auth_secret": seal("s3cret")}))
    async with hooks.client() as client:
        refused = await client.post(f"/api/hooks/{hook}", json={})
        assert refused.status_code == 401 and "X-Token header" in refused.json()["detail"]
        assert (await client.post(f"/api/hooks/{hook}", json={}, headers={"x-token": "wrong"})).status_code == 401
        accepted = await client.post(f"/api/hooks/{hook}", json={}, headers={
            "x-token": "s3cret", "authorization": "Bearer sk-downstream", "cookie": "session=abc", "x-shop": "7"})
        assert accepted.status_code == 202
    # The credentials that came with the call are not in the run's record (everyone who sees the runs sees it).
    headers = (await settled(hooks, accepted.json()["run_id"]))["payload"]["headers"]
    assert {headers[h] for h in ("x-token", "authorization", "cookie")} == {"(hidden)"} and headers["x-shop"] == "7"
    assert "s3cret" not in json.dumps(headers) and "sk-downstream" not in json.dumps(headers)


async def test_a_call_without_the_token_is_refused_before_its_body_is_read(hooks):
    """The body (up to the webhook's limit, 100 MB at most) was read into memory before the method and the token
    were checked: anyone could make the server hold that much per call."""
    _, hook = hooks.create(hooked({"auth": "header", "auth_name": "X-Token", "auth_secret": seal("s3cret"),
                                   "max_body_kb": 102400}))
    sent = []

    async def body():
        for _ in range(1000):
            sent.append(1)
            yield b"x" * 10_240

    async with hooks.client() as client:
        answer = await client.post(f"/api/hooks/{hook}", content=body(),
                                   headers={"content-type": "application/octet-stream"})
    assert answer.status_code == 401
    assert len(sent) < 10, f"the server read {len(sent) * 10} KB of an unauthenticated call before refusing it"


async def test_basic_authentication_from_a_workspace_connection(hooks):
    ConnectionStore(hooks.launcher.engine).set("hook-login", "http_basic", {"username": "shop", "password": "pw"})
    _, hook = hooks.create(hooked({"auth": "basic", "auth_connection": "hook-login"}))

    def basic(user: str, password: str) -> dict:
        return {"authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}

    async with hooks.client() as client:
        refused = await client.post(f"/api/hooks/{hook}", json={}, headers=basic("shop", "nope"))
        assert refused.status_code == 401 and refused.headers["www-authenticate"].startswith("Basic")
        assert (await client.post(f"/api/hooks/{hook}", json={}, headers=basic("shop", "pw"))).status_code == 202


@pytest.mark.parametrize("auth", [{"auth_connection": "shop-key"}, {"auth_secret": ""}])
async def test_authentication_not_set_up_is_a_500_telling_the_caller_nothing_of_the_workspace(hooks, caplog, auth):
    workspace_id = "team-workspace-7"
    graph_id = hooks.graphs.create("Hooked", hooked({"auth": "header", "auth_name": "X-Token", **auth}),
                                   workspace_id=workspace_id).id
    hooks.activation.activate(graph_id)
    hook = hook_id(graph_id, "hook")
    with caplog.at_level(logging.WARNING, logger="nodeflow.triggers.webhooks"):
        async with hooks.client() as client:
            refused = await client.post(f"/api/hooks/{hook}", json={})
    assert (refused.status_code, refused.json()) == (
        500, {"detail": "the webhook's authentication is not set up (the server's log says why)"})
    assert "shop-key" not in refused.text and workspace_id not in refused.text
    assert f"webhook hook of graph {graph_id}: its authentication is not set up" in caplog.text
    assert ("shop-key" if "auth_connection" in auth else "fill in its header name") in caplog.text


async def test_a_header_token_from_a_connection_is_not_recorded(hooks):
    """The header's name comes from the connection, not the node: it is hidden in the run's payload all the same
    (viewers read payloads; only owners see connection values)."""
    ConnectionStore(hooks.launcher.engine).set("hook-key", "http_header", {"header": "X-Hook-Key", "value": "c0nn"})
    _, hook = hooks.create(hooked({"auth": "header", "auth_connection": "hook-key"}))
    async with hooks.client() as client:
        assert (await client.post(f"/api/hooks/{hook}", json={}, headers={"x-hook-key": "nope"})).status_code == 401
        accepted = await client.post(f"/api/hooks/{hook}", json={}, headers={"x-hook-key": "c0nn", "x-shop": "7"})
        assert accepted.status_code == 202
    headers = (await settled(hooks, accepted.json()["run_id"]))["payload"]["headers"]
    assert headers["x-hook-key"] == "(hidden)" and headers["x-shop"] == "7" and "c0nn" not in json.dumps(headers)


async def test_the_test_address_serves_one_listening_editor_with_the_stored_graph(hooks):
    graph_id, hook = hooks.create(hooked({"respond": "last_node"}), active=False)
    async with hooks.client() as client:
        assert (await client.post(f"/api/hooks-test/{hook}", json={"n": 1})).status_code == 404
        hooks.triggers.listen(hook, graph_id, "hook", seconds=60)
        answer = await client.post(f"/api/hooks-test/{hook}", json={"n": 5})
        assert answer.json() == {"n": 5, "done": True}
        assert (await client.post(f"/api/hooks-test/{hook}", json={"n": 6})).status_code == 404  # served once
    heard = hooks.triggers.test_listener(hook)
    assert heard.called and heard.payload["body"] == {"n": 5} and heard.run_id == answer.headers["x-run-id"]
    assert (await settled(hooks, heard.run_id))["started_by"] == "test"


async def test_invalid_json_is_400(hooks):
    _, hook = hooks.create(hooked())
    async with hooks.client() as client:
        answer = await client.post(f"/api/hooks/{hook}", content=b"{nope", headers={"content-type": "application/json"})
    assert answer.status_code == 400 and "not valid JSON" in answer.json()["detail"]


async def test_json_no_run_can_carry_is_400_naming_why(hooks):
    """Nesting Python's parser cannot follow (it raised RecursionError: a 500, without signing in), and NaN or
    nesting past the runs' limit, which would only fail the run later."""
    _, hook = hooks.create(hooked({"respond": "last_node"}))
    cases = {b"[" * 100_000 + b"]" * 100_000: "the body's JSON is nested deeper than 100 levels",
             b'{"n": NaN}': "the body cannot be used: $.n: nan is not a number JSON can hold",
             b"[" * 150 + b"]" * 150: "the body cannot be used: $"}
    async with hooks.client() as client:
        for body, message in cases.items():
            answer = await client.post(f"/api/hooks/{hook}", content=body, headers={"content-type": "application/json"})
            assert answer.status_code == 400 and answer.json()["detail"].startswith(message), answer.text[:300]


async def test_a_form_body_becomes_an_object(hooks):
    _, hook = hooks.create(hooked({"respond": "last_node"}))
    async with hooks.client() as client:
        answer = await client.post(f"/api/hooks/{hook}", data={"n": "9"})
    assert answer.json() == {"n": "9", "done": True}


def test_a_call_its_checks_leave_as_it_is_is_not_copied(hooks):
    """The route builds each call once (issue 17: a webhook call's CPU): no copy when no token header is named."""
    from nodeflow_app.triggers.webhooks import Call, Webhooks

    _, hook = hooks.create(hooked())
    webhooks = Webhooks(hooks.launcher, hooks.triggers, hooks.graphs)
    call = Call("POST", {"content-type": "application/json"}, {}, b"")
    assert webhooks.check(webhooks.live(hook), call) is call


def test_the_answer_is_encoded_without_building_an_encoder_per_call(monkeypatch):
    import datetime

    from nodeflow_app.api import hooks as route

    monkeypatch.setattr(json, "JSONEncoder", None)  # json.dumps(value, default=str) would build one here
    answer = route._json({"at": datetime.date(2026, 1, 2), "text": "é"}, 200, {})
    assert answer.body == b'{"at": "2026-01-02", "text": "\\u00e9"}'


def test_a_live_address_has_one_target_per_active_version_reading_its_settings_once(hooks):
    from nodeflow_app.triggers.webhooks import Webhooks

    graph_id, hook = hooks.create(hooked({"respond": "last_node", "methods": "POST, PUT", "status_code": 201}))
    webhooks = Webhooks(hooks.launcher, hooks.triggers, hooks.graphs)
    target = webhooks.live(hook)
    assert webhooks.live(hook) is target
    assert (target.respond, target.methods, target.answer.status) == ("last_node", ["POST", "PUT"], 201)
    hooks.graphs.save(graph_id, hooked({"respond": "last_node", "status_code": 202}))
    assert webhooks.live(hook) is target  # a save is not live until the graph is switched on again
    hooks.activation.activate(graph_id)  # a new active version: a new target
    assert webhooks.live(hook).answer.status == 202
