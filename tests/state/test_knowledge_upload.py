"""The Knowledge page's upload is streamed into the collection's folder (a buffered one reached the disk whole
before any access check): a file past the limit or of an unknown format is dropped as it arrives."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from nodeflow_app.state import knowledge_state
from nodeflow_app.state.knowledge_state import save_upload


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
                                               ("../escape.txt", 10)]), tmp_path / "docs", room=10 ** 9)
    assert saved == ["notes.md", "escape.txt"]
    assert refused == ["huge.pdf: larger than 0 MB", "tool.exe: unknown format"]
    assert sorted(p.name for p in (tmp_path / "docs").iterdir()) == ["escape.txt", "notes.md"]
    assert (tmp_path / "docs" / "notes.md").stat().st_size == 900 and not (tmp_path / "escape.txt").exists()


async def test_a_drop_of_too_many_files_keeps_the_first_ones(tmp_path, monkeypatch):
    monkeypatch.setattr(knowledge_state, "MAX_UPLOAD_FILES", 2)
    saved, refused = await save_upload(Stream([(f"{n}.txt", 10) for n in range(4)]), tmp_path, room=10 ** 9)
    assert saved == ["0.txt", "1.txt"]
    assert refused == ["2.txt: more than 2 files at once", "3.txt: more than 2 files at once"]


async def test_an_upload_that_breaks_off_or_is_refused_leaves_the_earlier_file_as_it_was(tmp_path, monkeypatch):
    class Broken(Stream):
        async def _each(self):
            yield self.chunks[0]
            raise ConnectionError("the browser went away")

    (tmp_path / "notes.md").write_text("the good copy")
    with pytest.raises(ConnectionError):
        await save_upload(Broken([("notes.md", 900)]), tmp_path, room=10 ** 9)
    monkeypatch.setattr(knowledge_state, "MAX_BYTES", 1000)
    refused = await save_upload(Stream([("notes.md", 5000)]), tmp_path, room=10 ** 9)
    assert refused == ([], ["notes.md: larger than 0 MB"])
    assert [p.name for p in tmp_path.iterdir()] == ["notes.md"]
    assert (tmp_path / "notes.md").read_text() == "the good copy"


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



async def test_an_upload_stops_at_the_workspace_quota(tmp_path):
    saved, refused = await save_upload(Stream([("a.md", 600), ("b.md", 600)]), tmp_path, room=1000)
    assert saved == ["a.md"]
    assert refused == ["b.md: the workspace's uploads would pass their quota (10 GB, NODEFLOW_FILES_QUOTA_GB)"]
    assert [p.name for p in tmp_path.iterdir()] == ["a.md"]
