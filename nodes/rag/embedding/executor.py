"""Embedding: each chunk `{text, metadata}` gains `vector` from the chosen provider model (batched, cached)."""

from typing import Any

from nodeflow_app.contract import ExecutionResult, FlowContext, NodeError
from nodeflow_app.knowledge.embedding import embed_texts


class EmbeddingExecutor:
    node_type = "embedding"

    async def execute(self, data: dict[str, Any], inputs: dict[str, Any], ctx: FlowContext) -> ExecutionResult:
        value = inputs.get("input")
        items = value if isinstance(value, list) else [value]
        chunks = []
        for index, item in enumerate(items):
            if isinstance(item, str):
                item = {"text": item, "metadata": {}}
            if not isinstance(item, dict) or not isinstance(item.get("text"), str):
                raise NodeError(f"item {index}: expected text or {{text, metadata}}, got {type(item).__name__}")
            chunks.append(item)
        model = str(data.get("model") or "").strip()
        if not model:
            raise NodeError("parameter 'model': choose an embedding model (provider:model)")
        vectors = await embed_texts([c["text"] for c in chunks], model, int(data.get("batch_size") or 64))
        ctx.runtime.emit(ctx.event("progress", message=f"embedded {len(chunks)} chunks with {model}"))
        return ExecutionResult(outputs={"output": [{**c, "vector": v, "embedding_model": model}
                                                 for c, v in zip(chunks, vectors)]})


executor = EmbeddingExecutor()
