"""KnowledgeStore on a real embedded LanceDB: write, replace and delete by source, full-text, vector and hybrid
search with filters, and the errors a user sees."""

from __future__ import annotations

import pytest

from nodeflow_app.contract import NodeError
from nodeflow_app.knowledge.collections import KnowledgeStore
from tests.llm.fake_openai import fake_embedding

POLICY = [
    {"text": "Refunds are paid within 14 days of the return.", "metadata": {"source": "policy.md", "chunk": 0}},
    {"text": "Shipping is free for orders over 50 euros.", "metadata": {"source": "policy.md", "chunk": 1,
                                                                        "lang": "en"}},
    {"text": "Gift cards never expire.", "metadata": {"source": "cards.pdf", "page": 2, "chunk": 0}},
]


def embedded(chunks):
    return [{**c, "vector": fake_embedding(c["text"])} for c in chunks]


@pytest.fixture
def store(tmp_path) -> KnowledgeStore:
    return KnowledgeStore("team-a", tmp_path / "knowledge")


def test_full_text_search_without_any_embedding_model(store):
    store.create("help")
    assert store.write("help", POLICY) == {"written": 3, "deleted": 0}
    [best, *_] = store.search("help", "when are refunds paid", mode="text")
    assert best["text"].startswith("Refunds") and best["metadata"]["source"] == "policy.md"
    assert store.search("help", "refunds", mode="hybrid")[0]["text"].startswith("Refunds")  # falls back to text
    info = store.info("help")
    assert (info.documents, info.chunks, info.embedding) == (2, 3, None)


def test_vector_and_hybrid_search_rank_by_meaning_and_score(store):
    store.create("help", "openai-compatible:fake-embed")
    store.write("help", embedded(POLICY))
    query = "gift cards expire"
    by_vector = store.search("help", query, vector=fake_embedding(query), mode="vector", top_k=3)
    assert by_vector[0]["text"] == "Gift cards never expire." and by_vector[0]["score"] > by_vector[1]["score"]
    hybrid = store.search("help", query, vector=fake_embedding(query), mode="hybrid", top_k=2)
    assert hybrid[0]["text"] == "Gift cards never expire." and len(hybrid) == 2
    assert store.search("help", query, vector=fake_embedding(query), mode="vector", threshold=0.99) == \
        [c for c in by_vector if c["score"] >= 0.99]


def test_filters_on_columns_and_on_any_metadata_key(store):
    store.create("help")
    store.write("help", POLICY)
    assert [c["metadata"]["source"] for c in store.search("help", "free OR expire OR refunds", mode="text",
                                                          filters={"source": "cards.pdf"})] == ["cards.pdf"]
    assert [c["text"] for c in store.search("help", "free OR expire OR refunds", mode="text",
                                            filters={"lang": "en"})] == [POLICY[1]["text"]]
    assert store.search("help", "refunds", mode="text", filters={"source": "it's-missing"}) == []
    # The editor's filter rows give text: a page or chunk number as text filters like the number.
    assert [c["text"] for c in store.search("help", "free OR expire OR refunds", mode="text",
                                            filters={"page": "2"})] == [POLICY[2]["text"]]
    assert len(store.search("help", "free OR expire OR refunds", mode="text", filters={"page": 2.0})) == 1
    with pytest.raises(NodeError, match=r"filter 'chunk' is a whole number \(a chunk index\), got 'first'"):
        store.search("help", "refunds", mode="text", filters={"chunk": "first"})


def test_replace_and_delete_by_source(store):
    store.create("help")
    store.write("help", POLICY)
    new = [{"text": "Refunds are paid within 30 days.", "metadata": {"source": "policy.md"}}]
    assert store.write("help", new, replace_sources=True) == {"written": 1, "deleted": 2}
    assert [d["source"] for d in store.documents("help")] == ["cards.pdf", "policy.md"]
    assert [c["text"] for c in store.chunks("help", "policy.md")] == [new[0]["text"]]
    assert store.delete_source("help", "cards.pdf") == 1
    assert store.info("help").chunks == 1
    store.delete("help")
    assert store.names() == []


def test_workspaces_do_not_see_each_other(tmp_path):
    a, b = KnowledgeStore("a", tmp_path), KnowledgeStore("b", tmp_path)
    a.create("shared-name")
    a.write("shared-name", POLICY)
    with pytest.raises(NodeError, match="no knowledge collection named 'shared-name'"):
        b.search("shared-name", "refunds")


@pytest.mark.parametrize("name", ["", "../etc", "a b", "x" * 65, None])
def test_bad_collection_names_are_refused(store, name):
    with pytest.raises(NodeError, match="collection name"):
        store.create(name)


def test_vectors_of_another_size_or_missing_vectors_are_refused(store):
    store.create("help", "openai-compatible:fake-embed")
    store.write("help", embedded(POLICY[:1]))
    with pytest.raises(NodeError, match="vectors of \\[3\\] dimensions, expected 64"):
        store.write("help", [{**POLICY[1], "vector": [0.1, 0.2, 0.3]}])
    with pytest.raises(NodeError, match="every chunk needs a 'vector'"):
        store.write("help", POLICY[1:])
    with pytest.raises(NodeError, match="item 0: a chunk is an object with a 'text' string"):
        store.write("help", ["just text"])


@pytest.mark.parametrize("name", ["docs\n", "", "-docs", "a/b", "x" * 65, None])
def test_a_collection_name_is_checked_whole(name):
    from nodeflow_app.contract import NodeError
    from nodeflow_app.knowledge.collections import check_name

    with pytest.raises(NodeError, match="collection name"):
        check_name(name)


async def test_the_first_store_of_a_process_is_opened_off_the_event_loop(tmp_path, monkeypatch):
    """Importing and opening LanceDB takes ~1.8 s the first time: on the loop, every other run waited."""
    import time
    from types import SimpleNamespace

    from nodeflow_app.knowledge import workspace
    from tests.nodes.loop_ticks import loop_ticks

    def slow_store(root, name):
        time.sleep(0.3)  # what the first import and connection cost, in short
        return KnowledgeStore(name, tmp_path / "knowledge")

    monkeypatch.setattr(workspace, "_store", slow_store)
    async with loop_ticks() as ticks:
        store = await workspace.store_for(SimpleNamespace(services={"workspace_id": "team-a"}))
    assert isinstance(store, KnowledgeStore) and ticks[0] >= 10, ticks


def test_a_collection_deleted_while_a_write_is_prepared_does_not_come_back(store, monkeypatch):
    """The write read the settings before its lock and made the dropped table again: the collection was gone from
    the list, and a new collection of that name had its old chunks."""
    from nodeflow_app.knowledge import collections

    store.create("c")
    store.write("c", [{"text": "old salary list", "metadata": {"source": "salaries.md"}}])
    make_row = collections._row

    def deleted_meanwhile(chunk, index):
        if index == 0:
            store.delete("c")  # another tab, while this write made its rows
        return make_row(chunk, index)

    monkeypatch.setattr(collections, "_row", deleted_meanwhile)
    with pytest.raises(NodeError, match="no knowledge collection named 'c'"):
        store.write("c", [{"text": "handbook", "metadata": {"source": "handbook.md"}}])
    monkeypatch.setattr(collections, "_row", make_row)
    assert store.names() == [] and not list(store.root.glob("*.lance"))
    store.create("c")
    assert store.documents("c") == []


def test_a_table_another_worker_made_meanwhile_is_written_into(store, monkeypatch):
    """Two server processes writing a collection's first chunks at once: the second create failed with
    "Table 'c' already exists" (the lock is per process)."""
    ours, theirs = store, KnowledgeStore("team-a", store.root.parent)
    ours.create("c")
    create = ours._db.create_table

    def theirs_first(name, **options):
        theirs._create_table(name, None)  # between our look for the table and our create
        return create(name, **options)

    monkeypatch.setattr(ours._db, "create_table", theirs_first)
    assert ours.write("c", [{"text": "refunds", "metadata": {"source": "a.md"}}]) == {"written": 1, "deleted": 0}
    assert [(d["source"], d["chunks"]) for d in theirs.documents("c")] == [("a.md", 1)]
    assert ours.search("c", "refunds", mode="text")[0]["text"] == "refunds"


def test_listing_reads_the_source_and_title_columns_only(store):
    """Each listing (the Knowledge page's, on every visit) read whole tables, text and vectors included."""
    import os

    def bytes_read() -> int:
        with open("/proc/self/io") as io:
            return int(next(line for line in io if line.startswith("rchar")).split()[1])

    store.create("c")
    store.write("c", [{"text": os.urandom(5_000).hex(), "metadata": {"source": f"d{i % 10}.md", "title": "T"}}
                      for i in range(1000)])  # 10 MB of text
    fresh = KnowledgeStore("team-a", store.root.parent)
    before = bytes_read()
    assert [(d["source"], d["title"], d["chunks"]) for d in fresh.documents("c")] == [
        (f"d{i}.md", "T", 100) for i in range(10)]
    assert fresh.info("c").documents == 10
    assert bytes_read() - before < 1_000_000
