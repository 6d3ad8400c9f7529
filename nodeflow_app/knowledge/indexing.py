"""Index chunks into a collection and search it, embedding with the collection's model when it has one."""

from __future__ import annotations

import asyncio
from typing import Any

from nodeflow_app.knowledge.collections import KnowledgeStore
from nodeflow_app.knowledge.embedding import embed_texts


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
