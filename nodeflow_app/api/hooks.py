"""`/api/hooks/<id>` and `/api/hooks-test/<id>`: webhook calls start runs (SPEC 6).

Public routes: a webhook authenticates its callers itself (its node's header token or Basic user), never
with NodeFlow sessions or API tokens. The live address runs the graph's active version; the test address
serves the editor's "Listen for test event" once, with the stored graph, as a test run.
The answer follows the node's "Respond" choice: 202 with the run id at once, the last node's output as JSON
(its status code and headers, less those nodeflow_app/triggers/webhook_answer.py refuses), or the run's events as
server-sent events in the API's format (nodeflow_app/api/run_stream.py) ending with the run's outcome, not its
record; every answer carries webhook_answer.SAFETY_HEADERS. The run is never the request's: a caller that
disconnects leaves it going (nodeflow_app/runs/detached.py).
"""

from __future__ import annotations

import dataclasses
import json
import logging
from typing import Any

from fastapi import FastAPI, Request, Response
from starlette.concurrency import run_in_threadpool

from nodeflow_app.api.access import requires
from nodeflow_app.api.responses import AsciiJSONResponse
from nodeflow_app.api.run_stream import stream_response
from nodeflow_app.runs.detached import drive, outcome
from nodeflow_app.runs.graph_runner import final_output
from nodeflow_app.triggers import webhook_answer
from nodeflow_app.triggers.webhooks import Call, Refused, Target, Webhooks, payload, too_large

log = logging.getLogger("nodeflow.api.hooks")
FAILED = "the run failed; its record in NodeFlow says why"  # a failed run's error, as a caller is told it
METHODS = ["POST", "GET", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]  # POST first: the usual call, the first route


# The address's id is read from the path, not declared as a parameter: FastAPI would validate it with pydantic on
# every call (~2% of a webhook call's CPU) to learn it is text. The OpenAPI operation documents it as before.
HOOK_ID_DOCS = {"parameters": [{"name": "hook_id", "in": "path", "required": True,
                                "schema": {"type": "string", "title": "Hook Id"}}],
                "responses": {"422": {"description": "Validation Error", "content": {"application/json": {
                    "schema": {"$ref": "#/components/schemas/HTTPValidationError"}}}}}}


@requires("public")
async def call_hook(request: Request) -> Response:
    return await _serve(request, request.path_params["hook_id"], test=False)


@requires("public")
async def call_test_hook(request: Request) -> Response:
    return await _serve(request, request.path_params["hook_id"], test=True)


def add_routes(app: FastAPI) -> None:
    """The webhook routes, on the app itself: an included router's calls pass through its own matching and
    handling layers first (~4% of a webhook call's CPU, measured with py-spy)."""
    for method in METHODS:  # one route per method: each gets its own OpenAPI operation
        app.add_api_route("/api/hooks/{hook_id}", call_hook, methods=[method], openapi_extra=HOOK_ID_DOCS,
                          summary="Call a webhook of an active graph", operation_id=f"call_hook_{method.lower()}",
                          tags=["webhooks"])
        app.add_api_route("/api/hooks-test/{hook_id}", call_test_hook, methods=[method], openapi_extra=HOOK_ID_DOCS,
                          summary="Call a webhook's test address (while the editor listens)",
                          operation_id=f"call_test_hook_{method.lower()}", tags=["webhooks"])


def webhooks(request: Request) -> Webhooks:
    """The app's Webhooks service (made on the first call, on the app's launcher)."""
    state = request.app.state
    if getattr(state, "webhooks", None) is None:
        state.webhooks = Webhooks(state.services.launcher())
    return state.webhooks


async def _serve(request: Request, hook: str, *, test: bool) -> Response:
    response = await _call(request, hook, test=test)
    response.headers.update(webhook_answer.SAFETY_HEADERS)
    return response


async def _call(request: Request, hook: str, *, test: bool) -> Response:
    hooks = getattr(request.app.state, "webhooks", None) or await run_in_threadpool(webhooks, request)
    try:
        target = None if test else hooks.cached_live(hook)
        if target is None:
            target = await run_in_threadpool(hooks.test_target if test else hooks.live, hook)
        # Method and credentials first, from the headers: a caller without them never gets its body read.
        call = Call(request.method, {k.lower(): v for k, v in request.headers.items()}, dict(request.query_params),
                    b"")
        if target.data.get("auth_connection"):
            call = await run_in_threadpool(hooks.check, target, call)  # reads the connection from the database
        else:
            call = hooks.check(target, call)
        call = dataclasses.replace(call, body=await _body(request, target.max_body()))
        if test and await run_in_threadpool(hooks.triggers.take_test_call, hook, payload(call, target)) is None:
            raise Refused(404, "nobody is listening for a test call: press 'Listen for test event' in the editor")
        run = hooks.start(target, call, test=test)
    except Refused as refused:
        return AsciiJSONResponse({"detail": refused.message}, refused.status, headers=refused.headers)
    if test:
        await run_in_threadpool(hooks.triggers.test_run, hook, run.run_id)
    return await _answer(target, run)


async def _body(request: Request, limit: int) -> bytes:
    """The body, refused with 413 as soon as it passes the webhook's limit (announced or streamed)."""
    announced = request.headers.get("content-length", "")
    if announced.isdigit() and int(announced) > limit:
        raise Refused(413, too_large(limit))
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise Refused(413, too_large(limit))
        chunks.append(chunk)
    return b"".join(chunks)


async def _answer(target: Target, run: Any) -> Response:
    headers = {"X-Run-Id": run.run_id}
    driver = drive(run, run.events())
    if target.respond == "stream":  # `end`: what the other answers tell (no API token here: not the run's record)
        return stream_response(driver, lambda: outcome(run), headers)
    if target.respond == "at_once":
        await driver.started.wait()  # on record: the id it gives out is found at once, from any process
        return AsciiJSONResponse({"run_id": run.run_id, "status": "started"}, 202, headers=headers)
    await driver.done.wait()
    if run.status != "completed":
        return _json(_told(outcome(run), target), 202 if run.status == "paused" else 500, headers)
    answer = target.answer
    for _parameter, problem in answer.problems:  # activation refuses these: a test call, or a version live from before
        log.warning("webhook %s of graph %s: %s; left out of the answer", target.node_id, target.graph_id, problem)
    return _json(final_output(run), answer.status, {**answer.headers, **headers})


def _told(ended: dict[str, Any], target: Target) -> dict[str, Any]:
    """A run's outcome as the caller gets it: a failed run's error only when the node says so (a public caller
    would learn internal addresses, tables or connection names from it; n8n answers "Error in workflow")."""
    if "error" in ended and not target.data.get("error_details"):
        return {**ended, "error": FAILED}
    return ended


_encode = json.JSONEncoder(default=str).encode  # built once: json.dumps(value, default=str) builds one per call


def _json(value: Any, status: int, headers: dict[str, str]) -> Response:
    return Response(_encode(value), status, headers=headers, media_type="application/json")

