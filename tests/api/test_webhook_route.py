"""What FastAPI does for a webhook call before its endpoint runs (issue 17: webhook runs per second against a bare
endpoint, benchmarks/webhooks.py): its route is the first the app tries, and the address id is read from the path
without a pydantic validation, yet documented as before."""

from __future__ import annotations

from fastapi.routing import iter_route_contexts
from starlette.routing import Match

from nodeflow_app.api.app import create_api

FASTAPI_DOCS = ["/api/v1/openapi.json", "/api/v1/docs/assets", "/api/v1/docs"]  # FastAPI's and add_docs_page's


def routes_tried(app, method: str, path: str) -> tuple[list[str], object]:
    """The paths of the routes tried before the one that takes the call, and that one."""
    scope = {"type": "http", "method": method, "path": path, "root_path": "", "query_string": b"", "headers": []}
    tried = []
    for route in iter_route_contexts(app.routes):
        if route.matches(scope)[0] == Match.FULL:
            return tried, route
        tried.append(route.path)
    raise AssertionError(f"no route takes {method} {path}")


def test_a_webhook_call_is_matched_before_every_other_api_route():
    app = create_api()
    for path in ("/api/hooks/abc", "/api/hooks-test/abc"):
        tried, route = routes_tried(app, "POST", path)
        assert [p for p in tried if p not in FASTAPI_DOCS and not p.startswith("/api/hooks")] == [], path
        assert route.path.startswith("/api/hooks")
    tried, _ = routes_tried(app, "POST", "/api/hooks/abc")
    assert tried == FASTAPI_DOCS  # the usual call: the first webhook route


def test_the_hook_id_is_read_from_the_path_and_documented_as_a_path_parameter():
    app = create_api()
    schema = app.openapi()
    for path in ("/api/hooks/{hook_id}", "/api/hooks-test/{hook_id}"):
        for route in iter_route_contexts(app.routes):
            if route.path == path:
                assert route.original_route.dependant.path_params == [], f"{path} {route.methods}"
        for method, operation in schema["paths"][path].items():
            assert operation["parameters"] == [{"name": "hook_id", "in": "path", "required": True,
                                                "schema": {"type": "string", "title": "Hook Id"}}], method
            assert operation["responses"]["422"]["content"]["application/json"]["schema"] == {
                "$ref": "#/components/schemas/HTTPValidationError"}
