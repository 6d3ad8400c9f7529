"""The graph repository: graphs and their versions. Every save appends a version row in the same transaction.

Versions also carry who saved them (author, once accounts exist), an optional name a person gave them,
and can be restored (as a new version on top).

The `graph` row holds the latest version (its JSON plus the name, node count and times the list needs
without reading the JSON); `graph_version` keeps every version for history and restore. The row is the
authority on id, name and version: they are written into the graph JSON on every write.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from dataclasses import dataclass
from typing import Any, Callable

from sqlalchemy import Engine, Table, delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from nodeflow_app.runtime.graph import DefinitionSource, Graph, GraphIssue, normalize
from nodeflow_app.runtime.values import MAX_DEPTH
from nodeflow_app.secret_values import forget_sealed, seal_graph
from nodeflow_app.store.db import create_all, make_engine, process_wide
from nodeflow_app.store.models import (
    ChatRow, GraphRow, GraphVersionRow, PinnedOutputRow, RunRow, ScheduleFireRow, WebhookRow,
)

GRAPHS: Table = GraphRow.__table__  # type: ignore[attr-defined]
VERSIONS: Table = GraphVersionRow.__table__  # type: ignore[attr-defined]
RUNS: Table = RunRow.__table__  # type: ignore[attr-defined]
# What a graph's id keys besides its own rows, left when the graph is deleted.
_LEFT_BEHIND: tuple[Table, ...] = tuple(row.__table__ for row in (  # type: ignore[attr-defined]
    RunRow, ChatRow, PinnedOutputRow, WebhookRow, ScheduleFireRow))

NAME_MAX = 120
LABEL_MAX = 120
# An imported graph keeps its id when it was never used here and fits in a URL and a collaboration token (no `_`).
_KEEPABLE_ID = re.compile(r"[A-Za-z0-9-]{1,64}")


class GraphNotFound(KeyError):
    """No graph with this id in the database."""

    def __str__(self) -> str:  # KeyError would print the repr of its argument
        return str(self.args[0]) if self.args else "graph not found"


class VersionNotFound(GraphNotFound):
    """The graph exists but has no version with this number."""


@dataclass(frozen=True)
class GraphSummary:
    """A graph as the list shows it (never carries the graph JSON)."""

    id: str
    name: str
    node_count: int
    updated_at: float
    version: int


@dataclass(frozen=True)
class StoredGraph:
    """The latest version of a graph, ready for the editor."""

    id: str
    name: str
    version: int
    graph: dict[str, Any]
    updated_at: float


@dataclass(frozen=True)
class VersionSummary:
    """One version as History lists it (never carries the graph JSON)."""

    version: int
    node_count: int
    created_at: float
    note: str  # what made it: created | saved | autosave | renamed | restored from v<n> | ...
    author: str | None = None  # user id; None for versions saved before accounts
    author_name: str = ""
    label: str = ""  # the name a person gave it ("" when none)


class GraphStore:
    """Creates, reads, saves, renames, duplicates, deletes, lists and imports graphs."""

    def __init__(self, engine_or_url: Engine | str | None = None):
        self.engine: Engine = engine_or_url if isinstance(engine_or_url, Engine) else make_engine(engine_or_url)
        create_all(self.engine)

    def create(self, name: str, graph: dict[str, Any] | None = None, note: str = "created",
               workspace_id: str | None = None, *, author: str | None = None, author_name: str = "") -> GraphSummary:
        """A new graph (empty unless `graph` is given) under a new id, at version 1, in `workspace_id`; version 1
        names `author` (the user's id and name) like every save."""
        return self._insert(new_graph_id(), clean_name(name), graph or {}, note, workspace_id, (author, author_name))

    def workspace_of(self, graph_id: str) -> str | None:
        """The workspace a graph belongs to (None: unknown graph, or one made before workspaces)."""
        with self.engine.connect() as conn:
            return conn.execute(select(GRAPHS.c.workspace_id).where(GRAPHS.c.id == graph_id)).scalar()

    def adopt_unowned(self, workspace_id: str) -> int:
        """Graphs made before workspaces existed join `workspace_id` (the install owner's, at setup)."""
        with self.engine.begin() as conn:
            return conn.execute(update(GRAPHS).where(GRAPHS.c.workspace_id.is_(None))
                                .values(workspace_id=workspace_id)).rowcount

    def move(self, graph_id: str, workspace_id: str) -> None:
        with self.engine.begin() as conn:
            if not conn.execute(update(GRAPHS).where(GRAPHS.c.id == graph_id)
                                .values(workspace_id=workspace_id)).rowcount:
                raise _not_found(graph_id)

    def get(self, graph_id: str) -> StoredGraph | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(GRAPHS).where(GRAPHS.c.id == graph_id)).mappings().first()
        if row is None:
            return None
        return StoredGraph(row["id"], row["name"], row["version"], json.loads(row["graph_json"]), row["updated_at"])

    def name_of(self, graph_id: str) -> str | None:
        """The graph's name (None: no such graph), without reading the graph."""
        with self.engine.connect() as conn:
            return conn.execute(select(GRAPHS.c.name).where(GRAPHS.c.id == graph_id)).scalar()

    def version_of(self, graph_id: str) -> int | None:
        """The newest version number (None: no such graph), without reading the graph."""
        with self.engine.connect() as conn:
            return conn.execute(select(GRAPHS.c.version).where(GRAPHS.c.id == graph_id)).scalar()

    def save(self, graph_id: str, graph: dict[str, Any], note: str = "saved", author: str | None = None,
             author_name: str = "") -> int:
        """Store `graph` as the next version of `graph_id` and return that version number."""
        return self._write(graph_id, note, graph=graph, author=(author, author_name))

    def get_version(self, graph_id: str, version: int) -> StoredGraph | None:
        """One stored version of a graph, as it was saved (None when there is no such version)."""
        query = select(VERSIONS.c.graph_json, VERSIONS.c.created_at).where(
            VERSIONS.c.graph_id == graph_id, VERSIONS.c.version == version)
        with self.engine.connect() as conn:
            row = conn.execute(query).first()
        if row is None:
            return None
        graph = json.loads(row.graph_json)
        return StoredGraph(graph_id, graph.get("name", ""), version, graph, row.created_at)

    def restore(self, graph_id: str, version: int, author: str | None = None, author_name: str = "") -> int:
        """Version `version` (graph and name) saved again as the newest version, noted "restored from v<n>"."""
        old = self.get_version(graph_id, version)
        if old is None:
            self._require(graph_id)
            raise VersionNotFound(f"graph '{graph_id}' has no version {version}")
        return self._write(graph_id, f"restored from v{version}", name=old.name, graph=old.graph,
                           author=(author, author_name))

    def label_version(self, graph_id: str, version: int, label: str) -> str:
        """Give a version a name (an empty one removes it); returns the name as stored."""
        label = clean_label(label)
        with self.engine.begin() as conn:
            named = update(VERSIONS).where(VERSIONS.c.graph_id == graph_id, VERSIONS.c.version == version)
            changed = conn.execute(named.values(label=label or None)).rowcount
        if changed == 0:
            self._require(graph_id)
            raise VersionNotFound(f"graph '{graph_id}' has no version {version}")
        return label

    def run_counts(self, graph_id: str) -> dict[int, int]:
        """Version -> how many stored runs used it (runs record the version they ran)."""
        query = (select(RUNS.c.graph_version, func.count()).where(RUNS.c.graph_id == graph_id)
                 .group_by(RUNS.c.graph_version))
        with self.engine.connect() as conn:
            return {version: count for version, count in conn.execute(query).all()}

    def rename(self, graph_id: str, name: str) -> None:
        """A new name, recorded as a version (note "renamed") so the row and its latest version agree."""
        name = clean_name(name)
        with self.engine.connect() as conn:
            current = conn.execute(select(GRAPHS.c.name).where(GRAPHS.c.id == graph_id)).scalar()
        if current is None:
            raise _not_found(graph_id)
        if current != name:
            self._write(graph_id, "renamed", name=name)

    def duplicate(self, graph_id: str, workspace_id: str | None = None, *,
                  forget_secrets: DefinitionSource | None = None, author: str | None = None,
                  author_name: str = "") -> GraphSummary:
        """A copy named "<name> (copy)" with a new id and a history of its own, in the same workspace or another.
        With `forget_secrets` (the registry), the copy's secrets are emptied, to be entered again."""
        stored = self._require(graph_id)
        suffix = " (copy)"
        graph = forget_sealed(stored.graph, forget_secrets) if forget_secrets is not None else stored.graph
        return self.create(stored.name[:NAME_MAX - len(suffix)] + suffix, graph,
                           note=f"duplicated from {stored.name}",
                           workspace_id=workspace_id or self.workspace_of(graph_id), author=author,
                           author_name=author_name)

    def delete(self, graph_id: str) -> None:
        """Delete a graph and all its versions."""
        with self.engine.begin() as conn:
            # Explicit, not only ON DELETE CASCADE: SQLite enforces foreign keys only when the pragma is on.
            conn.execute(delete(VERSIONS).where(VERSIONS.c.graph_id == graph_id))
            if conn.execute(delete(GRAPHS).where(GRAPHS.c.id == graph_id)).rowcount == 0:
                raise _not_found(graph_id)

    def list(self, search: str = "", workspace_id: str | None = None) -> list[GraphSummary]:
        """Graphs whose name contains `search` (any case), last edited first; only `workspace_id`'s when given."""
        query = select(GRAPHS.c.id, GRAPHS.c.name, GRAPHS.c.node_count, GRAPHS.c.updated_at, GRAPHS.c.version)
        if workspace_id is not None:
            query = query.where(GRAPHS.c.workspace_id == workspace_id)
        if search.strip():
            query = query.where(func.lower(GRAPHS.c.name).contains(search.strip().lower(), autoescape=True))
        with self.engine.connect() as conn:
            rows = conn.execute(query.order_by(GRAPHS.c.updated_at.desc(), GRAPHS.c.id)).all()
        return [GraphSummary(*row) for row in rows]

    def versions(self, graph_id: str) -> list[VersionSummary]:
        """Every version of a graph, newest first."""
        query = (select(VERSIONS.c.version, VERSIONS.c.node_count, VERSIONS.c.created_at, VERSIONS.c.note,
                        VERSIONS.c.author, VERSIONS.c.author_name, VERSIONS.c.label)
                 .where(VERSIONS.c.graph_id == graph_id).order_by(VERSIONS.c.version.desc()))
        with self.engine.connect() as conn:
            rows = conn.execute(query).all()
        if not rows:
            self._require(graph_id)
        return [VersionSummary(r.version, r.node_count, r.created_at, r.note, r.author, r.author_name or "",
                               r.label or "") for r in rows]

    def import_json(self, text: str, registry: DefinitionSource, workspace_id: str | None = None, *,
                    free_name: Callable[[str], str] | None = None, author: str | None = None,
                    author_name: str = "") -> tuple[GraphSummary | None, list[GraphIssue]]:
        """Store a graph from JSON text if it passes every rule; otherwise store nothing and return why.
        `free_name` (called in this thread) turns the file's name into the one stored, e.g. one not yet taken."""
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as error:
            return None, [GraphIssue(rule="json", message=(
                f"the file is not valid JSON: {error.msg} at line {error.lineno}, column {error.colno}"))]
        except RecursionError:
            return None, [GraphIssue(rule="json", message=f"the file's JSON is nested deeper than {MAX_DEPTH} levels")]
        except ValueError:  # a whole number of over 4,300 digits
            return None, [GraphIssue(rule="json", message="the file holds a whole number of over 4,300 digits")]
        graph, issues = normalize(raw, registry)  # every problem of the file at once
        if graph is None or issues:
            return None, issues
        try:
            name = clean_name(graph.name)
        except ValueError as error:
            return None, [GraphIssue(rule="name", message=str(error))]
        if free_name is not None:
            name = free_name(name)
        # Secrets written in clear in the file are sealed; sealed ones (from another install or workspace) dropped.
        document = seal_graph(forget_sealed(graph.model_dump(mode="json"), registry), registry)
        if _KEEPABLE_ID.fullmatch(graph.id) and self._never_used(graph.id):
            try:
                return self._insert(graph.id, name, document, "imported", workspace_id, (author, author_name)), []
            except IntegrityError:  # imported by someone else meanwhile: a new id, like any taken one
                pass
        return self._insert(new_graph_id(), name, document, "imported", workspace_id, (author, author_name)), []

    # -- helpers -----------------------------------------------------------------------------------

    def _never_used(self, graph_id: str) -> bool:
        """No graph has the id, and nothing a deleted graph had under it is left: runs, chats, pins, webhooks and
        schedules stay after a delete, and an import with the id (into any workspace) would take them over."""
        with self.engine.connect() as conn:
            if conn.execute(select(GRAPHS.c.id).where(GRAPHS.c.id == graph_id)).first() is not None:
                return False
            return all(conn.execute(select(table.c.graph_id).where(table.c.graph_id == graph_id).limit(1)).first()
                       is None for table in _LEFT_BEHIND)

    def _insert(self, graph_id: str, name: str, graph: dict[str, Any], note: str,
                workspace_id: str | None = None, author: tuple[str | None, str] = (None, "")) -> GraphSummary:
        document, now = _document(graph, graph_id, name, 1), time.time()
        text = json.dumps(document)
        with self.engine.begin() as conn:
            conn.execute(insert(GRAPHS).values(id=graph_id, name=name, graph_json=text, version=1,
                                               node_count=len(document["nodes"]), created_at=now, updated_at=now,
                                               workspace_id=workspace_id))
            _append_version(conn, graph_id, 1, document, text, now, note, author)
        return GraphSummary(graph_id, name, len(document["nodes"]), now, 1)

    def _require(self, graph_id: str) -> StoredGraph:
        stored = self.get(graph_id)
        if stored is None:
            raise _not_found(graph_id)
        return stored

    def _write(self, graph_id: str, note: str, *, name: str | None = None,
               graph: dict[str, Any] | None = None, author: tuple[str | None, str] = (None, "")) -> int:
        """Bump the version, then write the row and a version row, all in one transaction.

        The version is bumped by an UPDATE first: it locks the row (a write lock on SQLite), so two
        concurrent writes get different numbers instead of one failing on the unique constraint, and
        what is read after it (the current name or graph) cannot change underneath.
        """
        with self.engine.begin() as conn:
            bumped = update(GRAPHS).where(GRAPHS.c.id == graph_id).values(version=GRAPHS.c.version + 1)
            if conn.execute(bumped).rowcount == 0:
                raise _not_found(graph_id)
            wanted = [GRAPHS.c.name, GRAPHS.c.version] + ([GRAPHS.c.graph_json] if graph is None else [])
            row = conn.execute(select(*wanted).where(GRAPHS.c.id == graph_id)).one()
            name = name if name is not None else row.name
            graph = graph if graph is not None else json.loads(row.graph_json)
            document, now = _document(graph, graph_id, name, row.version), time.time()
            text = json.dumps(document)  # once for both rows: ~10 ms at 1,000 nodes
            conn.execute(update(GRAPHS).where(GRAPHS.c.id == graph_id).values(
                name=name, graph_json=text, node_count=len(document["nodes"]), updated_at=now))
            _append_version(conn, graph_id, row.version, document, text, now, note, author)
        return row.version


def _document(graph: dict[str, Any], graph_id: str, name: str, version: int) -> dict[str, Any]:
    """The graph as stored: checked against the graph model (a ValueError if it does not fit), row fields in."""
    return Graph.model_validate({**graph, "id": graph_id, "name": name, "version": version}).model_dump(mode="json")


def _append_version(conn: Any, graph_id: str, version: int, document: dict[str, Any], text: str, now: float,
                    note: str, author: tuple[str | None, str] = (None, "")) -> None:
    conn.execute(insert(VERSIONS).values(graph_id=graph_id, version=version, graph_json=text,
                                         node_count=len(document["nodes"]), created_at=now, note=note,
                                         author=author[0], author_name=author[1] or None))


def _not_found(graph_id: str) -> GraphNotFound:
    return GraphNotFound(f"no graph '{graph_id}' in the database")


def clean_name(name: Any) -> str:
    """A graph name: trimmed, not empty, at most NAME_MAX characters; a ValueError says which rule failed."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError("a graph needs a name")
    name = name.strip()
    if any(ord(c) < 32 for c in name):
        raise ValueError("a graph name is one line of text (no line breaks, tabs or control characters)")
    if len(name) > NAME_MAX:
        raise ValueError(f"a graph name can be at most {NAME_MAX} characters long (this one has {len(name)})")
    return name


def clean_label(label: Any) -> str:
    """A version's name: trimmed, one line, at most LABEL_MAX characters ("" removes the name)."""
    if not isinstance(label, str):
        raise ValueError("a version name is text")
    label = label.strip()
    if any(ord(c) < 32 for c in label):
        raise ValueError("a version name is one line of text (no line breaks, tabs or control characters)")
    if len(label) > LABEL_MAX:
        raise ValueError(f"a version name can be at most {LABEL_MAX} characters long (this one has {len(label)})")
    return label


def new_graph_id() -> str:
    """12 hex characters: short enough for a URL, 48 random bits."""
    return uuid.uuid4().hex[:12]


# The process's GraphStore on the app database, opened on first use (never at import time).
graph_store = process_wide(GraphStore)
