"""The process's output caches, one per graph, so test runs and chat runs of a graph share what they computed.

A cache is memory only and rebuilds itself by running; pins are the database's (RunService seeds them).
"""

from __future__ import annotations

import threading

from nodeflow_app.runtime.cache import OutputCache, RecordingCache

MAX_GRAPHS = 64          # graphs whose outputs stay in memory (least recently used go first)
MAX_ENTRIES = 2_000      # outputs kept per graph


class GraphCaches:
    """graph id -> OutputCache, least recently used graphs forgotten first."""

    def __init__(self, max_graphs: int = MAX_GRAPHS, max_entries: int = MAX_ENTRIES):
        self.max_graphs, self.max_entries = max_graphs, max_entries
        self._caches: dict[str, OutputCache] = {}
        self._lock = threading.Lock()

    def get(self, graph_id: str) -> OutputCache:
        with self._lock:
            cache = self._caches.pop(graph_id, None) or OutputCache(max_entries=self.max_entries)
            self._caches[graph_id] = cache  # last: the most recently used
            if len(self._caches) > self.max_graphs:
                del self._caches[next(iter(self._caches))]
            return cache


_caches = GraphCaches()


def graph_caches() -> GraphCaches:
    return _caches


def recording_cache(graph_id: str) -> RecordingCache:
    """For runs that must really execute (a chat answer): outputs are recorded for later test runs, never reused."""
    return _caches.get(graph_id).recorder()
