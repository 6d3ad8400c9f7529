"""/api/v1 runs in process (httpx over ASGI, a real SQLite database, the real launcher): start in the three
modes, read a run, answer an approval, stop a run, and the errors that say why."""

from __future__ import annotations

import asyncio
import json

import pytest

from nodeflow_app.triggers.webhooks import hook_id as address
from tests.api.conftest import fields
from tests.api.sse import sse
from tests.llm.graphs import graph
from tests.store.writes import recorded_writes


def approval_graph() -> dict:
    return graph([("manual", "manual-trigger", {}), ("ok", "approval", {"prompt": "Ship order {{ $json.order }}?"}),
                  ("done", "edit-fields", fields(shipped=True))],
                 ["manual.output -> ok.input", "ok.approve -> done.input"])


def waiting_graph(seconds: float) -> dict:
    return graph([("manual", "manual-trigger", {}), ("wait", "wait", {"amount": seconds}),
                  ("after", "edit-fields", fields(waited=True))],
                 ["manual.output -> wait.input", "wait.output -> after.input"])


async def poll(client, run_id: str, until=lambda run: run["status"] != "running", timeout: float = 20) -> dict:
    for _ in range(int(timeout / 0.05)):
        run = (await client.get(f"/api/v1/runs/{run_id}")).json()
        if until(run):
            return run
        await asyncio.sleep(0.05)
    raise AssertionError(f"the run never got there: {run}")


async def test_async_returns_the_run_id_at_once_and_polling_shows_every_node(team):
    async with team.client("owner") as owner:
        started = await owner.post(f"/api/v1/graphs/{team.graph_id}/runs", json={"input": {"order": 7}})
        assert started.status_code == 202 and started.json()["status"] == "running"
        run = await poll(owner, started.json()["run_id"])
        listed = (await owner.get(f"/api/v1/graphs/{team.graph_id}/runs")).json()
    assert [r["run_id"] for r in listed] == [run["run_id"], team.run_id]
    assert (run["status"], run["started_by"], run["started_by_user"]) == ("completed", "api", "Ada")
    assert [(n["node_id"], n["status"]) for n in run["nodes"]] == [("manual", "completed"), ("done", "completed")]
    assert run["output"] == {"order": 7, "done": True} and run["payload"] == {"order": 7}


async def test_wait_returns_the_final_output_and_the_trigger_default_when_no_input(team):
    writes = recorded_writes(team.launcher.store)
    async with team.client("owner") as owner:
        answer = await owner.post(f"/api/v1/graphs/{team.graph_id}/runs", json={"mode": "wait"})
    assert answer.status_code == 200
    assert (answer.json()["status"], answer.json()["output"]) == ("completed", {"n": 1, "done": True})
    assert sorted(writes) == [("node", "completed")] * 2 + [("run", "completed")]  # written once, with its end


async def test_a_request_without_a_body_starts_a_run_with_the_defaults(team):
    async with team.client("owner") as owner:
        started = await owner.post(f"/api/v1/graphs/{team.graph_id}/runs")
        run = await poll(owner, started.json()["run_id"])
    assert started.status_code == 202 and run["status"] == "completed" and run["output"] == {"n": 1, "done": True}


async def test_the_output_names_each_step_when_several_end_the_graph(team):
    forked = graph([("manual", "manual-trigger", {}), ("a", "edit-fields", fields(a=1)),
                    ("b", "edit-fields", fields(b=2))], ["manual.output -> a.input", "manual.output -> b.input"])
    graph_id = team.graphs.create("Fork", forked, workspace_id=team.workspace_id).id
    async with team.client("owner") as owner:
        run = (await owner.post(f"/api/v1/graphs/{graph_id}/runs", json={"mode": "wait", "input": {}})).json()
    assert run["output"] == {"A": {"a": 1}, "B": {"b": 2}}


async def test_stream_sends_the_run_id_every_event_and_the_run_at_the_end(team):
    async with team.client("owner") as owner:
        answer = await owner.post(f"/api/v1/graphs/{team.graph_id}/runs", json={"mode": "stream", "input": {"x": 1}})
    assert answer.headers["content-type"].startswith("text/event-stream")
    messages = sse(answer.text)
    kinds = [name for name, _ in messages]
    assert kinds[0] == "run" and kinds[-1] == "end" and set(kinds[1:-1]) == {"node"}
    run_id = messages[0][1]["run_id"]
    events = [(data["node_id"], data["event_type"]) for name, data in messages if name == "node"]
    assert events == [("manual", "started"), ("manual", "completed"), ("done", "started"), ("done", "completed")]
    assert all(data["run_id"] == run_id for name, data in messages if name == "node")
    assert messages[-1][1]["status"] == "completed" and messages[-1][1]["output"] == {"x": 1, "done": True}


async def test_a_quiet_stream_sends_keep_alive_comments(team, monkeypatch):
    monkeypatch.setattr("nodeflow_app.runs.detached.KEEPALIVE_S", 0.05)
    graph_id = team.graphs.create("Slow", waiting_graph(0.4), workspace_id=team.workspace_id).id
    async with team.client("owner") as owner:
        answer = await owner.post(f"/api/v1/graphs/{graph_id}/runs", json={"mode": "stream"})
    assert answer.text.count(": keep-alive\n\n") >= 3
    assert sse(answer.text)[-1][1]["output"] == {"waited": True}


async def test_an_approval_pauses_the_run_and_resume_goes_on(team):
    graph_id = team.graphs.create("Approve", approval_graph(), workspace_id=team.workspace_id).id
    async with team.client("owner") as owner:
        paused = (await owner.post(f"/api/v1/graphs/{graph_id}/runs",
                                   json={"mode": "wait", "input": {"order": 7}})).json()
        assert paused["status"] == "paused"
        [waiting] = [n for n in paused["nodes"] if n["status"] == "paused"]
        assert waiting["wait"]["prompt"] == "Ship order 7?" and "approve" in waiting["wait"]["options"]
        refused = await owner.post(f"/api/v1/runs/{paused['run_id']}/resume", json={"decision": "maybe"})
        assert refused.status_code == 409 and "answer one of" in refused.json()["detail"]
        done = await owner.post(f"/api/v1/runs/{paused['run_id']}/resume",
                                json={"decision": "approve", "note": "fine", "mode": "wait"})
        output = done.json()["output"]
        assert done.json()["status"] == "completed" and (output["order"], output["shipped"]) == (7, True)
        assert (output["approval"]["decision"], output["approval"]["by"]) == ("approve", "Ada")
        again = await owner.post(f"/api/v1/runs/{paused['run_id']}/resume", json={"decision": "approve"})
        assert (again.status_code, again.json()["detail"]) == (409, "this run is not waiting for an answer")


async def test_stop_cancels_a_running_run(team):
    graph_id = team.graphs.create("Slow", waiting_graph(30), workspace_id=team.workspace_id).id
    async with team.client("owner") as owner:
        run_id = (await owner.post(f"/api/v1/graphs/{graph_id}/runs", json={})).json()["run_id"]
        await poll(owner, run_id, lambda run: any(n["node_id"] == "wait" and n["status"] == "running"
                                                  for n in run["nodes"]))
        stopped = await owner.post(f"/api/v1/runs/{run_id}/stop")
        assert stopped.json() == {"run_id": run_id, "stopped": True}
        run = await poll(owner, run_id)
    assert run["status"] == "cancelled"


async def test_stop_cancels_a_paused_run_and_says_when_there_is_nothing_to_stop(team):
    graph_id = team.graphs.create("Approve", approval_graph(), workspace_id=team.workspace_id).id
    async with team.client("owner") as owner:
        paused = (await owner.post(f"/api/v1/graphs/{graph_id}/runs",
                                   json={"mode": "wait", "input": {"order": 1}})).json()
        assert paused["status"] == "paused"
        assert (await owner.post(f"/api/v1/runs/{paused['run_id']}/stop")).json()["stopped"] is True
        assert (await owner.get(f"/api/v1/runs/{paused['run_id']}")).json()["status"] == "cancelled"
        again = await owner.post(f"/api/v1/runs/{team.run_id}/stop")  # finished long ago
    assert again.json() == {"run_id": team.run_id, "stopped": False}


async def test_a_bad_request_says_why(team):
    two = graph([("a", "manual-trigger", {}), ("b", "manual-trigger", {})], [])
    graph_id = team.graphs.create("Two triggers", two, workspace_id=team.workspace_id).id
    async with team.client("owner") as owner:
        several = await owner.post(f"/api/v1/graphs/{graph_id}/runs", json={})
        unknown = await owner.post(f"/api/v1/graphs/{graph_id}/runs", json={"trigger": "Z"})
        named = await owner.post(f"/api/v1/graphs/{graph_id}/runs", json={"trigger": "B", "mode": "wait"})
        bad_mode = await owner.post(f"/api/v1/graphs/{graph_id}/runs", json={"mode": "later"})
        missing = await owner.get("/api/v1/runs/nope")
    assert (several.status_code, several.json()["detail"]) == (
        422, "this graph has 2 triggers (A, B): name one in `trigger`")
    assert unknown.json()["detail"] == "no trigger 'Z' in this graph (its triggers: A, B)"
    assert named.json()["trigger_id"] == "b" and named.json()["status"] == "completed"
    assert bad_mode.status_code == 422 and (missing.status_code, missing.json()) == (404, {"detail": "not found"})


async def test_webhook_and_schedule_triggers_are_not_started_here_and_the_answer_says_what_starts_them(team):
    """They run the graph's live version, and only while it is active: the API ran them from the latest version,
    of inactive graphs too. It starts the triggers whose definition lists "api" (a Manual Trigger, ...)."""
    hook = graph([("hook", "webhook-trigger", {"respond": "last_node"}), ("done", "edit-fields", fields(done=True))],
                 ["hook.output -> done.input"])
    timed = graph([("tick", "schedule-trigger", {}), ("done", "edit-fields", fields(done=True))],
                  ["tick.output -> done.input"])
    both = graph([("hook", "webhook-trigger", {}), ("manual", "manual-trigger", {}),
                  ("done", "edit-fields", fields(done=True))],
                 ["hook.output -> done.input", "manual.output -> done.input"])
    hook_id, timed_id, both_id = (team.graphs.create(name, raw, workspace_id=team.workspace_id).id
                                  for name, raw in (("Hooked", hook), ("Timed", timed), ("Both", both)))
    async with team.client("owner") as owner:
        only_hook = await owner.post(f"/api/v1/graphs/{hook_id}/runs", json={"mode": "wait"})
        named_hook = await owner.post(f"/api/v1/graphs/{both_id}/runs", json={"trigger": "HOOK", "mode": "wait"})
        only_timed = await owner.post(f"/api/v1/graphs/{timed_id}/runs", json={"trigger": "tick"})
        manual = await owner.post(f"/api/v1/graphs/{both_id}/runs", json={"mode": "wait"})
        runs = [r for g in (hook_id, timed_id) for r in (await owner.get(f"/api/v1/graphs/{g}/runs")).json()]
    def webhook(graph_id: str) -> str:
        return (f"the API does not start trigger 'HOOK': it is started by a call to its webhook address "
                f"/api/hooks/{address(graph_id, 'hook')} while the graph is active")

    assert (only_hook.status_code, only_hook.json()["detail"]) == (
        422, webhook(hook_id) + "; add a Manual Trigger to start it from the API")
    assert (named_hook.status_code, named_hook.json()["detail"]) == (422, webhook(both_id))
    assert (only_timed.status_code, only_timed.json()["detail"]) == (
        422, "the API does not start trigger 'TICK': it is started by its schedule while the graph is active")
    assert manual.status_code == 200 and manual.json()["trigger_id"] == "manual"  # the one trigger the API starts
    assert runs == []


async def test_chat_start_and_mcp_tool_triggers_are_started_here(team):
    chat = graph([("chat", "chat-start", {}), ("done", "edit-fields", fields(done=True))],
                 ["chat.output -> done.input"])
    tool = graph([("tool", "mcp-tool", {"tool_name": "t", "input_schema": {"type": "object"}}),
                  ("done", "edit-fields", fields(done=True))], ["tool.output -> done.input"])
    async with team.client("owner") as owner:
        for raw, payload in ((chat, "hello"), (tool, {"city": "Paris"})):
            graph_id = team.graphs.create("Entry", raw, workspace_id=team.workspace_id).id
            answer = await owner.post(f"/api/v1/graphs/{graph_id}/runs", json={"input": payload, "mode": "wait"})
            assert answer.status_code == 200 and answer.json()["status"] == "completed", answer.text


async def test_openapi_documents_every_route(team):
    async with team.client() as anonymous:
        schema = (await anonymous.get("/api/v1/openapi.json")).json()
        docs = await anonymous.get("/api/v1/docs")
    assert {"/api/v1/graphs", "/api/v1/graphs/{graph_id}/runs", "/api/v1/runs/{run_id}",
            "/api/v1/runs/{run_id}/resume", "/api/v1/runs/{run_id}/stop"} <= set(schema["paths"])
    assert "RunRequest" in schema["components"]["schemas"] and docs.status_code == 200
    assert schema["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"
    assert schema["paths"]["/api/v1/graphs"]["get"]["security"] == [{"HTTPBearer": []}]


async def test_a_request_that_does_not_validate_is_422_naming_the_field_whatever_it_holds(team):
    """FastAPI's own 422 quotes the value: NaN or a lone surrogate there made it a 500."""
    async with team.client("owner") as client:
        for body in (b'{"mode": NaN}', b'{"mode": "\\ud800"}', b'{"mode": Infinity, "input": 1}'):
            answer = await client.post(f"/api/v1/graphs/{team.graph_id}/runs", content=body,
                                       headers={"content-type": "application/json"})
            assert answer.status_code == 422, answer.text[:300]
            assert [item["loc"] for item in answer.json()["detail"]] == [["body", "mode"]]


async def test_a_lone_surrogate_in_the_input_reads_back_in_every_mode(team):
    """JSON may carry "\\ud800", which UTF-8 cannot: the answers escape it instead of failing with a 500."""
    body = json.dumps({"input": {"text": "a\ud800b"}})  # ASCII JSON: the escape stays an escape on the wire
    headers = {"content-type": "application/json"}
    url = f"/api/v1/graphs/{team.graph_id}/runs"
    async with team.client("owner") as owner:
        started = await owner.post(url, content=body, headers=headers)
        read = await poll(owner, started.json()["run_id"])
        waited = await owner.post(url, content=body.replace("{", '{"mode": "wait", ', 1), headers=headers)
        streamed = await owner.post(url, content=body.replace("{", '{"mode": "stream", ', 1), headers=headers)
    assert read["payload"] == {"text": "a\ud800b"} and read["output"]["text"] == "a\ud800b"
    assert waited.status_code == 200 and waited.json()["output"]["text"] == "a\ud800b"
    assert streamed.text.isascii() and sse(streamed.text)[-1][1]["output"]["text"] == "a\ud800b"


async def test_a_lone_surrogate_in_an_object_key_reads_back_in_every_mode(team):
    """pydantic's JSON mode cannot write such a key: GET /runs/<id> of that run was a 500 for good."""
    body = json.dumps({"input": {"\ud800": 1}})
    headers = {"content-type": "application/json"}
    url = f"/api/v1/graphs/{team.graph_id}/runs"
    async with team.client("owner") as owner:
        started = await owner.post(url, content=body, headers=headers)
        read = await poll(owner, started.json()["run_id"])
        waited = await owner.post(url, content=body.replace("{", '{"mode": "wait", ', 1), headers=headers)
    assert read["payload"] == {"\ud800": 1} and read["output"] == {"\ud800": 1, "done": True}
    assert waited.status_code == 200 and waited.text.isascii() and waited.json()["output"]["\ud800"] == 1


async def test_an_error_that_repeats_client_text_with_a_lone_surrogate_is_no_500(team):
    async with team.client("owner") as owner:
        answer = await owner.post(f"/api/v1/graphs/{team.graph_id}/runs", content=b'{"trigger": "\\ud800"}',
                                  headers={"content-type": "application/json"})
    assert answer.status_code == 422 and answer.text.isascii()
    assert answer.json()["detail"] == "no trigger '\ud800' in this graph (its triggers: MANUAL)"


@pytest.mark.parametrize("raw, problem", [
    ('{"x": NaN}', "$.x: nan is not a number JSON can hold"),
    ("[" * 300 + "]" * 300, "nested deeper than 100"),
])
async def test_an_input_no_run_can_carry_is_a_422_naming_why(team, raw, problem):
    async with team.client("owner") as owner:
        answer = await owner.post(f"/api/v1/graphs/{team.graph_id}/runs", content=f'{{"input": {raw}}}',
                                  headers={"content-type": "application/json"})
        runs = (await owner.get(f"/api/v1/graphs/{team.graph_id}/runs")).json()
    assert answer.status_code == 422, answer.text
    [field] = answer.json()["detail"]
    assert field["loc"] == ["body", "input"] and problem in field["msg"], field
    assert [r["run_id"] for r in runs] == [team.run_id]  # no run was started


async def test_a_misspelt_field_is_a_422_naming_it_not_a_run_with_the_default_input(team):
    async with team.client("owner") as owner:
        started = await owner.post(f"/api/v1/graphs/{team.graph_id}/runs", json={"imput": "hi"})
        resumed = await owner.post(f"/api/v1/runs/{team.run_id}/resume", json={"decision": "approve", "nodeid": "x"})
        runs = (await owner.get(f"/api/v1/graphs/{team.graph_id}/runs")).json()
    assert (started.status_code, started.json()) == (422, {"detail": [
        {"loc": ["body", "imput"], "msg": "unknown field 'imput'", "type": "extra_forbidden"}]})
    assert (resumed.status_code, resumed.json()["detail"][0]["msg"]) == (422, "unknown field 'nodeid'")
    assert [r["run_id"] for r in runs] == [team.run_id]  # no run was started


async def test_a_body_that_is_not_json_says_what_is_wrong_and_where(team):
    async with team.client("owner") as owner:
        answer = await owner.post(f"/api/v1/graphs/{team.graph_id}/runs", content=b'{\n  "input": hi\n}',
                                  headers={"content-type": "application/json"})
    assert (answer.status_code, answer.json()) == (422, {"detail": [
        {"loc": ["body"], "msg": "the body is not valid JSON: Expecting value at line 2, column 12",
         "type": "json_invalid"}]})


async def test_an_object_without_a_message_sent_to_a_chat_graph_fails_saying_what_it_needs(team):
    chat = team.graphs.create("Chat", graph([("chat", "chat-start", {})], []), workspace_id=team.workspace_id).id
    async with team.client("owner") as owner:
        run = (await owner.post(f"/api/v1/graphs/{chat}/runs", json={"input": {"order": 42}, "mode": "wait"})).json()
        said = (await owner.post(f"/api/v1/graphs/{chat}/runs", json={"input": "hello", "mode": "wait"})).json()
    assert run["status"] == "failed" and 'Chat Start needs a message: send {"message": "..."}' in run["error"]
    assert said["status"] == "completed" and said["output"]["message"] == "hello"
