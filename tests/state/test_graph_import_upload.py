"""The graph import upload is read as it streams in and stopped at the limit, never read whole first."""

from __future__ import annotations

import json

import pytest

from nodeflow_app.state.graph_list_state import MAX_IMPORT_BYTES, UploadTooLarge, read_first_file
from nodeflow_app.store.graphs import GraphStore
from nodes._registry import default_registry


class Chunk:
    def __init__(self, filename: str, data: bytes):
        self.filename, self.data = filename, data


class Stream:
    """An upload arriving in 64 KB chunks; counts how many the reader took."""

    def __init__(self, files: dict[str, int]):
        self.chunks = [Chunk(name, b"x" * 65536) for name, size in files.items() for _ in range(size // 65536)]
        self.taken = 0

    def __aiter__(self):
        return self

    async def __anext__(self):
        if self.taken == len(self.chunks):
            raise StopAsyncIteration
        self.taken += 1
        return self.chunks[self.taken - 1]


async def test_an_oversized_upload_is_stopped_right_after_the_limit():
    stream = Stream({"huge.json": 200 * 1024 * 1024})
    with pytest.raises(UploadTooLarge) as caught:
        await read_first_file(stream, MAX_IMPORT_BYTES)
    assert caught.value.name == "huge.json"
    assert stream.taken == MAX_IMPORT_BYTES // 65536 + 1  # 5 MB and one chunk, not 200 MB


async def test_the_first_file_is_read_whole_and_others_are_skipped():
    stream = Stream({"graph.json": 4 * 65536, "other.json": 10 * 65536})
    name, content = await read_first_file(stream, MAX_IMPORT_BYTES)
    assert (name, len(content)) == ("graph.json", 4 * 65536)
    assert await read_first_file(Stream({}), MAX_IMPORT_BYTES) == (None, b"")


@pytest.mark.parametrize("text, message", [
    ("[" * 100_000 + "]" * 100_000, "the file's JSON is nested deeper than 100 levels"),
    ('{"id": ' + "7" * 5000 + "}", "the file holds a whole number of over 4,300 digits"),
    ('{"nodes": [{"id": "t", "type": "manual-trigger", "name": "Start", "data": {"payload": NaN}}]}',
     "node 'Start' data.payload: nan is not a number JSON can hold (NaN and Infinity are refused)"),
])
def test_an_imported_file_that_cannot_be_read_is_an_issue_not_a_crash(tmp_path, text, message):
    store = GraphStore(f"sqlite:///{tmp_path / 'g.db'}")
    summary, issues = store.import_json(text, default_registry())
    assert summary is None and [i.message for i in issues] == [message]


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, '{"id": ' + "7" * 5000 + "}", "{nope"])
def test_a_file_json_cannot_hold_is_no_legacy_graph_and_no_crash(text):
    """The import looks for a graph of the older runtime first: a file it cannot parse is not one (the import's
    own check then names the problem) rather than an error that stops the upload's handler."""
    from nodeflow_app.state.legacy_import_state import legacy_migration

    assert legacy_migration(text, "deep.json") is None


def test_an_import_beside_a_graph_of_its_name_gets_the_first_free_number(tmp_path, monkeypatch):
    """Only the workspace's names count; a name too long to take a number is kept (a failed import would be worse
    than two graphs of one name)."""
    from nodeflow_app.state import graph_list_state
    from nodeflow_app.store.graphs import NAME_MAX

    store = GraphStore(f"sqlite:///{tmp_path / 'g.db'}")
    monkeypatch.setattr(graph_list_state, "graph_store", lambda: store)
    for name, workspace in [("Flow", "w1"), ("Flow 2", "w1"), ("Other", "w1"), ("Other", "w2"), ("L" * NAME_MAX, "w1")]:
        store.create(name, workspace_id=workspace)

    def imported(name: str, workspace: str) -> str:
        text = json.dumps({"name": name, "nodes": [], "edges": []})
        summary, issues = store.import_json(text, default_registry(), workspace_id=workspace,
                                            free_name=graph_list_state.free_name_in(workspace))
        assert issues == []
        return summary.name

    assert imported("Flow", "w1") == "Flow 3"
    assert imported("Other", "w1") == "Other 2"
    assert imported("New", "w1") == "New"
    assert imported("Flow", "w3") == "Flow"
    assert imported("L" * NAME_MAX, "w1") == "L" * NAME_MAX
