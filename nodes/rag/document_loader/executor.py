"""Document Loader: documents `{text, metadata}` from the input, an uploaded file or folder, or a URL."""

import asyncio
from typing import Any

from nodes._helpers import primary_text
from nodeflow_app.contract import ExecutionResult, FlowContext, NodeError
from nodeflow_app.knowledge import readers, sources
from nodeflow_app.knowledge.readers import document, guess_format, read_document
from nodeflow_app.knowledge.workspace import workspace_of


class DocumentLoaderExecutor:
    node_type = "document-loader"

    async def execute(self, data: dict[str, Any], inputs: dict[str, Any], ctx: FlowContext) -> ExecutionResult:
        source = data.get("source") or "input"
        if source == "input":
            documents = _from_input(inputs.get("input"))
        elif source == "upload":
            documents = await asyncio.to_thread(_from_upload, str(data.get("path") or ""), _format(data),
                                                workspace_of(ctx))
        elif source == "url":
            documents = await _from_url(str(data.get("url") or "").strip(), _format(data))
        else:
            raise NodeError(f"parameter 'source': unknown source {source!r} (input, upload or url)")
        return ExecutionResult(outputs={"output": documents})


def _format(data: dict[str, Any]) -> str | None:
    chosen = data.get("format") or "auto"
    return None if chosen == "auto" else chosen


def _from_input(value: Any) -> list[dict[str, Any]]:
    items = value if isinstance(value, list) else [value]
    documents = []
    for index, item in enumerate(items):
        if isinstance(item, dict) and isinstance(item.get("text"), str):
            metadata = item.get("metadata") if isinstance(item.get("metadata"), dict) else {}
            documents.append({"text": item["text"], "metadata": {"source": "input", **metadata}})
        elif item is not None:
            documents.append(document(primary_text(item), "input", item=index if isinstance(value, list) else None))
    return [d for d in documents if d["text"].strip()]


def _from_upload(relative: str, fmt: str | None, workspace: str) -> list[dict[str, Any]]:
    if not relative.strip():
        raise NodeError("parameter 'path': name a file or folder of the workspace's uploads")
    path = sources.upload_path(relative, workspace)  # the run's workspace only: never another team's files
    root = sources.uploads_dir(workspace, create=False).resolve()
    files = sources.files_in(path) if path.is_dir() else [path]
    documents, chars = [], 0
    for file in files:
        name = str(file.relative_to(root))
        kind = fmt or guess_format(file.name)
        if kind is None:
            raise NodeError(f"{name}: unknown format; choose one in 'Format'")
        read = read_document(sources.read_file(file), name, kind)
        documents.extend(read)
        chars += sum(len(d["text"]) for d in read)
        if chars > readers.MAX_LOAD_CHARS or len(documents) > readers.MAX_LOAD_DOCUMENTS:
            raise NodeError(f"{relative}: more than {readers.MAX_LOAD_CHARS:,} characters or "
                            f"{readers.MAX_LOAD_DOCUMENTS:,} documents by {name}; one load may give at most that "
                            "(load parts of the folder)")
    return documents


async def _from_url(url: str, fmt: str | None) -> list[dict[str, Any]]:
    if not url:
        raise NodeError("parameter 'url' is empty")
    body, content_type, final_url = await sources.fetch(url)
    kind = fmt or guess_format(final_url, content_type) or "text"
    return await asyncio.to_thread(read_document, body, final_url, kind)


executor = DocumentLoaderExecutor()
