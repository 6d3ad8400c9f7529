"""The OpenAI-compatible endpoint in process, through the real `openai` SDK (its HTTP client over ASGI):
models, a completion and a streamed completion of a graph without a model (the last output is the answer)."""

from __future__ import annotations

import json
import re

import httpx
import openai
import pytest

from tests.llm.conftest import _fake_server, fake_llm  # noqa: F401
from tests.llm.fake_openai import text
from tests.llm.graphs import MODEL, graph
from tests.store.writes import recorded_writes


def echo_graph() -> dict:
    return graph([("chat", "chat-start", {}), ("say", "prompt-template", {"template": "You said: {message}"})],
                 ["chat.output -> say.input"])


@pytest.fixture
def echo(team) -> str:
    return team.graphs.create("Echo desk", echo_graph(), workspace_id=team.workspace_id).id


def sdk(team, who: str = "owner") -> openai.AsyncOpenAI:
    transport = httpx.AsyncClient(transport=httpx.ASGITransport(app=team.api))
    return openai.AsyncOpenAI(base_url="http://api.test/api/v1", api_key=team.tokens[who], http_client=transport,
                              max_retries=0)


async def test_models_are_the_graphs_with_a_chat_start(team, echo):
    models = await sdk(team).models.list()
    assert [m.id for m in models.data] == [echo]  # the fixture's other graph has a Manual Trigger only


async def test_a_completion_answers_with_the_graph_by_id_or_name(team, echo):
    client = sdk(team, "viewer")  # viewers may chat
    messages = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "first"},
                {"role": "assistant", "content": "You said: first"}, {"role": "user", "content": "hello"}]
    writes = recorded_writes(team.launcher.store)
    for model in (echo, "echo DESK"):
        completion = await client.chat.completions.create(model=model, messages=messages)
        assert {status for _, status in writes} == {"completed"}  # written once, with its end
        assert completion.object == "chat.completion" and completion.model == model
        assert completion.choices[0].message.content == "You said: hello"
        assert completion.choices[0].finish_reason == "stop"
    [run] = [r for r in team.launcher.store.list_runs(echo)][:1]
    assert (run["started_by"], run["started_by_user"]) == ("api", "Vic")


async def test_a_graph_answers_with_what_it_says_not_the_message_it_passed_through(team):
    """Edit Fields keeps the Chat Start's `message` beside the field it sets (its default): the answer is the field."""
    fields = {"fields": [{"key": "response", "value": "Echo: {{ $json.message }}"}]}
    graph_id = team.graphs.create("Fields echo", graph([("chat", "chat-start", {}), ("say", "edit-fields", fields)],
                                                         ["chat.output -> say.input"]),
                                  workspace_id=team.workspace_id).id
    for stream in (False, True):
        answer = await sdk(team).chat.completions.create(model=graph_id, stream=stream,
                                                         messages=[{"role": "user", "content": "Hi"}])
        text = ("".join([c.choices[0].delta.content or "" async for c in answer]) if stream
                else answer.choices[0].message.content)
        assert text == "Echo: Hi"


async def test_a_streamed_completion_uses_openais_chunk_format(team, echo):
    stream = await sdk(team).chat.completions.create(
        model=echo, stream=True, messages=[{"role": "user", "content": [{"type": "text", "text": "parts"}]}])
    chunks = [chunk async for chunk in stream]
    assert chunks[0].choices[0].delta.role == "assistant"
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == "You said: parts"
    assert chunks[-1].choices[0].finish_reason == "stop" and chunks[-1].object == "chat.completion.chunk"
    assert len({c.id for c in chunks}) == 1 and chunks[0].id.startswith("chatcmpl-")


async def test_the_sdk_reads_through_keep_alive_comments_of_a_quiet_graph(team, monkeypatch):
    monkeypatch.setattr("nodeflow_app.runs.detached.KEEPALIVE_S", 0.05)
    slow = graph([("chat", "chat-start", {}), ("wait", "wait", {"amount": 0.3}),
                  ("say", "prompt-template", {"template": "Later: {message}"})],
                 ["chat.output -> wait.input", "wait.output -> say.input"])
    graph_id = team.graphs.create("Slow desk", slow, workspace_id=team.workspace_id).id
    stream = await sdk(team).chat.completions.create(model=graph_id, stream=True,
                                                     messages=[{"role": "user", "content": "hi"}])
    assert "".join([c.choices[0].delta.content or "" async for c in stream]) == "Later: hi"


async def test_errors_come_in_openais_shape(team, echo):
    client = sdk(team)
    with pytest.raises(openai.NotFoundError, match="no graph 'nope' in this workspace"):
        await client.chat.completions.create(model="nope", messages=[{"role": "user", "content": "hi"}])
    with pytest.raises(openai.BadRequestError, match="add a Chat Start"):
        await client.chat.completions.create(model=team.graph_id, messages=[{"role": "user", "content": "hi"}])
    with pytest.raises(openai.AuthenticationError):
        await openai.AsyncOpenAI(base_url="http://api.test/api/v1", api_key="nf_forged", max_retries=0,
                                 http_client=httpx.AsyncClient(transport=httpx.ASGITransport(app=team.api))
                                 ).models.list()


def forged_sdk(team) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url="http://api.test/api/v1", api_key="nf_forged", max_retries=0,
                              http_client=httpx.AsyncClient(transport=httpx.ASGITransport(app=team.api)))


async def test_the_sdk_shows_why_the_caller_or_the_body_was_refused(team, echo):
    """The access check's and the body's refusals were `{"detail": ...}`: the SDK said only "Error code: 401"."""
    hi = [{"role": "user", "content": "hi"}]
    for call in (forged_sdk(team).models.list(), forged_sdk(team).chat.completions.create(model=echo, messages=hi)):
        with pytest.raises(openai.AuthenticationError, match=r"Error code: 401 - a valid API token is required") as e:
            await call
        assert (e.value.code, e.value.type, e.value.param) == ("invalid_api_key", "invalid_request_error", None)
        assert e.value.response.headers["www-authenticate"] == "Bearer"
    with pytest.raises(openai.NotFoundError, match="Error code: 404 - not found") as e:  # a workspace not the token's
        await sdk(team, "outsider").models.list(extra_query={"workspace": team.workspace_id})
    assert e.value.code == "not_found"
    with pytest.raises(openai.UnprocessableEntityError, match="Error code: 422 - messages: Field required") as e:
        await sdk(team).post("/chat/completions", body={"model": echo}, cast_to=object)
    assert (e.value.code, e.value.param) == ("missing", "messages")
    with pytest.raises(openai.UnprocessableEntityError, match="stream: Input should be a valid boolean") as e:
        await sdk(team).chat.completions.create(model=echo, messages=hi, extra_body={"stream": "yes"})
    assert (e.value.code, e.value.param) == ("bool_type", "stream")
    team.api.state.max_body = 1000
    with pytest.raises(openai.APIStatusError, match="Error code: 413 - the request body is larger than") as e:
        await sdk(team).chat.completions.create(model=echo, messages=[{"role": "user", "content": "x" * 2000}])
    assert (e.value.status_code, e.value.code) == (413, "request_too_large")


async def test_the_sdk_shows_why_a_method_the_path_does_not_take_was_refused(team):
    with pytest.raises(openai.APIStatusError, match="Error code: 405 - GET /api/v1/chat/completions is not allowed: "
                                                   "this path takes POST") as e:
        await sdk(team).get("/chat/completions", cast_to=object)
    assert (e.value.status_code, e.value.code, e.value.type) == (405, "method_not_allowed", "invalid_request_error")
    assert e.value.response.headers["allow"] == "POST"


async def test_a_body_that_is_not_json_says_where_in_openais_shape(team, echo):
    async with team.client("owner") as client:
        answer = await client.post("/api/v1/chat/completions", content=b'{"model": "x",\n "messages": [}',
                                   headers={"content-type": "application/json"})
    assert answer.status_code == 422
    assert answer.json() == {"error": {"message": "the body is not valid JSON: Expecting value at line 2, column 15",
                                       "type": "invalid_request_error", "param": None, "code": "json_invalid"}}


async def test_a_lone_surrogate_in_a_message_comes_back_escaped_not_as_a_500(team, echo):
    body = {"model": echo, "messages": [{"role": "user", "content": "a\ud800b"}]}
    headers = {"authorization": f"Bearer {team.tokens['owner']}", "content-type": "application/json"}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=team.api), base_url="http://api.test") as client:
        answer = await client.post("/api/v1/chat/completions", content=json.dumps(body), headers=headers)
        streamed = await client.post("/api/v1/chat/completions", content=json.dumps({**body, "stream": True}),
                                     headers=headers)
    assert answer.status_code == 200 and answer.json()["choices"][0]["message"]["content"] == "You said: a\ud800b"
    assert streamed.text.isascii() and "You said: a\\ud800b" in streamed.text


@pytest.mark.parametrize("change, field", [
    ({"stream": "yes"}, "stream"),
    ({"messages": [{"role": "user", "content": [{"type": "text", "text": {"a": 1}}]}]}, "text"),
    ({"messages": [{"role": "user", "content": 7}]}, "content"),
])
async def test_a_request_openai_would_refuse_is_refused_naming_the_field(team, echo, change, field):
    body = {"model": echo, "messages": [{"role": "user", "content": "hi"}], **change}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=team.api), base_url="http://api.test",
                                 headers={"authorization": f"Bearer {team.tokens['owner']}"}) as client:
        answer = await client.post("/api/v1/chat/completions", json=body)
    error = answer.json()["error"]  # in OpenAI's shape, the message naming each field ("messages.0.content: ...")
    assert answer.status_code == 422 and field in re.split(r"[.:; ]", error["message"]), error


@pytest.mark.parametrize("stream", [False, True])
async def test_a_stopped_run_is_an_error_not_a_finished_answer(team, stream):
    """A run stopped mid-answer came back as 200 with `finish_reason: stop`: a cut (or empty) answer passed off
    as whole. It is an error, as a failed run is (the MCP endpoint and webhooks say so too)."""
    import asyncio

    slow = graph([("chat", "chat-start", {}), ("wait", "wait", {"amount": 3}),
                  ("say", "prompt-template", {"template": "You said: {message}"})],
                 ["chat.output -> wait.input", "wait.output -> say.input"])
    graph_id = team.graphs.create("Slow desk", slow, workspace_id=team.workspace_id).id
    async with team.client("owner") as client:
        call = asyncio.create_task(client.post("/api/v1/chat/completions", timeout=30, json={
            "model": graph_id, "messages": [{"role": "user", "content": "hi"}], "stream": stream}))
        for _ in range(250):
            if team.launcher._live:
                break
            await asyncio.sleep(0.02)
        assert team.launcher.stop(next(iter(team.launcher._live)))
        answer = await call
    if stream:
        assert '"code":"run_stopped"' in answer.text.replace(" ", "") and '"finish_reason":"stop"' not in answer.text
    else:
        assert answer.status_code == 500 and answer.json()["error"]["code"] == "run_stopped"


@pytest.mark.parametrize("stream", [False, True])
async def test_a_draft_an_approval_still_holds_never_reaches_the_caller(team, fake_llm, stream):
    """Chat Start --> Agent --> Approval --approve--> Send: the run pauses; the agent's draft is not the answer."""
    held = graph([("chat", "chat-start", {}), ("draft", "agent", {"model": MODEL, "history": False}),
                  ("ask", "approval", {"prompt": "Send it?"}), ("send", "prompt-template", {"template": "{response}"})],
                 ["chat.output -> draft.input", "draft.output -> ask.input", "ask.approve -> send.input"])
    graph_id = team.graphs.create("Held desk", held, workspace_id=team.workspace_id).id
    fake_llm.script(text(["Secret", " draft"]))
    request = {"model": graph_id, "messages": [{"role": "user", "content": "refund?"}]}
    if stream:
        chunks = await sdk(team).chat.completions.create(**request, stream=True)
        content = "".join([c.choices[0].delta.content or "" async for c in chunks])
    else:
        content = (await sdk(team).chat.completions.create(**request)).choices[0].message.content
    assert len(fake_llm.requests) == 1  # the agent did draft
    assert content.startswith("[waiting for an answer: Send it? (run ") and "draft" not in content
