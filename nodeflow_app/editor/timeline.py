"""History's list of versions: consecutive autosaves of one author within a burst window become one entry.

Pure functions on the store's `VersionSummary` rows (newest first); no reflex, no database.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from nodeflow_app.store.graphs import VersionSummary

AUTOSAVE = "autosave"
BURST_SECONDS = 120.0  # autosaves closer than this to the next one belong to the same burst


@dataclass(frozen=True)
class Entry:
    """One row of History: one version, or a burst of autosaves (newest first)."""

    versions: tuple[VersionSummary, ...]

    @property
    def newest(self) -> VersionSummary:
        return self.versions[0]

    @property
    def oldest(self) -> VersionSummary:
        return self.versions[-1]

    @property
    def title(self) -> str:
        """`v7`, or `v3–v7` for a burst."""
        if len(self.versions) == 1:
            return f"v{self.newest.version}"
        return f"v{self.oldest.version}–v{self.newest.version}"

    def runs(self, counts: dict[int, int]) -> int:
        return sum(counts.get(v.version, 0) for v in self.versions)


def group_versions(versions: Sequence[VersionSummary], window: float = BURST_SECONDS) -> list[Entry]:
    """Fold runs of unnamed autosaves by the same author, each within `window` seconds of the next, into one entry."""
    entries: list[list[VersionSummary]] = []
    for version in versions:
        current = entries[-1] if entries else None
        if current is not None and _joins(current[-1], version, window):
            current.append(version)
        else:
            entries.append([version])
    return [Entry(tuple(group)) for group in entries]


def _joins(newer: VersionSummary, older: VersionSummary, window: float) -> bool:
    return (_burstable(newer) and _burstable(older) and newer.author == older.author
            and newer.created_at - older.created_at <= window)


def _burstable(version: VersionSummary) -> bool:
    """A named autosave stands alone: someone wanted to find it."""
    return version.note == AUTOSAVE and not version.label
