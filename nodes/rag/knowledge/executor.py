"""Knowledge: on its `tools` link, one search tool over a collection (an Agno Function) for an Agent."""

import asyncio
import json
import re
from typing import Any

from nodeflow_app.contract import FlowContext, NodeError
from nodeflow_app.knowledge.collections import check_name
from nodeflow_app.knowledge.indexing import search
from nodeflow_app.knowledge.workspace import store_for

TEXT_LIMIT = 4000  # characters of one chunk given to the model


class KnowledgeExecutor:
    node_type = "knowledge"

    async def materialize(self, data: dict[str, Any], output_handle: str, ctx: FlowContext) -> list[Any]:
        if output_handle != "tools":
            raise NodeError(f"Knowledge has no link output {output_handle!r} (it provides 'tools')")
        from agno.tools.function import Function

        name = check_name(str(data.get("collection") or "").strip())
        store = await store_for(ctx)
        await asyncio.to_thread(store.settings, name)  # a clear error now, not when the model first calls the tool
        top_k, mode = int(data.get("top_k") or 4), data.get("mode") or "hybrid"

        async def search_knowledge(query: str) -> str:
            documents = await search(store, name, query, top_k=top_k, mode=mode)
            return json.dumps([_passage(d) for d in documents], ensure_ascii=False)

        holds = str(data.get("description") or "").strip()
        description = (f"Search the knowledge collection '{name}'" + (f" ({holds})" if holds else "") +
                       ". Returns the most relevant passages as JSON [{source, page, text, score}]; cite the source.")
        return [Function(
            name=f"search_{re.sub(r'[^A-Za-z0-9_]', '_', name)}", description=description, entrypoint=search_knowledge,
            parameters={"type": "object", "required": ["query"],
                        "properties": {"query": {"type": "string", "description": "What to look for."}}})]


def _passage(document: dict[str, Any]) -> dict[str, Any]:
    meta = document.get("metadata") or {}
    passage = {"source": meta.get("source"), "text": document["text"][:TEXT_LIMIT], "score": document.get("score")}
    if meta.get("page"):
        passage["page"] = meta["page"]
    return passage


executor = KnowledgeExecutor()
