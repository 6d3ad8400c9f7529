"""`/api/v1`: graphs and their runs for API clients (SPEC 10, 14). Every endpoint declares `@requires`."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel

from nodeflow_app.api.access import ApiAccess, authorize, requires

router = APIRouter(prefix="/api/v1", tags=["v1"])


class GraphOut(BaseModel):
    id: str
    name: str
    node_count: int
    updated_at: float
    version: int


@router.get("/graphs", response_model=list[GraphOut], summary="List the graphs of the workspace")
@requires("view")
def list_graphs(request: Request, access: ApiAccess = Depends(authorize)) -> list[GraphOut]:
    graphs = request.app.state.services.graphs().list(workspace_id=access.workspace_id)
    return [GraphOut(**vars(g)) for g in graphs]
