"""A fake OpenAI-compatible HTTP server (real HTTP, SSE streaming, tool calls) so Agno's real code path runs.

It serves `POST /v1/chat/completions` from a background thread on 127.0.0.1 (ephemeral port). Replies are
scripted (`text`, `tool_call`, `http_error`) and consumed in order; with nothing queued it echoes the last
user message. Every request body is recorded, and every stream says whether the client read it to the end.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import math
import re
import socket
import struct
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import uvicorn
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

# 1. Scripted replies --------------------------------------------------------------------------------


@dataclass
class Reply:
    """One scripted answer. `match`, when set, picks the request it answers (else the next request)."""

    kind: str  # text | tool_call | http_error
    tokens: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    delay: float = 0.0
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    status: int = 200
    message: str = ""
    match: Callable[[dict[str, Any]], bool] | None = None


def text(tokens: list[str] | str, *, delay: float = 0.0, reasoning: list[str] | None = None,
         match: Callable[[dict[str, Any]], bool] | None = None) -> Reply:
    """Content streamed one token per chunk (a string is one token), `delay` seconds before each."""
    return Reply("text", tokens=[tokens] if isinstance(tokens, str) else list(tokens),
                 reasoning=list(reasoning or []), delay=delay, match=match)


def tool_call(name: str, arguments: dict[str, Any] | None = None, *, saying: list[str] | str = (),
              match: Callable[[dict[str, Any]], bool] | None = None) -> Reply:
    """The model asks to call `name` with `arguments` (streamed as JSON fragments), after streaming the text
    `saying` ("Let me check."), if any."""
    return Reply("tool_call", tokens=[saying] if isinstance(saying, str) else list(saying),
                 calls=[(name, arguments or {})], match=match)


def http_error(status: int, message: str = "fake server error", *,
               match: Callable[[dict[str, Any]], bool] | None = None) -> Reply:
    return Reply("http_error", status=status, message=message, match=match)


def last_user_text(body: dict[str, Any]) -> str:
    """The content of the last user message of a chat request (text parts joined)."""
    for message in reversed(body.get("messages") or []):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):
                return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
            return str(content or "")
    return ""


# 2. The server --------------------------------------------------------------------------------------


@dataclass
class StreamRecord:
    """One SSE response: how many chunks went out and whether the client read it to `[DONE]`."""

    model: str
    chunks_sent: int = 0
    finished: bool = False
    abandoned: bool = False


class FakeOpenAI:
    """Holds the script and the records; `app` is the Starlette app serving them."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []  # the request headers of each completion request, in order
        self.streams: list[StreamRecord] = []
        self._queue: list[Reply] = []
        self._lock = threading.Lock()
        self._counter = 0
        self.base_url = ""
        self.app = Starlette(routes=[
            Route("/v1/chat/completions", self._completions, methods=["POST"]),
            Route("/v1/models", self._models, methods=["GET"]),
            Route("/v1/embeddings", self._embeddings, methods=["POST"]),
        ])
        self.embedding_requests: list[dict[str, Any]] = []
        self.embedding_headers: list[dict[str, str]] = []  # the request headers of each embeddings request
        self.embedding_failure: tuple[int, str] | None = None  # (status, message) every embeddings call gets
        self.models_headers: list[dict[str, str]] = []  # the request headers of each model listing

    # -- test-facing API -------------------------------------------------------------------------

    def script(self, *replies: Reply) -> "FakeOpenAI":
        with self._lock:
            self._queue.extend(replies)
        return self

    def reset(self) -> None:
        with self._lock:
            self._queue.clear()
            self.requests.clear()
            self.headers.clear()
            self.streams.clear()
            self.embedding_requests.clear()
            self.embedding_headers.clear()
            self.embedding_failure = None
            self.models_headers.clear()

    @property
    def pending(self) -> int:
        """Scripted replies not used yet."""
        return len(self._queue)

    def wait_for(self, predicate: Callable[[], bool], timeout: float = 5.0) -> bool:
        """Poll (from the test's thread) until `predicate()` holds; False on timeout."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return True
            time.sleep(0.01)
        return predicate()

    # -- handlers --------------------------------------------------------------------------------

    async def _models(self, request: Request) -> Response:
        self.models_headers.append(dict(request.headers))
        return JSONResponse({"object": "list", "data": [{"id": "fake-model", "object": "model"}]})

    async def _embeddings(self, request: Request) -> Response:
        """Deterministic vectors (`fake_embedding`): texts sharing words get similar vectors."""
        body = await request.json()
        self.embedding_requests.append(body)
        self.embedding_headers.append(dict(request.headers))
        if self.embedding_failure:
            status, message = self.embedding_failure
            return JSONResponse({"error": {"message": message, "type": "invalid_request_error", "code": None}},
                                status_code=status)
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        size = int(body.get("dimensions") or EMBEDDING_DIMENSIONS)
        data = [{"object": "embedding", "index": i, "embedding": fake_embedding(t, size)} for i, t in enumerate(texts)]
        if body.get("encoding_format") == "base64":  # little-endian float32, as OpenAI sends it
            for item in data:
                item["embedding"] = base64.b64encode(struct.pack(f"<{size}f", *item["embedding"])).decode()
        tokens = sum(len(_words(t)) for t in texts)
        return JSONResponse({"object": "list", "data": data, "model": body.get("model", "fake-embedding"),
                             "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})

    async def _completions(self, request: Request) -> Response:
        self.headers.append(dict(request.headers))
        try:
            body = await request.json()
        except ClientDisconnect:  # the client gave up (a cancelled run) before sending its body
            return Response(status_code=499)
        reply = self._take(body)
        if reply.kind == "http_error":
            return JSONResponse({"error": {"message": reply.message, "type": "server_error", "code": None}},
                                status_code=reply.status)
        with self._lock:
            self._counter += 1
            completion_id = f"chatcmpl-{self._counter}"
        model = str(body.get("model", "fake-model"))
        if body.get("stream"):
            record = StreamRecord(model)
            self.streams.append(record)
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            return StreamingResponse(self._sse(reply, body, completion_id, model, include_usage, record),
                                     media_type="text/event-stream")
        return JSONResponse(_completion(reply, body, completion_id, model))

    def _take(self, body: dict[str, Any]) -> Reply:
        """The first queued reply that matches this request (and is removed), else the echo reply."""
        with self._lock:
            self.requests.append(body)
            for index, reply in enumerate(self._queue):
                if reply.match is None or reply.match(body):
                    return self._queue.pop(index)
        return text(_words(f"echo: {last_user_text(body)}"))

    async def _sse(self, reply: Reply, body: dict[str, Any], completion_id: str, model: str,
                   include_usage: bool, record: StreamRecord):
        def chunk(delta: dict[str, Any] | None, finish: str | None = None, usage: dict | None = None) -> bytes:
            payload: dict[str, Any] = {
                "id": completion_id, "object": "chat.completion.chunk", "created": int(time.time()),
                "model": model,
                "choices": [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
            if usage is not None:
                payload["usage"] = usage
            record.chunks_sent += 1
            return f"data: {json.dumps(payload)}\n\n".encode()

        try:
            yield chunk({"role": "assistant", "content": ""})
            for piece in reply.reasoning:
                yield chunk({"reasoning_content": piece})
            for token in reply.tokens:  # a tool call's too: the text a model says before it
                if reply.delay:
                    await asyncio.sleep(reply.delay)
                yield chunk({"content": token})
            if reply.kind == "text":
                finish = "stop"
            else:
                for index, (name, arguments) in enumerate(reply.calls):
                    call_id = f"call_{completion_id}_{index}"
                    yield chunk({"tool_calls": [{"index": index, "id": call_id, "type": "function",
                                                 "function": {"name": name, "arguments": ""}}]})
                    for fragment in _fragments(json.dumps(arguments)):
                        yield chunk({"tool_calls": [{"index": index, "function": {"arguments": fragment}}]})
                finish = "tool_calls"
            yield chunk({}, finish)
            if include_usage:
                yield chunk(None, usage=_usage(reply, body))
            yield b"data: [DONE]\n\n"
            record.finished = True
        finally:
            if not record.finished:
                record.abandoned = True


EMBEDDING_DIMENSIONS = 64


def fake_embedding(text: str, size: int = EMBEDDING_DIMENSIONS) -> list[float]:
    """A unit vector of hashed lower-cased words (a bag of words): stable across runs and processes."""
    vector = [0.0] * size
    for word in re.findall(r"\w+", text.lower()):
        digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
        vector[int.from_bytes(digest[:4], "little") % size] += 1.0 if digest[4] % 2 else -1.0
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


def _words(sentence: str) -> list[str]:
    """Split into tokens that join back to the sentence ("a b" -> ["a", " b"])."""
    parts = sentence.split(" ")
    return [parts[0]] + [" " + p for p in parts[1:]]


def _fragments(arguments: str, size: int = 7) -> list[str]:
    return [arguments[i:i + size] for i in range(0, len(arguments), size)] or [""]


def _usage(reply: Reply, body: dict[str, Any]) -> dict[str, int]:
    prompt = sum(len(str(m.get("content") or "").split()) for m in body.get("messages") or [])
    completion = len(reply.tokens) + len(reply.calls) * 10
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _completion(reply: Reply, body: dict[str, Any], completion_id: str, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": "".join(reply.tokens) or None}
    if reply.kind == "text":
        message["content"] = "".join(reply.tokens)
        finish = "stop"
    else:
        message["tool_calls"] = [
            {"id": f"call_{completion_id}_{i}", "type": "function",
             "function": {"name": name, "arguments": json.dumps(arguments)}}
            for i, (name, arguments) in enumerate(reply.calls)]
        finish = "tool_calls"
    return {"id": completion_id, "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": _usage(reply, body)}


# 3. Running it in a background thread --------------------------------------------------------------


class FakeServer:
    """uvicorn serving a FakeOpenAI on 127.0.0.1:<ephemeral> in a daemon thread."""

    def __init__(self, fake: FakeOpenAI | None = None) -> None:
        self.fake = fake or FakeOpenAI()
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> FakeOpenAI:
        # proto IPPROTO_TCP (not 0) makes asyncio set TCP_NODELAY on accepted connections; without it Nagle
        # holds each small SSE chunk of a reused connection until the client's delayed ACK (~40 ms).
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        config = uvicorn.Config(self.fake.app, log_level="warning", access_log=False, lifespan="off",
                                timeout_graceful_shutdown=1)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]},
                                        name="fake-openai", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the fake OpenAI server did not start")
            time.sleep(0.005)
        self.fake.base_url = f"http://127.0.0.1:{port}/v1"
        return self.fake

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=5)
