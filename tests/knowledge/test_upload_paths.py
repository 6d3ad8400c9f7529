"""The Knowledge page indexes only what its upload kept for a collection: its handler for that can be called from
the browser with any names, so a name that leaves the collection's folder (or is not a file it could have kept)
is refused, never read."""

from __future__ import annotations

import pytest

from nodeflow_app.contract import NodeError
from nodeflow_app.knowledge.sources import uploads_dir
from nodeflow_app.state.knowledge_state import _uploaded


WORKSPACE = "0123456789abcdef"


def test_only_files_uploaded_to_the_collection_are_read(tmp_path):
    folder = uploads_dir(WORKSPACE) / "notes"
    folder.mkdir()
    (folder / "a.md").write_text("# A")
    (uploads_dir(WORKSPACE) / "secret.json").write_text("{}")
    (tmp_path / "outside.txt").write_text("outside")
    (folder / "link.txt").symlink_to(tmp_path / "outside.txt")
    assert _uploaded(WORKSPACE, "notes", "a.md") == (folder / "a.md").resolve()
    for name in ("../secret.json", "../../outside.txt", "/etc/passwd.txt", "sub/../../secret.json", "link.txt",
                 "a.exe", "", None, ["a.md"]):
        with pytest.raises(NodeError, match="is not a file uploaded to this collection"):
            _uploaded(WORKSPACE, "notes", name)
    with pytest.raises(NodeError, match="collection name"):
        _uploaded(WORKSPACE, "../notes", "a.md")
    # The same collection name in another workspace is another folder: nothing of this one's is reached.
    assert not _uploaded("fedcba9876543210", "notes", "a.md").exists()
