"""Builds the FastAPI app Reflex's backend is mounted into (`rx.App(api_transformer=create_api())`).

Every route of every router passes `authorize` (an app-wide dependency) before its endpoint; the /api/v1 routers'
routes (nodeflow_app/api/intake.py) admit the caller before they read the body, and read at most `max_body`
bytes of it. Add a router with one `app.include_router(...)` line below.

Reflex mounts its backend (and, under `make run`, the compiled front end) at "" behind these routes: a path
under /api/ that no route here takes would fall through to it and get the front end's HTML 404 page.
`unknown_api_path`, the last route here, answers those in JSON first: 404, or 405 with `Allow` when another method
has a route (in the route class's own error shape if it has one: `method_refused`). A route, not a middleware: a
request a route takes (every webhook call) is matched once, as before.
"""

from __future__ import annotations

from importlib.resources import files

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.routing import iter_route_contexts
from fastapi.responses import JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.utils import is_body_allowed_for_status_code
from starlette.exceptions import HTTPException
from starlette.routing import Match, Mount

from nodeflow_app.api import hooks, mcp_endpoint, openai_compat, session, v1
from nodeflow_app.api.access import authorize, requires
from nodeflow_app.api.intake import body_problems, max_body_bytes
from nodeflow_app.api.responses import AsciiJSONResponse
from nodeflow_app.api.services import Services

API_PREFIX = "/api"
DOCS_URL, DOCS_ASSETS = "/api/v1/docs", "/api/v1/docs/assets"
SWAGGER_UI = files("swagger_ui") / "static"  # Swagger UI 5 as the swagger-ui-py package ships it


def create_api(services: Services | None = None) -> FastAPI:
    app = FastAPI(title="NodeFlow API", version="1", dependencies=[Depends(authorize)],
                  openapi_url="/api/v1/openapi.json", docs_url=None, redoc_url=None,
                  swagger_ui_oauth2_redirect_url=None, default_response_class=AsciiJSONResponse)
    add_docs_page(app)
    app.state.services = services or Services()
    app.state.max_body = max_body_bytes()
    app.add_exception_handler(RequestValidationError, invalid_request)
    app.add_exception_handler(HTTPException, refused)
    # Webhooks first: routes are tried in order, and their calls (public, the busiest) then skip matching every
    # /api/v1 route (~7% of a webhook call's CPU). No other router's paths start with /api/hooks. They are the
    # app's own routes, not an included router's (hooks.add_routes).
    hooks.add_routes(app)
    app.include_router(v1.router)
    app.include_router(openai_compat.router)
    app.include_router(mcp_endpoint.router)
    app.include_router(session.router)
    app.add_api_route(API_PREFIX + "/{rest:path}", unknown_api_path, methods=ANY_METHOD, include_in_schema=False)
    return app


def add_docs_page(app: FastAPI) -> None:
    """The OpenAPI page at DOCS_URL with Swagger UI's files served from DOCS_ASSETS: FastAPI's own page loads them
    from a CDN, and without internet it stayed blank."""
    app.mount(DOCS_ASSETS, StaticFiles(directory=str(SWAGGER_UI)), name="docs-assets")

    async def docs_page(request: Request) -> Response:
        root = request.scope.get("root_path", "").rstrip("/")  # behind a proxy's prefix, as FastAPI's page does
        return get_swagger_ui_html(openapi_url=root + str(app.openapi_url), title=f"{app.title} - Swagger UI",
                                   swagger_js_url=f"{root}{DOCS_ASSETS}/swagger-ui-bundle.js",
                                   swagger_css_url=f"{root}{DOCS_ASSETS}/swagger-ui.css",
                                   swagger_favicon_url=f"{root}{DOCS_ASSETS}/favicon-32x32.png")

    app.add_route(DOCS_URL, docs_page, include_in_schema=False)


async def invalid_request(_request: Request, error: RequestValidationError) -> JSONResponse:
    """422 naming each field and why (intake.body_problems)."""
    return AsciiJSONResponse({"detail": body_problems(error)}, 422)


async def refused(_request: Request, error: HTTPException) -> Response:
    """FastAPI's answer to an HTTPException, escaped to ASCII: a detail may repeat the client's text (a trigger's
    name), and a lone surrogate in it turned the answer into a 500."""
    if not is_body_allowed_for_status_code(error.status_code):
        return Response(status_code=error.status_code, headers=error.headers)
    return AsciiJSONResponse({"detail": error.detail}, error.status_code, headers=error.headers)


ANY_METHOD = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]


@requires("public")
async def unknown_api_path(request: Request) -> Response:
    """An /api/ request no other route takes (routes are tried in order; this one is last, before Reflex's mount)."""
    scope = request.scope
    routes = [route for route in iter_route_contexts(request.app.routes)  # included routers flattened
              if route.endpoint is not unknown_api_path
              and not (isinstance(route.original_route, Mount) and not route.path)]  # Reflex's, at "": any path
    taking = [route for route in routes if route.matches(scope)[0] == Match.PARTIAL]  # other methods, same path
    allowed = sorted({method for route in taking for method in route.methods or ()})
    where = f"{scope['method']} {scope['path']}"
    if allowed:
        message = f"{where} is not allowed: this path takes {', '.join(allowed)}"
        headers = {"Allow": ", ".join(allowed)}
        for route in taking:  # a route class with its own error shape (OpenAI's) answers its path's 405 in it
            if refuse := getattr(route.original_route, "method_refused", None):
                return refuse(message, headers)
        return AsciiJSONResponse({"detail": message}, 405, headers=headers)
    return AsciiJSONResponse({"detail": f"no API route {where} (the routes: {API_PREFIX}/v1/docs)"}, 404)
