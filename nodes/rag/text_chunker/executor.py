"""Text Chunker: documents (or text) in, chunks `{text, metadata}` out."""

import asyncio
from typing import Any

from nodeflow_app.contract import ExecutionResult, FlowContext, NodeError
from nodeflow_app.knowledge import readers
from nodeflow_app.knowledge.chunking import chunk_documents

from nodes._helpers import primary_text


class TextChunkerExecutor:
    node_type = "text-chunker"

    async def execute(self, data: dict[str, Any], inputs: dict[str, Any], ctx: FlowContext) -> ExecutionResult:
        documents = as_documents(inputs.get("input"))
        _check_length(documents)
        size, overlap = data.get("chunk_size"), data.get("overlap")  # numbers within bounds (the kernel checks)
        chunks = await asyncio.to_thread(  # a book takes a while: the event loop goes on meanwhile
            chunk_documents, documents, 1000 if size is None else int(size), int(overlap or 0),
            markdown=data.get("mode") == "markdown")
        return ExecutionResult(outputs={"output": chunks})


def as_documents(value: Any) -> list[dict[str, Any]]:
    """A list of `{text, metadata}`; plain text (or a non-document value's primary text) becomes one."""
    items = value if isinstance(value, list) else [value]
    documents = []
    for index, item in enumerate(items):
        if isinstance(item, dict) and "text" in item:
            if not isinstance(item["text"], str):
                raise NodeError(f"item {index}: 'text' is a {type(item['text']).__name__}, not text")
            metadata = item.get("metadata") or {}
            if not isinstance(metadata, dict):
                raise NodeError(f"item {index}: 'metadata' is a {type(metadata).__name__}, not an object")
            documents.append({"text": item["text"], "metadata": dict(metadata)})
        elif item is not None:
            documents.append({"text": primary_text(item), "metadata": {"source": "input"}})
    return documents


def _check_length(documents: list[dict[str, Any]]) -> None:
    """At most what one Document Loader run gives: a huge text from another node took minutes to chunk."""
    chars = sum(len(document["text"]) for document in documents)
    if chars > readers.MAX_LOAD_CHARS:
        raise NodeError(f"input 'Documents': {chars:,} characters of text; a Text Chunker takes at most "
                        f"{readers.MAX_LOAD_CHARS:,} at once (as much as one Document Loader run gives; split it)")


executor = TextChunkerExecutor()
