"""`/api/v1`: graphs and their runs for API clients (SPEC 6, 10, 14). Every endpoint declares `@requires`.

Runs start through the process's RunLauncher (started by "api", with the caller's name) and are driven
by a task of their own (runs/detached.py): `mode` only says what the caller gets back, and a caller that
disconnects leaves the run going.
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Depends, HTTPException, Request
from pydantic import BaseModel, ConfigDict, Field, field_validator
from starlette.concurrency import run_in_threadpool

from nodeflow_app.api.access import ApiAccess, authorize, requires
from nodeflow_app.api.intake import CallerFirst
from nodeflow_app.api.responses import AsciiJSONResponse
from nodeflow_app.api.run_stream import stream_response
from nodeflow_app.runs.detached import RunDriver, drive
from nodeflow_app.runs.service import RunRefused, approval_payload
from nodeflow_app.runtime.graph import GraphInvalid
from nodeflow_app.runtime.plan import Plan
from nodeflow_app.runtime.values import value_problem
from nodeflow_app.triggers import schedules, webhooks

STARTED_BY = "api"
FINISHED = ("completed", "failed", "cancelled", "interrupted")

router = APIRouter(prefix="/api/v1", tags=["v1"], route_class=CallerFirst)


# -- models ----------------------------------------------------------------------------------------------

class GraphOut(BaseModel):
    id: str
    name: str
    node_count: int
    updated_at: float
    version: int


class RunRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")  # {"imput": ...} is a 422 naming it, not a run with the default input
    input: Any = Field(None, description="The trigger's payload (None: the trigger's own default).")
    trigger: str | None = Field(None, description="The trigger node's id or name; needed when the graph has several.")
    mode: Literal["async", "wait", "stream"] = Field(
        "async", description="async: the run id at once; wait: the run when it ends or pauses; "
                             "stream: server-sent events of the run as it goes.")

    @field_validator("input")
    @classmethod
    def _a_run_can_carry_it(cls, value: Any) -> Any:
        """NaN, Infinity or nesting past the runs' limit: refused here, not as a failed run nobody can read."""
        if problem := value_problem(value):
            raise ValueError(f"a run cannot carry this input: {problem}")
        return value


class ResumeRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    decision: str = Field(..., description="One of the paused node's options, e.g. approve or reject.")
    note: str | None = None
    node_id: str | None = Field(None, description="The paused node; needed when several nodes are paused.")
    mode: Literal["async", "wait", "stream"] = "async"


class RunStarted(BaseModel):
    run_id: str
    status: str


class RunSummary(BaseModel):
    run_id: str
    status: str
    error: str | None = None
    trigger_id: str | None = None
    started_by: str | None = None
    started_by_user: str | None = None
    started_at: float
    finished_at: float | None = None
    duration_ms: float | None = None


class NodeOut(BaseModel):
    node_id: str
    node_name: str
    node_type: str
    status: str
    error: str | None = None
    duration_ms: float | None = None
    cached: bool = False
    inputs: Any = None
    outputs: Any = None
    wait: Any = Field(None, description="A paused node's {prompt, options, detail}.")


class RunOut(RunSummary):
    graph_id: str
    graph_version: int | None = None
    payload: Any = None
    output: Any = Field(None, description="When completed: the main value of the step that ends the graph "
                                          "(an object by step name when several end it).")
    nodes: list[NodeOut]


class Stopped(BaseModel):
    run_id: str
    stopped: bool


# -- routes ----------------------------------------------------------------------------------------------

@router.get("/graphs", response_model=list[GraphOut], summary="List the graphs of the workspace")
@requires("view")
def list_graphs(request: Request, access: ApiAccess = Depends(authorize)) -> list[GraphOut]:
    graphs = request.app.state.services.graphs().list(workspace_id=access.workspace_id)
    return [GraphOut(**vars(g)) for g in graphs]


@router.post("/graphs/{graph_id}/runs", summary="Start a run of a graph",
             responses={200: {"model": RunOut, "description": "mode wait: the run when it ends or pauses"},
                        202: {"model": RunStarted, "description": "mode async: the run id at once"}})
@requires("edit")
async def start_run(graph_id: str, request: Request, body: RunRequest | None = None):
    body = body or RunRequest()  # every field has a default: no body at all is the defaults
    services = request.app.state.services
    run = await run_in_threadpool(_start, services, graph_id, body)
    return await _respond(request, drive(run, run.events()), body.mode)


@router.get("/graphs/{graph_id}/runs", response_model=list[RunSummary], summary="The graph's latest runs")
@requires("view")
def list_runs(graph_id: str, request: Request, limit: int = 50) -> list[RunSummary]:
    runs = request.app.state.services.launcher().store.list_runs(graph_id, limit=max(1, min(limit, 500)))
    return [RunSummary(run_id=r["id"], **{k: v for k, v in r.items() if k in RunSummary.model_fields}) for r in runs]


@router.get("/runs/{run_id}", response_model=RunOut, summary="A run: its status and every node's record")
@requires("view")
async def get_run(run_id: str, request: Request) -> AsciiJSONResponse:
    return await run_in_threadpool(_run_answer, request.app.state.services, run_id)


@router.post("/runs/{run_id}/resume", summary="Answer a paused node (an approval) so the run goes on",
             responses={200: {"model": RunOut}, 202: {"model": RunStarted}})
@requires("edit")
async def resume_run(run_id: str, body: ResumeRequest, request: Request,
                     access: ApiAccess = Depends(authorize)):
    services = request.app.state.services
    node_id = body.node_id or await run_in_threadpool(_paused_node, services, run_id)
    who = access.user.name if access.user else None
    try:
        run = await run_in_threadpool(services.runs().answer, run_id, node_id, body.decision, body.note, who)
    except RunRefused as error:
        raise HTTPException(409, str(error)) from None
    if run is None:  # a live run (here or in another process) took the answer and goes on there
        return await _respond(request, None, "async", run_id=run_id)
    events = run.resume(node_id, approval_payload(body.decision, body.note, who))
    return await _respond(request, drive(run, events), body.mode)


@router.post("/runs/{run_id}/stop", response_model=Stopped, summary="Stop a run wherever it executes")
@requires("edit")
async def stop_run(run_id: str, request: Request) -> Stopped:
    stopped = await run_in_threadpool(request.app.state.services.launcher().stop, run_id)
    return Stopped(run_id=run_id, stopped=stopped)


# -- helpers ---------------------------------------------------------------------------------------------

def _start(services: Any, graph_id: str, body: RunRequest) -> Any:
    stored = services.graphs().get(graph_id)
    if stored is None:
        raise HTTPException(404, "not found")
    launcher = services.launcher()
    try:
        plan = launcher.plan(stored.graph)
        trigger = _trigger(launcher, plan, body.trigger, graph_id)
        return launcher.start(plan, started_by=STARTED_BY, trigger=trigger, payload=body.input, graph_id=graph_id,
                              defer_start=body.mode == "wait")  # the caller gets the run only when it ends
    except GraphInvalid as error:
        raise HTTPException(422, "; ".join(issue.message for issue in error.issues)) from None


def _trigger(launcher: Any, plan: Plan, wanted: str | None, graph_id: str) -> str:
    """The trigger node `wanted` names (id or name), else the graph's only trigger the API starts (its definition
    lists "api" in `started_by`: a Webhook or a Schedule runs the graph's live version, only while it is active)."""
    triggers = launcher.triggers(plan)
    names = {plan.nodes[t].node.name: t for t in triggers}
    if wanted:
        found = wanted if wanted in triggers else names.get(wanted)
        if found is None:
            listed = ", ".join(names) or "none"
            raise HTTPException(422, f"no trigger '{wanted}' in this graph (its triggers: {listed})")
        if STARTED_BY not in plan.nodes[found].definition.started_by:
            raise HTTPException(422, _started_elsewhere(plan, found, graph_id))
        return found
    ours = launcher.triggers(plan, STARTED_BY)
    if len(ours) == 1:
        return ours[0]
    if not triggers:
        raise HTTPException(422, "this graph has no trigger: add one (e.g. a Manual Trigger)")
    if not ours:
        raise HTTPException(422, "; ".join(_started_elsewhere(plan, t, graph_id) for t in triggers)
                            + "; add a Manual Trigger to start it from the API")
    names = ", ".join(plan.nodes[t].node.name for t in ours)
    raise HTTPException(422, f"this graph has {len(ours)} triggers ({names}): name one in `trigger`")


def _started_elsewhere(plan: Plan, node_id: str, graph_id: str) -> str:
    """Why the API does not start this trigger, and what does."""
    node, entry_points = plan.nodes[node_id].node, plan.nodes[node_id].definition.started_by
    if webhooks.STARTED_BY in entry_points:
        how = (f"a call to its webhook address /api/hooks/{webhooks.hook_id(graph_id, node_id)} "
               "while the graph is active")
    elif schedules.STARTED_BY in entry_points:
        how = "its schedule while the graph is active"
    else:
        how = " or ".join(entry_points) or "the editor's test runs only"
    return f"the API does not start trigger '{node.name}': it is started by {how}"


async def _respond(request: Request, driver: RunDriver | None, mode: str, run_id: str | None = None) -> Any:
    """What the caller asked for; `driver` None: the run goes on elsewhere (only its id to give)."""
    run_id = run_id or driver.run.run_id
    if driver is not None and mode == "stream":
        return stream_response(driver, lambda: _run_out(request.app.state.services, run_id).model_dump())
    if driver is not None and mode == "wait":
        await driver.done.wait()
        return await run_in_threadpool(_run_answer, request.app.state.services, run_id)
    if driver is not None:
        await driver.started.wait()
    status = driver.run.status if driver else "running"
    return AsciiJSONResponse(RunStarted(run_id=run_id, status=status).model_dump(), status_code=202)


def _run_answer(services: Any, run_id: str) -> AsciiJSONResponse:
    """The run as JSON escaped to ASCII. Not FastAPI's serializing of RunOut: pydantic's JSON mode cannot write an
    object key holding a lone surrogate, which any value from outside may have (a webhook's body, an input)."""
    return AsciiJSONResponse(_run_out(services, run_id).model_dump())


def _run_out(services: Any, run_id: str) -> RunOut:
    stored = services.launcher().store.get_run(run_id)
    if stored is None:
        raise HTTPException(404, "not found")
    nodes = [NodeOut(**{k: v for k, v in n.items() if k in NodeOut.model_fields}) for n in stored["nodes"]]
    return RunOut(run_id=run_id, **{k: v for k, v in stored.items() if k in RunOut.model_fields and k != "nodes"},
                  output=_final_output(services, stored), nodes=nodes)


def _final_output(services: Any, stored: dict[str, Any]) -> Any:
    """What graph_runner.final_output gives for a live run, from the stored records: the main value of the
    step that ends the graph, or an object by step name when several end it (None until it completed)."""
    if stored["status"] != "completed":
        return None
    try:
        plan = services.launcher().plan(stored["graph"])
    except GraphInvalid:  # the node types changed since: the records are still there
        return None
    done = {n["node_id"]: n["outputs"] or {} for n in stored["nodes"] if n["status"] == "completed"}
    ends = [node_id for node_id, pn in plan.nodes.items()
            if pn.node.parentId is None and not pn.flow_out and node_id in done]

    def main_value(node_id: str) -> Any:
        outputs = done[node_id]
        return next((outputs[h] for h in plan.nodes[node_id].outputs if h in outputs),
                    next(iter(outputs.values()), None))

    if len(ends) == 1:
        return main_value(ends[0])
    return {plan.nodes[node_id].node.name: main_value(node_id) for node_id in ends}


def _paused_node(services: Any, run_id: str) -> str:
    stored = services.launcher().store.get_run(run_id)
    paused = [n["node_id"] for n in (stored or {}).get("nodes", []) if n["status"] == "paused"]
    if len(paused) != 1:
        raise HTTPException(409, f"{len(paused)} nodes are paused: name one in `node_id`" if paused
                            else "this run is not waiting for an answer")
    return paused[0]
