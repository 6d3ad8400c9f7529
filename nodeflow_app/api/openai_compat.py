"""OpenAI-compatible chat completions over graphs with a Chat Start, so existing OpenAI clients talk to a graph.

`model` is a graph of the caller's workspace (its id, or its name). The last user message is the Chat
Start's message; each request is one turn (the graph keeps no memory between requests here: OpenAI
clients resend the conversation, and the graph decides its own prompts). The answer's text is what the
run's answering nodes streamed as tokens (nodeflow_app.chat.answer, as in the chat: never a draft an Approval
still holds), else the primary text of the graph's final output (graph_runner.final_output).
`stream: true` answers in OpenAI's server-sent chunk format, ending with `data: [DONE]`. The run is started
by "api" through the launcher and goes on if the client leaves. Every error, refusals of the caller, of the
body and of a method the path does not take included, is in OpenAI's shape (`{"error": {"message", "type",
"param", "code"}}`): OpenAI's SDKs show its message, and only "Error code: 401" for the API's `{"detail": ...}`.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import aclosing
from typing import Any, Literal

from fastapi import APIRouter, Depends, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, StrictBool, StrictStr
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException

from nodeflow_app.api.access import ApiAccess, authorize, requires
from nodeflow_app.api.intake import CallerFirst, body_problems
from nodeflow_app.api.responses import AsciiJSONResponse, event_data
from nodeflow_app.api.run_stream import KEEP_ALIVE
from nodeflow_app.runs import detached as driver_module
from nodeflow_app.runs.detached import RunDriver, drive
from nodeflow_app.chat.adapter import said
from nodeflow_app.chat.answer import answer_nodes
from nodeflow_app.chat.service import starts_chats
from nodeflow_app.contract import NodeEvent
from nodeflow_app.runs.graph_runner import final_output
from nodeflow_app.runtime.graph import GraphInvalid
from nodes._helpers import to_text

STARTED_BY = "api"
# OpenAI's codes for the refusals every route shares (the access check's, the body limit's).
REFUSAL_CODES = {401: "invalid_api_key", 403: "permission_denied", 404: "not_found", 413: "request_too_large"}


class ApiError(Exception):
    def __init__(self, status: int, message: str, code: str, param: str | None = None,
                 headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status, self.message, self.code, self.param, self.headers = status, message, code, param, headers

    def response(self) -> AsciiJSONResponse:
        kind = "invalid_request_error" if self.status < 500 else "server_error"
        error = {"message": self.message, "type": kind, "param": self.param, "code": self.code}
        return AsciiJSONResponse({"error": error}, self.status, headers=self.headers)


class OpenAIErrors(CallerFirst):
    """A CallerFirst route whose refusals (401, 403, 404, 413 and the 422 of a body that does not validate) are in
    OpenAI's error shape instead of the API's `{"detail": ...}`."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handle = super().get_route_handler()

        async def openai_errors(request: Request) -> Response:
            try:
                return await handle(request)
            except RequestValidationError as error:
                return _invalid(error).response()
            except HTTPException as error:
                code = REFUSAL_CODES.get(error.status_code, "invalid_request")
                return ApiError(error.status_code, str(error.detail), code, headers=error.headers).response()

        return openai_errors

    @staticmethod
    def method_refused(message: str, headers: dict[str, str]) -> Response:
        """The 405 of a method this path does not take (app.unknown_api_path answers it: no route here matches)."""
        return ApiError(405, message, "method_not_allowed", headers=headers).response()


def _invalid(error: RequestValidationError) -> ApiError:
    """The 422 of a body that does not validate: each field and why, `param` the first field ("messages.0.content")."""
    problems = body_problems(error)
    fields = [".".join(str(part) for part in problem["loc"][1:]) for problem in problems]  # past "body"
    message = "; ".join(f"{field}: {p['msg']}" if field else p["msg"] for field, p in zip(fields, problems))
    code, param = (problems[0]["type"], fields[0] or None) if problems else ("invalid_request", None)
    return ApiError(422, message or "the request does not validate", code, param)


router = APIRouter(prefix="/api/v1", tags=["openai"], route_class=OpenAIErrors)


class ContentPart(BaseModel):
    model_config = ConfigDict(extra="allow")  # image_url, ...: only the text parts reach the graph
    type: str
    text: StrictStr | None = None


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: str
    content: StrictStr | list[ContentPart] | None = None


class ChatCompletionRequest(BaseModel):
    model_config = ConfigDict(extra="allow")  # temperature, max_tokens, ...: the graph's nodes decide those
    model: str
    messages: list[ChatMessage]
    stream: StrictBool = False  # "yes" is refused, as OpenAI does, rather than read as true


class ModelOut(BaseModel):
    id: str
    object: Literal["model"] = "model"
    created: int
    owned_by: str = "nodeflow"
    name: str


class ModelList(BaseModel):
    object: Literal["list"] = "list"
    data: list[ModelOut]


@router.get("/models", response_model=ModelList, summary="Graphs with a Chat Start, as OpenAI models")
@requires("view")
def list_models(request: Request, access: ApiAccess = Depends(authorize)) -> ModelList:
    return ModelList(data=[ModelOut(id=g.id, created=int(g.updated_at), name=g.name)
                           for g in _chat_graphs(request.app.state.services, access.workspace_id)])


@router.post("/chat/completions", summary="OpenAI-compatible chat completions with a graph as the model")
@requires("chat")
async def chat_completions(body: ChatCompletionRequest, request: Request, access: ApiAccess = Depends(authorize)):
    try:
        text = _last_user_text(body.messages)
        run = await run_in_threadpool(_start, request.app.state.services, access.workspace_id, body.model, text,
                                      not body.stream)
    except ApiError as error:
        return error.response()
    driver = drive(run, run.events())
    completion_id, created = f"chatcmpl-{run.run_id}", int(time.time())
    answers = answer_nodes(run.plan)
    if body.stream:
        chunks = _chunks(driver, driver.listen(driver_module.KEEPALIVE_S), answers, completion_id, created,
                         body.model)
        return StreamingResponse(chunks, media_type="text/event-stream", headers={"cache-control": "no-cache"})
    tokens: list[str] = []
    async with aclosing(driver.listen()) as events:
        async for event in events:
            tokens.append(_token(event, answers))
    if (problem := _unfinished(run)) is not None:
        return ApiError(500, problem[0], problem[1]).response()
    return {"id": completion_id, "object": "chat.completion", "created": created, "model": body.model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": _answer(run, "".join(tokens))},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}}


# -- helpers ---------------------------------------------------------------------------------------------

def _chat_graphs(services: Any, workspace_id: str | None) -> list[Any]:
    graphs, registry = services.graphs(), services.launcher().registry
    found = []
    for summary in graphs.list(workspace_id=workspace_id):
        stored = graphs.get(summary.id)
        if stored and any(starts_chats(registry, n.get("type", "")) for n in stored.graph.get("nodes", [])):
            found.append(summary)
    return found


def _graph_id(services: Any, workspace_id: str | None, model: str) -> str:
    """The graph `model` names in the workspace: its id, else its name (any case)."""
    graphs = services.graphs().list(workspace_id=workspace_id)
    for graph in graphs:
        if model == graph.id:
            return graph.id
    named = [g.id for g in graphs if g.name.casefold() == model.strip().casefold()]
    if len(named) == 1:
        return named[0]
    raise ApiError(404, f"no graph '{model}' in this workspace" if not named else
                   f"{len(named)} graphs are named '{model}': use the graph's id", "model_not_found")


def _start(services: Any, workspace_id: str | None, model: str, text: str, waits: bool) -> Any:
    """The graph's run of the user's text; `waits`: the caller gets only its end (RunLauncher.start's defer_start)."""
    graph_id = _graph_id(services, workspace_id, model)
    launcher = services.launcher()
    try:
        plan = launcher.plan(services.graphs().get(graph_id).graph)
        trigger = launcher.entry_trigger(plan, "chat")
        return launcher.start(plan, started_by=STARTED_BY, trigger=trigger, payload=text, graph_id=graph_id,
                              defer_start=waits)
    except GraphInvalid as error:
        raise ApiError(400, "; ".join(issue.message for issue in error.issues), "graph_invalid") from None


def _last_user_text(messages: list[ChatMessage]) -> str:
    for message in reversed(messages):
        if message.role == "user":
            if isinstance(message.content, list):  # content parts: the text ones, in order
                return "".join(part.text or "" for part in message.content if part.type == "text")
            return message.content or ""
    raise ApiError(400, "messages need a user message", "no_user_message")


def _token(event: NodeEvent, answers: frozenset[str]) -> str:
    """The text of a token of the answer ('' for any other event)."""
    if event.event_type != "token" or event.node_id not in answers:
        return ""
    return str(event.data.get("text") or "")


def _unfinished(run: Any) -> tuple[str, str] | None:
    """(message, code) of a run that neither completed nor paused: failed, or stopped (a completion with
    `finish_reason: stop` would pass a cut answer off as whole)."""
    if run.status == "failed":
        return f"the graph's run failed: {run.error}", "run_failed"
    if run.status not in ("completed", "paused"):
        return f"the graph's run ended {run.status} before its answer was complete", "run_stopped"
    return None


def _answer(run: Any, streamed: str) -> str:
    """The streamed text, else the text the graph's final output says (its JSON when it says none); a paused run
    says what it waits for."""
    text = streamed or (_final_text(final_output(run)) if run.status == "completed" else "")
    if run.status == "paused":
        prompts = [r.wait.prompt for r in run.records.values() if r.status == "paused" and r.wait]
        waiting = f"[waiting for an answer: {'; '.join(prompts)} (run {run.run_id})]"
        text = f"{text}\n\n{waiting}" if text else waiting
    return text


async def _chunks(driver: RunDriver, events: AsyncIterator[NodeEvent | None], answers: frozenset[str],
                  completion_id: str, created: int, model: str) -> AsyncIterator[str]:
    """OpenAI's chunk stream: the role, a chunk per token, the rest of the answer, `stop`, `[DONE]`."""
    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        body = {"id": completion_id, "object": "chat.completion.chunk", "created": created, "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        return f"data: {event_data(body)}\n\n"

    yield chunk({"role": "assistant", "content": ""})
    streamed: list[str] = []
    async with aclosing(events):
        async for event in events:
            if event is None:  # quiet for a while: a comment keeps proxies from cutting the stream
                yield KEEP_ALIVE
            elif token := _token(event, answers):
                streamed.append(token)
                yield chunk({"content": token})
    run = driver.run
    if (problem := _unfinished(run)) is not None:
        error = {"message": problem[0], "type": "server_error", "param": None, "code": problem[1]}
        yield f"data: {event_data({'error': error})}\n\n"
    else:
        rest = _answer(run, "".join(streamed))[len("".join(streamed)):]
        if rest:
            yield chunk({"content": rest})
        yield chunk({}, "stop")
    yield "data: [DONE]\n\n"


def _final_text(value: Any) -> str:
    text = said(value)
    return text if text is not None else to_text(value)
