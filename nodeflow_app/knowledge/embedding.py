"""Provider embeddings in batches, cached by content hash: `await embed_texts(texts, "openai:text-embedding-3-small")`.

The HTTP calls are Agno's (`OpenAIEmbedder` / `OpenAILikeEmbedder`, async batches). Keys and base URLs come
from the provider configuration in `nodeflow_app.llm.providers` (the workspace's stored settings, else the
install's: a graph cannot send a key elsewhere). The cache is a small SQLite file in the data folder keyed by
sha256(workspace + base URL + model ref + text), so re-indexing unchanged chunks costs no request, and a
workspace never gets a vector another one fetched (from a server of its own choosing: poisoned) nor learns
which texts another one embedded.
"""

from __future__ import annotations

import array
import asyncio
import base64
import hashlib
import sqlite3
import sys
import threading
from pathlib import Path
from typing import Any

from nodeflow_app.contract import NodeError
from nodeflow_app.llm.credentials import current_workspace
from nodeflow_app.llm.providers import (
    OLLAMA_DEFAULT_URL, ModelConfigError, api_key_for, base_url_for, hide_keys_in_agno_logs, missing_steps,
    parse_ref, scrub, shared_http_client, workspace_url,
)
from nodeflow_app.settings import data_dir

# Providers with an OpenAI-style /embeddings endpoint.
EMBEDDING_PROVIDERS = ("openai", "openai-compatible", "ollama")
DEFAULT_BATCH = 64


def check_ref(ref: str) -> Any:
    """The parsed `provider:model` of an embedding model, or a clear error naming what to configure."""
    try:
        parsed = parse_ref(ref)
    except ModelConfigError as error:
        raise NodeError(f"embedding model: {error}") from None
    if parsed.provider not in EMBEDDING_PROVIDERS:
        raise NodeError(f"embedding model {ref!r}: provider {parsed.provider!r} has no embeddings here; "
                        f"use one of {', '.join(EMBEDDING_PROVIDERS)}")
    steps = missing_steps(parsed.provider, to_run=True)
    if steps:
        raise NodeError(f"embedding model {ref!r}: provider {parsed.provider} is not configured: {'; '.join(steps)}")
    return parsed


async def embed_texts(texts: list[str], ref: str, batch_size: int = DEFAULT_BATCH) -> list[list[float]]:
    """One vector per text, in order; cached vectors are reused, the rest fetched in batches."""
    parsed = check_ref(ref)
    base_url = _base_url(parsed)
    cache = EmbeddingCache.shared()
    scope = f"{current_workspace()}\n{base_url or ''}\n{parsed.ref}"  # whose vectors, from which server
    keys = [_key(scope, text) for text in texts]
    known = await asyncio.to_thread(cache.get_many, keys)
    first_index = {}  # each text not cached yet, once (duplicates are embedded once)
    for index, key in enumerate(keys):
        if key not in known:
            first_index.setdefault(key, index)
    missing = list(first_index.values())
    if missing:
        embedder = _embedder(parsed, base_url, batch_size)
        try:
            vectors, _usage = await embedder.async_get_embeddings_batch_and_usage([texts[i] for i in missing])
            vectors = [_floats(vector) for vector in vectors]
        except Exception as error:
            # A provider may echo the key it was sent (OpenAI's 401 does): never in a run's record or a chat card.
            raise NodeError(scrub(f"embedding model {parsed.ref}: {_why(error)}", parsed)) from None
        if len(vectors) != len(missing):
            raise NodeError(f"embedding model {parsed.ref}: the provider returned {len(vectors)} vectors for "
                            f"{len(missing)} texts")
        if empty := [i for i, vector in zip(missing, vectors) if not vector]:
            raise NodeError(f"embedding model {parsed.ref}: the provider returned an empty vector for text {empty[0]} "
                            f"({len(empty)} of {len(missing)} texts)")
        fresh = {keys[i]: vector for i, vector in zip(missing, vectors)}
        await asyncio.to_thread(cache.put_many, fresh)
        known.update(fresh)
    return [known[k] for k in keys]


def _floats(vector: Any) -> Any:
    """A vector as floats: OpenAI's base64 answer is little-endian float32 (what the cache keeps anyway)."""
    if not isinstance(vector, str):
        return vector
    values = array.array("f", base64.b64decode(vector))
    if sys.byteorder == "big":
        values.byteswap()
    return values.tolist()


def _key(scope: str, text: str) -> str:
    return hashlib.sha256(f"{scope}\n{text}".encode("utf-8", "surrogatepass")).hexdigest()


def _base_url(parsed: Any) -> str | None:
    """Where the embeddings are asked for (None: the provider's public API)."""
    base_url = base_url_for(parsed.provider)
    if parsed.provider == "ollama":
        base_url = (base_url or OLLAMA_DEFAULT_URL).rstrip("/") + "/v1"
    return base_url


def _embedder(parsed: Any, base_url: str | None, batch_size: int) -> Any:
    from agno.knowledge.embedder.openai import OpenAIEmbedder
    from agno.knowledge.embedder.openai_like import OpenAILikeEmbedder

    hide_keys_in_agno_logs()

    # One HTTP client per provider and loop (a new one costs ~190 ms), shared with the chat models.
    # A URL the workspace stored (not the install's) passes the SSRF guard on every connection.
    guarded = workspace_url(parsed.provider) is not None
    client_params = {"http_client": shared_http_client(parsed.provider, base_url, guarded=guarded), "max_retries": 1}
    if parsed.provider == "openai":
        # base64, not float: the SDK built each of 1,536 floats per vector on the event loop (0.3 s per batch of 64)
        return _stopping_at_a_refused_key(OpenAIEmbedder(
            id=parsed.model, api_key=api_key_for("openai"), base_url=base_url, batch_size=batch_size,
            client_params=client_params, encoding_format="base64"))
    # OpenAI-compatible servers choose their own dimensions: send none (Agno would send 1536).
    embedder = OpenAILikeEmbedder(id=parsed.model, api_key=api_key_for(parsed.provider) or "not-provided",
                                  base_url=base_url, batch_size=batch_size, client_params=client_params)
    embedder.dimensions = None
    return _stopping_at_a_refused_key(embedder)


def _stopping_at_a_refused_key(embedder: Any) -> Any:
    """Agno answers a failed batch with one request per text; when the provider refuses the key (401, 403) each
    fails alike, so the first refusal answers for the rest: two requests, not one per text (2,049 per batch)."""
    ask = embedder.async_get_embedding_and_usage
    refused: list[BaseException] = []

    async def each(text: str) -> Any:
        if refused:
            raise refused[0]
        try:
            return await ask(text)
        except Exception as error:
            if _status(error) in (401, 403):
                refused.append(error)
            raise

    embedder.async_get_embedding_and_usage = each
    return embedder


def _why(error: BaseException) -> str:
    """What went wrong, in the words of the HTTP error under it when there is one: the SDK says only
    "Connection error." when the SSRF guard refused the address or stopped a body past its limit."""
    import httpx

    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, httpx.TransportError):
            return f"{type(error).__name__}: {cause}"
        cause = cause.__cause__ or cause.__context__
    return f"{type(error).__name__}: {error}"


def _status(error: BaseException | None) -> int | None:
    """The HTTP status of `error` or of what it wraps (Agno wraps the SDK's error)."""
    while error is not None:
        status = getattr(error, "status_code", None)
        if isinstance(status, int):
            return status
        error = error.__cause__ or error.__context__
    return None


class EmbeddingCache:
    """sha256 -> float32 vector in `<data>/knowledge/embeddings.sqlite` (one per data folder and process). Rows
    keyed the older way (model ref + text only, shared by every workspace) are never matched again."""

    _instances: dict[Path, "EmbeddingCache"] = {}
    _lock = threading.Lock()

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, check_same_thread=False)
        self._db.execute("CREATE TABLE IF NOT EXISTS embedding (key TEXT PRIMARY KEY, vector BLOB NOT NULL)")
        self._write = threading.Lock()

    @classmethod
    def shared(cls) -> "EmbeddingCache":
        path = data_dir() / "knowledge" / "embeddings.sqlite"
        with cls._lock:
            if path not in cls._instances:
                cls._instances[path] = cls(path)
            return cls._instances[path]

    def get_many(self, keys: list[str]) -> dict[str, list[float]]:
        found: dict[str, list[float]] = {}
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), 500):
            part = unique[start:start + 500]
            rows = self._db.execute(
                f"SELECT key, vector FROM embedding WHERE key IN ({','.join('?' * len(part))})", part)
            found.update({key: array.array("f", blob).tolist() for key, blob in rows})
        return found

    def put_many(self, vectors: dict[str, list[float]]) -> None:
        with self._write, self._db:
            self._db.executemany("INSERT OR REPLACE INTO embedding VALUES (?, ?)",
                                 [(k, array.array("f", v).tobytes()) for k, v in vectors.items()])
