"""Vector Store: write (add / replace by source) or delete chunks in a workspace's knowledge collection."""

import asyncio
from typing import Any

from nodeflow_app.contract import ExecutionResult, FlowContext, NodeError
from nodeflow_app.knowledge.collections import check_name
from nodeflow_app.knowledge.embedding import check_ref
from nodeflow_app.knowledge.indexing import index_chunks
from nodeflow_app.knowledge.workspace import store_for


class VectorStoreExecutor:
    node_type = "vector-store"

    async def execute(self, data: dict[str, Any], inputs: dict[str, Any], ctx: FlowContext) -> ExecutionResult:
        name = check_name(str(data.get("collection") or "").strip())
        store = await store_for(ctx)
        chunks = _chunks(inputs.get("input"))
        await _collection(store, name, str(data.get("embedding") or "").strip() or None)
        mode = data.get("mode") or "replace"
        if mode == "delete":
            sources = sorted({str((c.get("metadata") or {}).get("source") or "input") for c in chunks})
            deleted = sum([await asyncio.to_thread(store.delete_source, name, s) for s in sources])
            result = {"written": 0, "deleted": deleted}
        elif mode in ("add", "replace"):
            result = await index_chunks(store, name, chunks, replace_sources=mode == "replace")
        else:
            raise NodeError(f"parameter 'mode': unknown mode {mode!r} (replace, add or delete)")
        return ExecutionResult(outputs={"output": {"collection": name, **result}})


async def _collection(store: Any, name: str, model: str | None) -> None:
    """The collection, made on the first write with `model`, which it keeps for good (its vectors' size):
    so the model is checked first, and another model later is named rather than silently not used."""
    if name not in await asyncio.to_thread(store.names):
        if model:
            check_ref(model)  # a provider without a key or URL: said now, before the collection takes the model
        await asyncio.to_thread(store.create, name, model, exist_ok=True)
        return
    kept = (await asyncio.to_thread(store.settings, name)).get("embedding")
    if model and model != kept:
        raise NodeError(f"collection {name!r} embeds with {kept or 'no model (full-text search only)'}, but this "
                        f"node's Embedding model is {model}: a collection keeps the model it was made with; clear "
                        "the setting, or write to a new collection")


def _chunks(value: Any) -> list[dict[str, Any]]:
    items = value if isinstance(value, list) else [value]
    for index, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("text"), str):
            raise NodeError(f"item {index}: a chunk is {{text, metadata, vector?}} (wire a Text Chunker), "
                            f"got {type(item).__name__}")
        if not isinstance(item.get("metadata") or {}, dict):  # checked here for every mode, delete's too
            raise NodeError(f"item {index}: 'metadata' is a {type(item['metadata']).__name__}, not an object")
    return items


executor = VectorStoreExecutor()
