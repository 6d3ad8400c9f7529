"""The Knowledge page's upload is streamed into the collection's folder (a buffered one reached the disk whole
before any access check): a file past the limit or of an unknown format is dropped as it arrives; it writes only
into a collection of the caller's workspace."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

import nodeflow_app.nodeflow_app  # noqa: F401 - registers every state class of the app
from nodeflow_app.contract import NodeError
from nodeflow_app.knowledge.sources import uploads_dir
from nodeflow_app.knowledge.workspace import workspace_store
from nodeflow_app.state import access, knowledge_state
from nodeflow_app.state.knowledge_state import KnowledgeState, save_upload

WORKSPACE, OTHER = "aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb"


@pytest.fixture(autouse=True)
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("NODEFLOW_DATA_DIR", str(tmp_path / "data"))
    return tmp_path / "data"


def _docs() -> Path:
    return uploads_dir(WORKSPACE) / "docs"


class Stream:
    def __init__(self, files: list[tuple[str, int]], piece: int = 400):
        self.chunks = [SimpleNamespace(filename=name, data=b"x" * min(piece, size - start))
                       for name, size in files for start in range(0, size, piece)]

    def __aiter__(self):
        return self._each()

    async def _each(self):
        for chunk in self.chunks:
            yield chunk


async def test_a_streamed_upload_keeps_the_good_files_and_drops_the_rest_as_they_arrive(tmp_path, monkeypatch):
    monkeypatch.setattr(knowledge_state, "MAX_BYTES", 1000)
    saved, refused = await save_upload(Stream([("notes.md", 900), ("huge.pdf", 5000), ("tool.exe", 10),
                                               ("../escape.txt", 10)]), WORKSPACE, "docs")
    assert saved == ["notes.md", "escape.txt"]
    assert refused == ["huge.pdf: larger than 0 MB", "tool.exe: unknown format"]
    assert sorted(p.name for p in _docs().iterdir()) == ["escape.txt", "notes.md"]
    assert (_docs() / "notes.md").stat().st_size == 900 and not (_docs().parent / "escape.txt").exists()


async def test_a_drop_of_too_many_files_keeps_the_first_ones(tmp_path, monkeypatch):
    monkeypatch.setattr(knowledge_state, "MAX_UPLOAD_FILES", 2)
    saved, refused = await save_upload(Stream([(f"{n}.txt", 10) for n in range(4)]), WORKSPACE, "docs")
    assert saved == ["0.txt", "1.txt"]
    assert refused == ["2.txt: more than 2 files at once", "3.txt: more than 2 files at once"]


async def test_an_upload_that_breaks_off_or_is_refused_leaves_the_earlier_file_as_it_was(tmp_path, monkeypatch):
    class Broken(Stream):
        async def _each(self):
            yield self.chunks[0]
            raise ConnectionError("the browser went away")

    _docs().mkdir()
    (_docs() / "notes.md").write_text("the good copy")
    with pytest.raises(ConnectionError):
        await save_upload(Broken([("notes.md", 900)]), WORKSPACE, "docs")
    monkeypatch.setattr(knowledge_state, "MAX_BYTES", 1000)
    refused = await save_upload(Stream([("notes.md", 5000)]), WORKSPACE, "docs")
    assert refused == ([], ["notes.md: larger than 0 MB"])
    assert [p.name for p in _docs().iterdir()] == ["notes.md"]
    assert (_docs() / "notes.md").read_text() == "the good copy"


def test_no_handler_takes_a_buffered_upload():
    """Reflex reads a buffered upload (`list[rx.UploadFile]`) whole onto the disk before the access check: a
    handler taking one would let anyone fill the disk through /_upload. Streamed ones are checked first."""
    from reflex_base.event import resolve_upload_handler_param
    from reflex_base.utils.exceptions import UploadTypeError, UploadValueError

    from tests.accounts.test_access import HANDLERS

    buffered = []
    for cls, name, handler in HANDLERS:
        try:
            resolve_upload_handler_param(handler)
        except (UploadTypeError, UploadValueError):
            continue
        buffered.append(f"{cls.__name__}.{name}")
    assert buffered == []


QUOTA = "0.000001"  # GB: 1,073 bytes


async def test_an_upload_stops_at_the_workspace_quota(monkeypatch):
    monkeypatch.setenv("NODEFLOW_FILES_QUOTA_GB", QUOTA)
    saved, refused = await save_upload(Stream([("a.md", 600), ("b.md", 600), ("c.md", 400)]), WORKSPACE, "docs")
    assert saved == ["a.md", "c.md"]  # what b.md had taken before it was refused is free again
    assert refused == ["b.md: the workspace's uploads would pass their quota (9.99309e-07 GB, "
                       "NODEFLOW_FILES_QUOTA_GB)"]
    assert sorted(p.name for p in _docs().iterdir()) == ["a.md", "c.md"]
    # A smaller a.md replaces the first one: the room it leaves counts at once, in the same drop.
    saved, refused = await save_upload(Stream([("a.md", 50), ("d.md", 500)]), WORKSPACE, "docs")
    assert (saved, refused) == (["a.md", "d.md"], [])


async def test_uploads_at_the_same_moment_share_the_quota(monkeypatch):
    """The room left was counted once as each upload began: drops at once each had all of it."""
    import asyncio

    class Slow(Stream):
        async def _each(self):
            for chunk in self.chunks:
                await asyncio.sleep(0.01)  # the other upload goes on meanwhile
                yield chunk

    monkeypatch.setenv("NODEFLOW_FILES_QUOTA_GB", QUOTA)
    results = await asyncio.gather(*(save_upload(Slow([(f"{n}.md", 800)], piece=100), WORKSPACE, "docs")
                                     for n in range(3)))
    assert sum(len(saved) for saved, _refused in results) == 1, results
    assert sum(p.stat().st_size for p in _docs().iterdir()) == 800


async def test_a_file_name_the_file_system_cannot_take_is_refused_with_a_reason():
    saved, refused = await save_upload(Stream([("a\0b.md", 10), ("x" * 253 + ".md", 10), ("\ud800.md", 10),
                                               ("ok.md", 10)]), WORKSPACE, "docs")
    assert saved == ["ok.md"]
    assert refused == ["'a\\x00b.md': its name holds a NUL character",
                       f"'{'x' * 60}': its name is longer than 255 bytes",
                       "'\\ud800.md': its name is not valid text"]
    assert [p.name for p in _docs().iterdir()] == ["ok.md"]


async def test_an_upload_is_written_inside_the_collection_folder_only(tmp_path):
    """Defense in depth: whatever its caller checked, `save_upload` writes nowhere but in the workspace's
    uploads folder (a collection's folder that is a link elsewhere included)."""
    for collection in ("../" + OTHER + "/docs", str(tmp_path / "elsewhere"), "", "."):
        with pytest.raises(NodeError, match="collection name"):
            await save_upload(Stream([("a.md", 10)]), WORKSPACE, collection)
    (tmp_path / "elsewhere").mkdir()
    _docs().symlink_to(tmp_path / "elsewhere")
    with pytest.raises(NodeError, match="leaves the workspace's uploads"):
        await save_upload(Stream([("a.md", 10)]), WORKSPACE, "docs")
    assert list((tmp_path / "elsewhere").iterdir()) == []


class Background(SimpleNamespace):
    """What Reflex hands a background handler: `async with self` around its reads and writes."""

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exception):
        return False

    def _workspace(self):
        return access.current().workspace_id

    async def _refreshed(self, event=None, selected=None):
        return await KnowledgeState._refreshed(self, event, selected)


def _as_editor(workspace: str):
    user = SimpleNamespace(id="u1", name="Mallory", is_admin=False)
    return access._current.set(access.Access(user, workspace, "owner"))


async def test_the_page_uploads_only_into_a_collection_of_its_workspace(tmp_path):
    """A stale or forged selection (`select` once kept any name when its listing failed) never leads the upload
    into another workspace's folder, or anywhere else on the disk."""
    victim = uploads_dir(OTHER) / "policies"
    victim.mkdir(parents=True)
    (victim / "refunds.md").write_text("Within 30 days.")
    workspace_store(OTHER).create("policies")
    workspace_store(WORKSPACE).create("mine")
    token = _as_editor(WORKSPACE)
    try:
        for selected in (f"../{OTHER}/policies", str(victim), "policies", "gone"):
            page = Background(selected=selected, indexing=[], upload_progress=0)
            answer = await KnowledgeState.event_handlers["upload"].fn(page, Stream([("refunds.md", 10)]))
            assert "No collection" in str(answer) or "collection name" in str(answer), (selected, answer)
            assert page.indexing == []
        page = Background(selected="mine", indexing=[], upload_progress=0)
        await KnowledgeState.event_handlers["upload"].fn(page, Stream([("refunds.md", 10)]))
        assert page.indexing == ["refunds.md: waiting"]
    finally:
        access._current.reset(token)
    assert (victim / "refunds.md").read_text() == "Within 30 days."
    assert [p.name for p in (uploads_dir(WORKSPACE) / "mine").iterdir()] == ["refunds.md"]
    assert sorted(p.name for p in uploads_dir(WORKSPACE).iterdir()) == ["mine"]


async def test_a_selection_is_kept_only_once_the_listing_has_found_it(monkeypatch):
    workspace_store(WORKSPACE).create("mine")
    state = KnowledgeState(_reflex_internal_init=True)
    token = _as_editor(WORKSPACE)
    try:
        await KnowledgeState.event_handlers["select"].fn(state, "../" + OTHER + "/policies")
        assert state.selected == "mine"  # not a collection here: the first one is

        def failing(*args):
            raise NodeError("no knowledge collection named 'b'")  # one deleted by another tab meanwhile

        monkeypatch.setattr(knowledge_state, "_listing", failing)
        answer = await KnowledgeState.event_handlers["select"].fn(state, "/tmp/anywhere")
    finally:
        access._current.reset(token)
    assert "no knowledge collection named 'b'" in str(answer)
    assert state.selected == "mine"


async def test_a_collection_is_indexed_by_one_upload_at_a_time(monkeypatch):
    """Another tab's drop into the collection being indexed is refused: each would hold its files in memory."""
    import asyncio

    workspace_store(WORKSPACE).create("mine")
    (uploads_dir(WORKSPACE) / "mine").mkdir()
    for name in ("a.md", "b.md"):
        (uploads_dir(WORKSPACE) / "mine" / name).write_text("# A\nText.")
    started, finish = asyncio.Event(), asyncio.Event()

    async def slow_index(store, collection, raw, source):
        started.set()
        await finish.wait()
        return {"written": 1}

    monkeypatch.setattr(knowledge_state, "index_file", slow_index)
    monkeypatch.setattr(knowledge_state, "_listing", lambda workspace, selected: ([], selected, []))
    index = KnowledgeState.event_handlers["index_uploads"].fn
    token = _as_editor(WORKSPACE)
    try:
        first = _uploaded_page(["a.md"])
        running = asyncio.create_task(index(first))
        await started.wait()
        second = _uploaded_page(["b.md"], ["x.exe: unknown format"])
        answer = await asyncio.wait_for(index(second), 5)  # not waiting for the first
        assert "“mine” is being indexed already: drop these files again once it is done." in str(answer)
        assert second.indexing == ["b.md: not indexed", "x.exe: unknown format"]
        finish.set()
        await running
        assert first.indexing == ["a.md: 1 chunk"]
        second = _uploaded_page(["b.md"], ["x.exe: unknown format"])  # dropped again
        await index(second)  # once it is done, the next one goes
        assert second.indexing == ["b.md: 1 chunk", "x.exe: unknown format"]
    finally:
        access._current.reset(token)


def _uploaded_page(saved: list[str], refused: list[str] = ()) -> Background:
    """The page right after `upload` saved `saved` into the collection "mine"."""
    return Background(selected="mine", indexing=[f"{name}: waiting" for name in saved] + list(refused), busy=False,
                      _index_collection="mine", _index_names=list(saved))


async def test_only_the_files_an_upload_saved_are_indexed_and_only_once(monkeypatch):
    """The browser named the files to index: one event listing a file 5,000 times read it whole and indexed it
    5,000 times (a 50 MB PDF: hours of the server's time for a 60 kB message)."""
    workspace_store(WORKSPACE).create("mine")
    (uploads_dir(WORKSPACE) / "mine").mkdir()
    (uploads_dir(WORKSPACE) / "mine" / "a.md").write_text("# A\nText.")
    indexed = []

    async def index_file(store, collection, raw, source):
        indexed.append(source)
        return {"written": 1}

    monkeypatch.setattr(knowledge_state, "index_file", index_file)
    monkeypatch.setattr(knowledge_state, "_listing", lambda workspace, selected: ([], selected, []))
    token = _as_editor(WORKSPACE)
    index = KnowledgeState.event_handlers["index_uploads"].fn
    try:
        page = Background(selected="mine", indexing=[], upload_progress=0, busy=False, _index_collection="",
                          _index_names=[])
        try:
            await index(page, "mine", ["a.md"] * 5000)  # a forged event naming the files
        except TypeError:
            pass  # the handler takes no names any more
        assert indexed == []
        chained = await KnowledgeState.event_handlers["upload"].fn(page, Stream([("a.md", 10)]))
        assert chained is KnowledgeState.index_uploads
        await index(page)
        await index(page)  # sent again: the upload's files were indexed already
    finally:
        access._current.reset(token)
    assert indexed == ["mine/a.md"]
    assert page.indexing == ["a.md: 1 chunk"]
