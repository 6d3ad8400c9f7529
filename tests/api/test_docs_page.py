"""The OpenAPI page /api/v1/docs works without internet: Swagger UI's files come from the server itself (FastAPI's
own page loads them from a CDN, and stayed blank offline). In a browser with the outside cut off:
tests/e2e/test_api.py."""

from __future__ import annotations

import re

import httpx

from nodeflow_app.api.app import create_api


async def test_the_docs_page_loads_only_files_the_server_itself_serves():
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_api()), base_url="http://api.test") as client:
        page = await client.get("/api/v1/docs")
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        assert "//" not in re.sub(r"<!--.*?-->", "", page.text)  # no address of another host, not even scheme-less
        urls = re.findall(r'(?:src|href)="([^"]+)"', page.text) + re.findall(r"url: '([^']+)'", page.text)
        assert {url.rsplit("/", 1)[-1] for url in urls} == {
            "swagger-ui.css", "favicon-32x32.png", "swagger-ui-bundle.js", "openapi.json"}
        for url in urls:
            asset = await client.get(url)
            assert asset.status_code == 200 and len(asset.content) > 1000, url
        script = (await client.get(next(u for u in urls if u.endswith(".js")))).text
    assert "SwaggerUIBundle" in script


async def test_a_missing_docs_file_is_a_json_404():
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_api()), base_url="http://api.test") as client:
        missing = await client.get("/api/v1/docs/assets/nothing.js")
    assert (missing.status_code, missing.headers["content-type"]) == (404, "application/json")
