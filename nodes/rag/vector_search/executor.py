"""Vector Search: the top-k chunks of a collection for a query (hybrid, vector or full text, with filters)."""

from typing import Any

from nodes._helpers import key_value_pairs, primary_text, to_number, to_text
from nodeflow_app.contract import ExecutionResult, FlowContext, NodeError
from nodeflow_app.knowledge.collections import check_name
from nodeflow_app.knowledge.indexing import search
from nodeflow_app.knowledge.workspace import store_for


class VectorSearchExecutor:
    node_type = "vector-search"

    async def execute(self, data: dict[str, Any], inputs: dict[str, Any], ctx: FlowContext) -> ExecutionResult:
        name = check_name(str(data.get("collection") or "").strip())
        query = str(data.get("query") or "").strip() or primary_text(inputs.get("input")).strip()
        if not query:
            raise NodeError("parameter 'query' is empty and the input has no text to search for")
        threshold = data.get("threshold")
        if threshold not in (None, "") and to_number(threshold) is None:
            raise NodeError(f"parameter 'threshold': {threshold!r} is not a number")
        documents = await search(
            await store_for(ctx), name, query, top_k=int(data.get("top_k") or 4), mode=data.get("mode") or "hybrid",
            filters=dict(key_value_pairs(data.get("filters"), "filters")),
            threshold=None if threshold in (None, "") else to_number(threshold))
        return ExecutionResult(outputs={"output": {"query": query, "documents": documents,
                                                   "text": context_text(documents)}})


def context_text(documents: list[dict[str, Any]]) -> str:
    """The chunks as numbered passages with their source (and page), for a prompt."""
    parts = []
    for number, doc in enumerate(documents, start=1):
        meta = doc.get("metadata") or {}
        # A chunk's metadata is what its writer gave: a source may be a number.
        where = to_text(meta.get("source", "?")) + (f", page {to_text(meta['page'])}" if meta.get("page") else "")
        parts.append(f"[{number}] ({where})\n{doc['text']}")
    return "\n\n".join(parts)


executor = VectorSearchExecutor()
