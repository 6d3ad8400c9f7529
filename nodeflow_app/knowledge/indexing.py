"""Index chunks into a collection and search it, embedding with the collection's model when it has one."""

from __future__ import annotations

import asyncio
from typing import Any

from nodeflow_app.contract import NodeError
from nodeflow_app.knowledge.chunking import chunk_documents
from nodeflow_app.knowledge.collections import KnowledgeStore
from nodeflow_app.knowledge.embedding import embed_texts
from nodeflow_app.knowledge.readers import FORMATS, guess_format, read_document


async def index_chunks(store: KnowledgeStore, name: str, chunks: list[dict[str, Any]], *,
                       replace_sources: bool = False) -> dict[str, int]:
    """Write chunks; those without a `vector` are embedded first when the collection has a model."""
    model = (await asyncio.to_thread(store.settings, name)).get("embedding")
    if model and any(chunk.get("vector") is None for chunk in chunks if isinstance(chunk, dict)):
        vectors = await embed_texts([chunk["text"] for chunk in chunks], model)
        chunks = [{**chunk, "vector": vector} for chunk, vector in zip(chunks, vectors)]
    return await asyncio.to_thread(store.write, name, chunks, replace_sources=replace_sources)


async def search(store: KnowledgeStore, name: str, query: str, **options: Any) -> list[dict[str, Any]]:
    """`KnowledgeStore.search` with the query embedded by the collection's model (when it has one)."""
    settings = await asyncio.to_thread(store.settings, name)
    vector = None
    if settings.get("embedding") and settings.get("dimensions") and options.get("mode", "hybrid") != "text":
        vector = (await embed_texts([query], settings["embedding"]))[0]
    return await asyncio.to_thread(store.search, name, query, vector=vector, **options)


async def index_file(store: KnowledgeStore, name: str, raw: bytes, source: str, *, chunk_size: int = 1000,
                     overlap: int = 200) -> dict[str, int]:
    """Read one uploaded file, chunk it (recursive; Markdown-aware for .md) and replace its source's chunks."""
    fmt = guess_format(source)
    if fmt is None:
        raise NodeError(f"{source}: unknown format (known: {', '.join(FORMATS)})")
    documents = await asyncio.to_thread(read_document, raw, source, fmt)
    chunks = await asyncio.to_thread(chunk_documents, documents, chunk_size, overlap, markdown=fmt == "markdown")
    if not chunks:
        raise NodeError(f"{source}: no text found in it")
    return await index_chunks(store, name, chunks, replace_sources=True)
