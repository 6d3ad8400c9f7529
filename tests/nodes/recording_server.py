"""A local HTTP server for node tests: records every request and answers by path (see `_Handler.ROUTES`)."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

FILE_BYTES = bytes(range(256)) * 40  # not text: must come back as a stored file


@dataclass
class Recorded:
    method: str
    path: str
    query: list[tuple[str, str]]
    headers: dict[str, str]
    body: bytes


class _Handler(BaseHTTPRequestHandler):
    server: "RecordingServer"

    def log_message(self, *args) -> None:  # keep test output clean
        pass

    def _handle(self) -> None:
        parts = urlsplit(self.path)
        length = int(self.headers.get("content-length") or 0)
        record = Recorded(self.command, parts.path, parse_qsl(parts.query, keep_blank_values=True),
                          {k.lower(): v for k, v in self.headers.items()}, self.rfile.read(length))
        self.server.requests.append(record)
        query = dict(record.query)
        route = parts.path.strip("/").split("/")
        if route[0] == "json":
            self._send(200, json.dumps({"ok": True, "query": query}).encode(), "application/json")
        elif route[0] == "text":
            self._send(200, "héllo\n".encode(), "text/plain; charset=utf-8")
        elif route[0] == "latin1":  # Latin-1 text that names no charset
            self._send(200, "café Zürich".encode("latin-1"), "text/plain")
        elif route[0] == "big-json":  # ?items=N: a JSON list of N objects
            body = [{"n": i, "text": "x" * 40} for i in range(int(query.get("items", 10_000)))]
            self._send(200, json.dumps(body).encode(), "application/json")
        elif route[0] == "not-json":
            self._send(200, b"<html>oops</html>", "application/json")
        elif route[0] == "file":
            self._send(200, FILE_BYTES, "application/pdf", {"Content-Disposition": 'attachment; filename="report.pdf"'})
        elif route[0] == "status":
            self._send(int(route[1]), json.dumps({"error": "nope"}).encode(), "application/json")
        elif route[0] == "redirect":
            self._send(int(query.get("code", 302)), b"", "text/plain", {"Location": query["to"]})
        elif route[0] == "flaky":  # 503 for the first `fail` calls, then 200
            calls = sum(1 for r in self.server.requests if r.path == parts.path)
            status = 503 if calls <= int(query.get("fail", 1)) else 200
            self._send(status, json.dumps({"call": calls}).encode(), "application/json")
        elif route[0] == "slow":
            time.sleep(float(query.get("seconds", 2)))
            self._send(200, b"{}", "application/json")
        elif route[0] == "pages":  # ?page=N: 3 pages of 2 items, then none
            page = int(query.get("page", 1))
            items = [f"item{page}-{i}" for i in (1, 2)] if page <= 3 else []
            self._send(200, json.dumps({"results": items, "page": page}).encode(), "application/json")
        elif route[0] == "elsewhere":  # a page whose next link points at another server
            self._send(200, json.dumps({"next": query["to"]}).encode(), "application/json")
        elif route[0] == "cursor":  # /cursor?at=N: next is a relative URL until at=3
            at = int(query.get("at", 1))
            body = {"data": [at], "links": {"next": f"/cursor?at={at + 1}" if at < 3 else None}}
            self._send(200, json.dumps(body).encode(), "application/json")
        else:
            self._send(404, b"no route", "text/plain")

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _handle

    def _send(self, status: int, body: bytes, content_type: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)


class RecordingServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[Recorded] = []
        self.thread = threading.Thread(target=self.serve_forever, args=(0.02,), daemon=True)

    def handle_error(self, request, client_address) -> None:
        pass  # a client that gave up (the timeout test) breaks the pipe; that is expected here

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def __enter__(self) -> "RecordingServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.shutdown()
        self.server_close()
