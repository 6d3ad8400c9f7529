"""The rag nodes in real runs: a folder of real files indexed by Document Loader -> Text Chunker -> Embedding ->
Vector Store, searched by Vector Search, and an Agent using a Knowledge node through Agno and the fake server."""

from __future__ import annotations

import json

import pytest

from nodeflow_app.knowledge.collections import KnowledgeStore
from tests.knowledge import files
from tests.llm.fake_openai import text, tool_call
from tests.llm.graphs import MODEL, graph, of, run_graph

EMBED = "openai-compatible:fake-embed"


def put_uploads(data_dir, workspace="default"):
    folder = data_dir / "uploads" / workspace / "handbook"
    folder.mkdir(parents=True)
    (folder / "refunds.pdf").write_bytes(files.pdf(["Refunds are paid within 14 days.", "Store credit lasts a year."]))
    (folder / "guide.docx").write_bytes(files.docx(["Returns need the original receipt."]))
    (folder / "shipping.html").write_bytes(files.HTML)
    (folder / "notes.bin").write_bytes(b"\x00ignored: unknown format")
    return folder


def indexing_graph(**store: object) -> dict:
    return graph([("start", "manual-trigger", {}),
                  ("load", "document-loader", {"source": "upload", "path": "handbook"}),
                  ("chunk", "text-chunker", {"chunk_size": 200, "overlap": 20}),
                  ("embed", "embedding", {"model": EMBED}),
                  ("store", "vector-store", {"collection": "handbook", "mode": "replace", **store})],
                 ["start.output -> load.input", "load.output -> chunk.input", "chunk.output -> embed.input",
                  "embed.output -> store.input"])


async def test_a_folder_of_files_is_indexed_and_searchable(fake_llm, private_data_dir):
    put_uploads(private_data_dir)
    run, events = await run_graph(indexing_graph(), payload={})
    assert run.status == "completed", [e.data for e in events if e.event_type == "error"]
    assert run.outputs_by_name()["STORE"]["output"] == {"collection": "handbook", "written": 4, "deleted": 0}
    assert len(fake_llm.embedding_requests) == 1 and len(fake_llm.embedding_requests[0]["input"]) == 4

    again, _ = await run_graph(indexing_graph(), payload={})  # replace: same sources, no duplicates
    assert again.outputs_by_name()["STORE"]["output"] == {"collection": "handbook", "written": 4, "deleted": 4}
    assert len(fake_llm.embedding_requests) == 1  # every chunk's vector came from the cache

    store = KnowledgeStore("default")
    assert [d["source"] for d in store.documents("handbook")] == [
        "handbook/guide.docx", "handbook/refunds.pdf", "handbook/shipping.html"]
    search = graph([("start", "manual-trigger", {}),
                    ("find", "vector-search", {"collection": "handbook", "top_k": 2})],
                   ["start.output -> find.input"])
    found, events = await run_graph(search, payload={"text": "how long until refunds are paid"})
    assert found.status == "completed", [e.data for e in events if e.event_type == "error"]
    result = found.outputs_by_name()["FIND"]["output"]
    assert result["documents"][0]["text"] == "Refunds are paid within 14 days."
    assert result["documents"][0]["metadata"]["page"] == 1
    assert result["text"].startswith("[1] (handbook/refunds.pdf, page 1)\nRefunds are paid")


async def test_the_loader_never_reads_outside_the_uploads_folder(fake_llm, private_data_dir):
    (private_data_dir / "secret.key").write_text("do not read")
    loader = graph([("start", "manual-trigger", {}),
                    ("load", "document-loader", {"source": "upload", "path": "../secret.key", "format": "text"})],
                   ["start.output -> load.input"])
    run, events = await run_graph(loader, payload={})
    assert run.status == "failed"
    assert "leaves the workspace's uploads folder" in of(events, "load", "error")[0].data["error"]


async def test_a_folder_load_skips_links_to_files_outside_it(fake_llm, private_data_dir):
    """Loading a folder read what a symbolic link in it pointed to, anywhere on the server."""
    (private_data_dir / "secret.key").write_text("do not read")
    folder = put_uploads(private_data_dir)
    (folder / "link.txt").symlink_to(private_data_dir / "secret.key")
    (folder / "inner.txt").write_text("kept")
    (folder / "alias.txt").symlink_to(folder / "inner.txt")  # a link that stays inside is read as usual
    loader = graph([("start", "manual-trigger", {}), ("load", "document-loader", {"source": "upload",
                                                                                  "path": "handbook"})],
                   ["start.output -> load.input"])
    run, events = await run_graph(loader, payload={})
    assert run.status == "completed", of(events, "load", "error")
    sources = [d["metadata"]["source"] for d in run.outputs_by_name()["LOAD"]["output"]]
    assert "handbook/link.txt" not in sources and {"handbook/inner.txt", "handbook/alias.txt"} <= set(sources)
    assert not any("do not read" in d["text"] for d in run.outputs_by_name()["LOAD"]["output"])


async def test_a_workspace_reads_only_its_own_uploads(fake_llm, private_data_dir):
    put_uploads(private_data_dir, workspace="0123456789abcdef")

    async def load(path: str, workspace: str):
        loader = graph([("start", "manual-trigger", {}),
                        ("load", "document-loader", {"source": "upload", "path": path})],
                       ["start.output -> load.input"])
        return await run_graph(loader, payload={}, services={"workspace_id": workspace})

    run, _ = await load("handbook", "0123456789abcdef")
    assert run.status == "completed" and len(run.outputs_by_name()["LOAD"]["output"]) == 4
    for path, message in (("handbook", "no file or folder 'handbook' in the workspace's uploads folder"),
                          (".", "no file or folder '.' in the workspace's uploads folder"),
                          ("../0123456789abcdef/handbook", "leaves the workspace's uploads folder")):
        run, events = await load(path, "fedcba9876543210")
        assert run.status == "failed" and message in of(events, "load", "error")[0].data["error"], path


async def test_uploads_kept_for_every_workspace_at_once_move_into_the_workspace_of_their_collection(
        private_data_dir):
    """Before uploads were per workspace they were kept in uploads/<collection>/; they move once, at first use."""
    from nodeflow_app.knowledge import sources

    for workspace, collection in (("0123456789abcdef", "handbook"), ("0123456789abcdef", "shared"),
                                  ("fedcba9876543210", "shared")):
        (private_data_dir / "knowledge" / workspace).mkdir(parents=True, exist_ok=True)
        (private_data_dir / "knowledge" / workspace / f"{collection}.json").write_text("{}")
    for collection in ("handbook", "shared", "scripts"):
        (private_data_dir / "uploads" / collection).mkdir(parents=True)
        (private_data_dir / "uploads" / collection / "a.md").write_text(collection)
    assert sources.uploads_dir("0123456789abcdef") == private_data_dir / "uploads" / "0123456789abcdef"
    uploads = private_data_dir / "uploads"
    assert (uploads / "0123456789abcdef" / "handbook" / "a.md").read_text() == "handbook"  # its one workspace
    assert (uploads / "default" / "scripts" / "a.md").read_text() == "scripts"  # no collection: runs before accounts
    assert (uploads / "shared" / "a.md").exists()  # two workspaces have a 'shared': left for the admin, and logged
    assert not (uploads / "handbook").exists() and not (uploads / "scripts").exists()


async def test_a_url_to_a_private_address_is_refused(fake_llm):
    loader = graph([("start", "manual-trigger", {}),
                    ("load", "document-loader", {"source": "url", "url": "http://127.0.0.1:9/secrets"})],
                   ["start.output -> load.input"])
    run, events = await run_graph(loader, payload={})
    assert run.status == "failed" and "refused" in of(events, "load", "error")[0].data["error"]


async def test_an_agent_answers_from_its_knowledge_and_the_tool_result_names_the_source(fake_llm, private_data_dir):
    put_uploads(private_data_dir)
    await run_graph(indexing_graph(embedding=EMBED), payload={})
    fake_llm.script(tool_call("search_handbook", {"query": "refund delay"}),
                    text(["Refunds ", "take ", "14 days ", "(refunds.pdf)."]))
    agent = graph([("chat", "chat-start", {}), ("agent", "agent", {"model": MODEL}),
                   ("kb", "knowledge", {"collection": "handbook", "description": "the shop handbook"})],
                  ["chat.output -> agent.input", "kb.tools => agent.tools"])
    run, events = await run_graph(agent, payload={"message": "How long do refunds take?"})
    assert run.status == "completed", [e.data for e in events if e.event_type == "error"]
    [done] = of(events, "agent", "tool_call_completed")
    passages = json.loads(done.data["result"])
    assert passages[0]["source"] == "handbook/refunds.pdf" and "14 days" in passages[0]["text"]
    tools = fake_llm.requests[0]["tools"]
    assert tools[0]["function"]["name"] == "search_handbook"
    assert "the shop handbook" in tools[0]["function"]["description"]
    assert run.outputs_by_name()["AGENT"]["output"]["response"] == "Refunds take 14 days (refunds.pdf)."


async def test_a_missing_collection_fails_the_agent_clearly(fake_llm):
    agent = graph([("chat", "chat-start", {}), ("agent", "agent", {"model": MODEL}),
                   ("kb", "knowledge", {"collection": "nope"})],
                  ["chat.output -> agent.input", "kb.tools => agent.tools"])
    run, events = await run_graph(agent, payload={"message": "hi"})
    assert run.status == "failed"
    assert "no knowledge collection named 'nope'" in json.dumps([e.data for e in events if e.event_type == "error"])


async def test_a_new_collection_takes_its_model_only_once_it_can_embed(fake_llm, private_data_dir, monkeypatch):
    """A first run whose model could not embed left the collection bound to it: every run after the setting was
    corrected still failed naming the old model."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    chunks = [{"text": "Refunds are paid within 14 days.", "metadata": {"source": "faq"}}]

    def writing(model: str) -> dict:
        return graph([("start", "manual-trigger", {}),
                      ("store", "vector-store", {"collection": "faq", "mode": "replace", "embedding": model})],
                     ["start.output -> store.input"])

    failed, _ = await run_graph(writing("openai:text-embedding-3-small"), payload=chunks)
    assert failed.status == "failed" and "provider openai is not configured" in failed.error, failed.error
    assert KnowledgeStore("default").names() == []  # not made: the corrected setting is taken next time
    done, _ = await run_graph(writing(EMBED), payload=chunks)
    assert done.status == "completed", done.error
    assert KnowledgeStore("default").settings("faq")["embedding"] == EMBED
    other, _ = await run_graph(writing("openai-compatible:other-embed"), payload=chunks)
    assert other.status == "failed" and (f"collection 'faq' embeds with {EMBED}, but this node's Embedding model "
                                         "is openai-compatible:other-embed") in other.error


async def test_one_load_of_a_folder_gives_at_most_so_much(fake_llm, private_data_dir, monkeypatch):
    """Each file is limited by itself; a folder of thousands of them went into one list."""
    from nodeflow_app.knowledge import readers

    folder = private_data_dir / "uploads" / "default" / "many"
    folder.mkdir(parents=True)
    for n in range(3):
        (folder / f"{n}.txt").write_text("x" * 400)
    monkeypatch.setattr(readers, "MAX_LOAD_CHARS", 1000)
    load = graph([("start", "manual-trigger", {}), ("load", "document-loader", {"source": "upload", "path": "many"})],
                 ["start.output -> load.input"])
    run, events = await run_graph(load, payload={})
    assert of(events, "load", "error")[0].data["error"] == (
        "many: more than 1,000 characters or 200,000 documents by many/2.txt; one load may give at most that "
        "(load parts of the folder)")
    monkeypatch.setattr(readers, "MAX_LOAD_CHARS", 1200)
    run, events = await run_graph(load, payload={})
    assert run.status == "completed", of(events, "load", "error")


async def test_the_text_chunker_takes_at_most_what_one_load_gives(monkeypatch):
    """A huge text from another node was chunked whole, however long (minutes, and millions of chunks)."""
    from nodeflow_app.knowledge import readers

    monkeypatch.setattr(readers, "MAX_LOAD_CHARS", 100)
    chunk = graph([("start", "manual-trigger", {}), ("chunk", "text-chunker", {"chunk_size": 50, "overlap": 0})],
                  ["start.output -> chunk.input"])
    run, events = await run_graph(chunk, payload=[{"text": "a " * 25}, {"text": "b " * 25}])
    assert run.status == "completed", of(events, "chunk", "error")
    run, events = await run_graph(chunk, payload=[{"text": "a " * 25}, {"text": "b " * 25 + "c"}])
    assert of(events, "chunk", "error")[0].data["error"] == (
        "input 'Documents': 101 characters of text; a Text Chunker takes at most 100 at once (as much as one "
        "Document Loader run gives; split it)")


async def test_metadata_that_is_not_an_object_is_named_by_each_node_that_reads_it(fake_llm, private_data_dir):
    """A list or text as `metadata` ended Text Chunker and Vector Store (delete) with a bare TypeError or
    AttributeError."""
    bad = [{"text": "fine", "metadata": {"source": "a"}}, {"text": "odd", "metadata": ["x"]}]
    for node, data in (("text-chunker", {"chunk_size": 50, "overlap": 0}),
                       ("vector-store", {"collection": "faq", "mode": "delete"}),
                       ("vector-store", {"collection": "faq", "mode": "add"})):
        reading = graph([("start", "manual-trigger", {}), ("node", node, data)], ["start.output -> node.input"])
        run, events = await run_graph(reading, payload=bad)
        assert of(events, "node", "error")[0].data["error"] == "item 1: 'metadata' is a list, not an object", node


async def test_a_chunk_whose_source_is_a_number_is_found_and_shown(fake_llm, private_data_dir):
    """Vector Search wrote each passage's source with `+`: a number there (kept as given) failed every search."""
    store = graph([("start", "manual-trigger", {}), ("store", "vector-store", {"collection": "faq", "mode": "add"})],
                  ["start.output -> store.input"])
    written, _ = await run_graph(store, payload=[{"text": "Refunds take 14 days.", "metadata": {"source": 7,
                                                                                                "page": 2}}])
    assert written.status == "completed", written.error
    search = graph([("start", "manual-trigger", {}),
                    ("find", "vector-search", {"collection": "faq", "mode": "text", "query": "refunds"})],
                   ["start.output -> find.input"])
    found, events = await run_graph(search, payload={})
    assert found.status == "completed", of(events, "find", "error")
    assert found.outputs_by_name()["FIND"]["output"]["text"] == "[1] (7, page 2)\nRefunds take 14 days."


async def test_an_upload_path_the_system_refuses_is_a_clear_error(fake_llm, private_data_dir):
    """A name too long for the file system ended the loader with a bare OSError quoting the whole path."""
    (private_data_dir / "uploads" / "default").mkdir(parents=True)
    loader = graph([("start", "manual-trigger", {}),
                    ("load", "document-loader", {"source": "upload", "path": "a" * 300})],
                   ["start.output -> load.input"])
    run, events = await run_graph(loader, payload={})
    assert of(events, "load", "error")[0].data["error"] == (
        f"path {'a' * 79 + '…'!r} cannot name a file: File name too long")
