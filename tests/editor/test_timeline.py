"""group_versions: a burst of autosaves is one History entry; saves, names and other authors split bursts."""

from __future__ import annotations

from nodeflow_app.editor.timeline import group_versions
from nodeflow_app.store.graphs import VersionSummary


def v(version: int, at: float, note: str = "autosave", author: str | None = None, label: str = "") -> VersionSummary:
    return VersionSummary(version, 1, at, note, author, "", label)


def titles(versions: list[VersionSummary]) -> list[str]:
    return [entry.title for entry in group_versions(versions)]


def test_consecutive_autosaves_within_the_window_are_one_entry():
    versions = [v(5, 400), v(4, 330), v(3, 300), v(2, 250, "saved"), v(1, 0, "created")]
    entries = group_versions(versions)
    assert [e.title for e in entries] == ["v3–v5", "v2", "v1"]
    assert (entries[0].newest.version, entries[0].oldest.version) == (5, 3)
    assert entries[0].runs({5: 2, 3: 1, 2: 7}) == 3


def test_a_pause_longer_than_the_window_starts_a_new_burst():
    assert titles([v(4, 1000), v(3, 900), v(2, 200), v(1, 100)]) == ["v3–v4", "v1–v2"]


def test_a_named_autosave_and_another_author_stand_apart():
    assert titles([v(4, 40), v(3, 30, label="before refactor"), v(2, 20), v(1, 10)]) == ["v4", "v3", "v1–v2"]
    assert titles([v(3, 30, author="u1"), v(2, 20, author="u2"), v(1, 10, author="u2")]) == ["v3", "v1–v2"]
