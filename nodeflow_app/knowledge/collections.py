"""Knowledge collections of one workspace: an embedded LanceDB database in `<data>/knowledge/<workspace>/`.

One LanceDB table per collection: `id, text, source, title, page, chunk, metadata (JSON)` and, when the
collection has an embedding model, `vector`. A full-text index on `text` is always kept, so search works
without any embedding provider; with vectors, `hybrid` fuses vector and full-text ranks (LanceDB's RRF).
A collection's settings (embedding model, dimensions) sit in `<name>.json` beside the tables.
Agno's LanceDb class is not used: it stores metadata as one JSON payload (no column filters), needs an
embedder for every write, and adds a layer the benchmark shows (benchmarks/knowledge.py compares with
LanceDB called directly).
"""

from __future__ import annotations

import json
import math
import re
import shutil
import threading
import uuid
import warnings
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from nodeflow_app.contract import NodeError
from nodeflow_app.settings import data_dir

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
SEARCH_MODES = ("hybrid", "vector", "text")
COLUMNS = ("source", "title", "page", "chunk")
# Rows the full-text index may lag behind: LanceDB scans unindexed rows on every query (~0.5 s at 100,000).
UNINDEXED_LIMIT = 2_000  # metadata kept as columns: filters on them run in LanceDB
_locks: dict[Path, threading.Lock] = {}


@dataclass(frozen=True, slots=True)
class CollectionInfo:
    name: str
    embedding: str | None
    documents: int
    chunks: int


def check_name(name: Any) -> str:
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise NodeError(f"collection name {name!r}: use 1-64 letters, digits, '-' or '_', starting with a "
                        "letter or digit")
    return name


class KnowledgeStore:
    """The collections of one workspace. Cheap to construct; LanceDB opens tables lazily."""

    def __init__(self, workspace: str = "default", root: Path | None = None) -> None:
        self.root = (root or data_dir() / "knowledge") / check_name(workspace)
        self.root.mkdir(parents=True, exist_ok=True, mode=0o700)
        import lancedb

        # Other processes' writes (a CLI run, another worker) show within a second.
        self._db = lancedb.connect(str(self.root), read_consistency_interval=timedelta(seconds=1))
        self._lock = _locks.setdefault(self.root, threading.Lock())
        self._tables: dict[str, Any] = {}

    # 1. Collections --------------------------------------------------------------------------------

    def names(self) -> list[str]:
        return sorted(p.stem for p in self.root.glob("*.json"))

    def settings(self, name: str) -> dict[str, Any]:
        path = self.root / f"{check_name(name)}.json"
        if not path.exists():
            raise NodeError(f"no knowledge collection named {name!r} (have: {', '.join(self.names()) or 'none'})")
        return json.loads(path.read_text())

    def create(self, name: str, embedding: str | None = None, *, exist_ok: bool = False) -> dict[str, Any]:
        path = self.root / f"{check_name(name)}.json"
        with self._lock:
            if path.exists():
                if not exist_ok:
                    raise NodeError(f"a knowledge collection named {name!r} exists already")
                return json.loads(path.read_text())
            settings = {"embedding": embedding or None, "dimensions": None}
            path.write_text(json.dumps(settings))
            return settings

    def delete(self, name: str) -> None:
        self.settings(name)
        with self._lock:
            if self._table(name) is not None:
                self._db.drop_table(name)
                self._tables.pop(name, None)
            (self.root / f"{name}.json").unlink(missing_ok=True)

    def info(self, name: str) -> CollectionInfo:
        settings = self.settings(name)
        table = self._table(name)
        chunks = table.count_rows() if table is not None else 0
        documents = len(self._sources(table)) if chunks else 0
        return CollectionInfo(name, settings.get("embedding"), documents, chunks)

    # 2. Writing ---------------------------------------------------------------------------------------

    def write(self, name: str, chunks: list[dict[str, Any]], *, replace_sources: bool = False) -> dict[str, int]:
        """Add chunks `{text, metadata, vector?}`; with `replace_sources`, their sources' old chunks go first."""
        self.settings(name)
        rows = [_row(chunk, index) for index, chunk in enumerate(chunks)]
        with self._lock:
            # Read again under the lock: a collection deleted while the rows were made must not come back (its
            # table made again, its chunks given to the next collection of that name).
            settings = self.settings(name)
            dims = _dimensions(rows, settings, name)
            model = _embedding_model(chunks, settings, name)
            table = self._table(name) or self._create_table(name, dims)
            if dims and "vector" not in table.schema.names:
                raise NodeError(f"collection {name!r} was created without vectors: make a new collection "
                                "for embedded chunks")
            deleted = 0
            if replace_sources and rows:
                sources = sorted({row["source"] for row in rows})
                where = f"source IN ({', '.join(_quote(s) for s in sources)})"
                deleted = table.count_rows(where)
                table.delete(where)
            if rows:
                table.add(rows)
                _keep_indexed(table)
            if (dims, model) != (settings.get("dimensions"), settings.get("embedding")):
                settings.update(dimensions=dims, embedding=model)  # the first vectors fix both
                (self.root / f"{name}.json").write_text(json.dumps(settings))
        return {"written": len(rows), "deleted": deleted}

    def delete_source(self, name: str, source: str) -> int:
        self.settings(name)
        with self._lock:
            self.settings(name)  # still there (see write)
            table = self._table(name)
            if table is None:
                return 0
            where = f"source = {_quote(source)}"
            count = table.count_rows(where)
            table.delete(where)
            return count

    # 3. Reading -----------------------------------------------------------------------------------------

    def documents(self, name: str) -> list[dict[str, Any]]:
        """One row per source: `{source, title, chunks}`, sorted by source."""
        self.settings(name)
        table = self._table(name)
        return self._sources(table) if table is not None else []

    def chunks(self, name: str, source: str, limit: int = 1000) -> list[dict[str, Any]]:
        self.settings(name)
        table = self._table(name)
        if table is None:
            return []
        rows = table.search().where(f"source = {_quote(source)}").limit(limit).to_list()
        return sorted((_chunk(row) for row in rows), key=lambda c: (c["metadata"].get("page") or 0,
                                                                     c["metadata"].get("chunk") or 0))

    def search(self, name: str, query: str, *, vector: list[float] | None = None, top_k: int = 4,
               mode: str = "hybrid", filters: dict[str, Any] | None = None,
               threshold: float | None = None) -> list[dict[str, Any]]:
        """The best `top_k` chunks `{text, metadata, score}` (higher is better; the scale depends on `mode`)."""
        settings = self.settings(name)
        table = self._table(name)
        if mode not in SEARCH_MODES:
            raise NodeError(f"search mode {mode!r}: use one of {', '.join(SEARCH_MODES)}")
        if table is None or not query.strip():
            return []
        if mode in ("hybrid", "vector") and vector is None and settings.get("dimensions"):
            raise NodeError(f"collection {name!r} needs a query vector for {mode} search")
        has_vectors = bool(settings.get("dimensions"))
        if mode == "vector" and not has_vectors:
            raise NodeError(f"collection {name!r} has no vectors (no embedding model): use text or hybrid search")
        where, extra = _filters(filters or {})
        fetch = top_k * 4 if extra else top_k
        if mode == "vector" or (mode == "hybrid" and has_vectors):
            builder = (table.search(vector).metric("cosine") if mode == "vector"
                       else table.search(query_type="hybrid").vector(vector).text(query))
        else:
            builder = table.search(query, query_type="fts")
        if where:
            builder = builder.where(where, prefilter=True)
        rows = builder.limit(fetch).to_list()
        found = [c for c in (_chunk(row) for row in rows) if _matches(c["metadata"], extra)]
        if threshold is not None:
            found = [c for c in found if c["score"] >= threshold]
        return found[:top_k]

    # 4. Tables ----------------------------------------------------------------------------------------

    def _table(self, name: str) -> Any:
        if name not in self._tables:
            try:
                self._tables[name] = self._db.open_table(name)
            except (FileNotFoundError, ValueError):
                return None
        return self._tables[name]

    def _create_table(self, name: str, dims: int | None) -> Any:
        import pyarrow as pa

        fields = [pa.field("id", pa.string()), pa.field("text", pa.string()), pa.field("source", pa.string()),
                  pa.field("title", pa.string()), pa.field("page", pa.int32()), pa.field("chunk", pa.int32()),
                  pa.field("metadata", pa.string())]
        if dims:
            fields.append(pa.field("vector", pa.list_(pa.float32(), dims)))
        try:
            table = self._db.create_table(name, schema=pa.schema(fields))
        except ValueError:
            # Another server process made it since `_table` looked (the lock is this process's only): write into
            # theirs; they make its full-text index.
            table = self._table(name)
            if table is None:
                raise
            return table
        with warnings.catch_warnings():  # create_fts_index is the sync API's only way to an FTS index
            warnings.simplefilter("ignore")
            table.create_fts_index("text", replace=True)
        return table

    @staticmethod
    def _sources(table: Any) -> list[dict[str, Any]]:
        # Only these two columns are read: the whole table (text, vectors) was, for every listing.
        columns = table.search().select(["source", "title"]).limit(None).to_arrow()
        by_source: dict[str, dict[str, Any]] = {}
        for source, title in zip(columns["source"].to_pylist(), columns["title"].to_pylist()):
            entry = by_source.setdefault(source, {"source": source, "title": title, "chunks": 0})
            entry["chunks"] += 1
        return [by_source[s] for s in sorted(by_source)]


def _keep_indexed(table: Any) -> None:
    """Fold new rows into the full-text index once enough have piled up (LanceDB's optimize is incremental)."""
    stats = table.index_stats("text_idx")
    if stats is not None and stats.num_unindexed_rows > UNINDEXED_LIMIT:
        table.optimize()


def _row(chunk: dict[str, Any], index: int) -> dict[str, Any]:
    if not isinstance(chunk, dict) or not isinstance(chunk.get("text"), str):
        raise NodeError(f"item {index}: a chunk is an object with a 'text' string (and 'metadata'), "
                        f"got {type(chunk).__name__}")
    metadata = chunk.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise NodeError(f"item {index}: 'metadata' must be an object")
    row = {"id": str(metadata.get("id") or uuid.uuid4()), "text": chunk["text"],
           "source": str(metadata.get("source") or "input"),
           "title": None if metadata.get("title") is None else str(metadata["title"]),
           "page": _int(metadata.get("page")), "chunk": _int(metadata.get("chunk")),
           "metadata": json.dumps(metadata, ensure_ascii=False, default=str)}
    if chunk.get("vector") is not None:
        row["vector"] = [float(x) for x in chunk["vector"]]
    return row


def _dimensions(rows: list[dict[str, Any]], settings: dict[str, Any], name: str) -> int | None:
    """The vector size of this write (and of the collection); a clear error for a mixed or changed size."""
    with_vectors = [row for row in rows if "vector" in row]
    sizes = {len(row["vector"]) for row in with_vectors}
    expected = settings.get("dimensions")
    if len(sizes) > 1 or (expected and sizes and sizes != {expected}):
        raise NodeError(f"collection {name!r}: vectors of {sorted(sizes)} dimensions, expected "
                        f"{expected or 'one size'} (was the embedding model changed?)")
    if (expected or sizes) and len(with_vectors) != len(rows):
        raise NodeError(f"collection {name!r} holds vectors: every chunk needs a 'vector' "
                        "(wire an Embedding node before the Vector Store, or give the collection a model)")
    return expected or (next(iter(sizes)) if sizes else None)


def _embedding_model(chunks: list[dict[str, Any]], settings: dict[str, Any], name: str) -> str | None:
    """The collection's model; chunks from an Embedding node name theirs, which must be the same one."""
    models = {c.get("embedding_model") for c in chunks if isinstance(c, dict) and c.get("embedding_model")}
    expected = settings.get("embedding")
    if len(models) > 1 or (expected and models and models != {expected}):
        raise NodeError(f"collection {name!r} is searched with {expected or 'one model'}; these chunks were "
                        f"embedded with {', '.join(sorted(models))}: use the same model, or a new collection")
    return expected or (next(iter(models)) if models else None)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _quote(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"


NUMBER_COLUMNS = ("page", "chunk")


def _filters(filters: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A LanceDB `where` for filters on columns; the other keys are checked on each chunk's metadata."""
    clauses = [f"{key} = {_quote(_whole(key, value) if key in NUMBER_COLUMNS else value)}"
               for key, value in filters.items() if key in COLUMNS]
    return " AND ".join(clauses), {k: v for k, v in filters.items() if k not in COLUMNS}


def _whole(key: str, value: Any) -> int:
    """A page or chunk number to filter on: the filter rows of the editor give text ("3")."""
    try:
        number = float(str(value).strip())
    except ValueError:
        number = math.nan
    if not number.is_integer():
        raise NodeError(f"filter {key!r} is a whole number (a {key} index), got {str(value)[:40]!r}")
    return int(number)


def _matches(metadata: dict[str, Any], extra: dict[str, Any]) -> bool:
    return all(str(metadata.get(key)) == str(value) for key, value in extra.items())


def _chunk(row: dict[str, Any]) -> dict[str, Any]:
    metadata = json.loads(row.get("metadata") or "{}")
    if "_relevance_score" in row:
        score = row["_relevance_score"]
    elif "_distance" in row:
        score = 1.0 - row["_distance"]
    else:
        score = row.get("_score")
    return {"text": row["text"], "metadata": metadata, "score": None if score is None else round(float(score), 6)}
