"""Knowledge benchmark: ingestion (chunk + embed + write) in chunks/s and search latency p50/p95 at 100,000 chunks.

NodeFlow's path (`nodeflow_app.knowledge`: chunker, KnowledgeStore) against LanceDB called directly with the
same chunks and vectors (the floor). The embedder is a deterministic in-process bag-of-words (the same
function the tests' fake server serves), so the figures measure our layer, not a network. Targets: within
1.5x of the floor, search p95 < 50 ms. `python -m benchmarks.knowledge [--quick] [--chunks N] [--queries N]`.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any, Callable

RATIO_TARGET = 1.5
P95_TARGET_MS = 50.0
WORDS = [f"{stem}{i}" for i in range(800) for stem in ("alpha", "delta", "omega")]


def corpus(chunks: int, seed: int = 7) -> list[dict[str, Any]]:
    """Documents of ~5 chunks each (1,000 characters per chunk, as Langflow's default)."""
    rng = random.Random(seed)
    per_doc = 5
    docs = []
    for d in range(max(1, chunks // per_doc)):
        paragraphs = [" ".join(rng.choices(WORDS, k=110)) + "." for _ in range(per_doc)]
        docs.append({"text": "\n\n".join(paragraphs), "metadata": {"source": f"doc-{d}.md", "title": f"Doc {d}"}})
    return docs


def embed(texts: list[str]) -> list[list[float]]:
    from tests.llm.fake_openai import fake_embedding

    return [fake_embedding(t, 64) for t in texts]


def ingest_nodeflow(docs: list[dict[str, Any]], root: Path) -> int:
    from nodeflow_app.knowledge.chunking import chunk_documents
    from nodeflow_app.knowledge.collections import KnowledgeStore

    store = KnowledgeStore("bench", root)
    store.create("c", "openai-compatible:bench")
    chunks = chunk_documents(docs, 1000, 0)
    vectors = embed([c["text"] for c in chunks])
    store.write("c", [{**c, "vector": v} for c, v in zip(chunks, vectors)])  # what a Vector Store node does
    return len(chunks)


def ingest_floor(docs: list[dict[str, Any]], root: Path) -> int:
    """The same chunks (split at the same paragraphs) and vectors, written with LanceDB's own API."""
    import lancedb
    import pyarrow as pa

    from nodeflow_app.knowledge.chunking import chunk_documents

    table = lancedb.connect(str(root)).create_table("c", schema=pa.schema([
        pa.field("id", pa.string()), pa.field("text", pa.string()), pa.field("source", pa.string()),
        pa.field("vector", pa.list_(pa.float32(), 64))]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table.create_fts_index("text", replace=True)
    chunks = chunk_documents(docs, 1000, 0)
    vectors = embed([c["text"] for c in chunks])
    rows = [{"id": str(i), "text": c["text"], "source": c["metadata"]["source"], "vector": v}
            for i, (c, v) in enumerate(zip(chunks, vectors))]
    table.add(rows)
    table.optimize()  # the same index upkeep as NodeFlow's store, so both tables answer from an index
    return len(rows)


def latencies(call: Callable[[str, list[float]], Any], queries: list[tuple[str, list[float]]]) -> list[float]:
    call(*queries[0])  # warm caches
    times = []
    for text, vector in queries:
        start = time.perf_counter()
        call(text, vector)
        times.append((time.perf_counter() - start) * 1000)
    return sorted(times)


def percentile(sorted_ms: list[float], q: float) -> float:
    return sorted_ms[min(len(sorted_ms) - 1, int(len(sorted_ms) * q))]


def run(chunks: int, queries: int) -> list[dict[str, Any]]:
    import lancedb

    from nodeflow_app.knowledge.collections import KnowledgeStore

    docs = corpus(chunks)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        ours_root, floor_root = Path(tmp) / "ours", Path(tmp) / "floor"
        start = time.perf_counter()
        written = ingest_nodeflow(docs, ours_root)
        ours_s = time.perf_counter() - start
        start = time.perf_counter()
        ingest_floor(docs, floor_root)
        floor_s = time.perf_counter() - start
        rows.append({"bench": "knowledge", "what": "ingest", "chunks": written,
                     "nodeflow_chunks_per_s": written / ours_s, "floor_chunks_per_s": written / floor_s,
                     "ratio": ours_s / floor_s})

        rng = random.Random(11)
        asked = [" ".join(rng.choices(WORDS, k=3)) for _ in range(queries)]
        pairs = list(zip(asked, embed(asked)))
        store = KnowledgeStore("bench", ours_root)
        floor = lancedb.connect(str(floor_root)).open_table("c")
        modes: dict[str, tuple[Callable, Callable]] = {
            "hybrid": (lambda t, v: store.search("c", t, vector=v, top_k=4, mode="hybrid"),
                       lambda t, v: floor.search(query_type="hybrid").vector(v).text(t).limit(4).to_list()),
            "vector": (lambda t, v: store.search("c", t, vector=v, top_k=4, mode="vector"),
                       lambda t, v: floor.search(v).metric("cosine").limit(4).to_list()),
            "text": (lambda t, v: store.search("c", t, top_k=4, mode="text"),
                     lambda t, v: floor.search(t, query_type="fts").limit(4).to_list()),
            "filtered": (lambda t, v: store.search("c", t, vector=v, top_k=4, mode="vector",
                                                   filters={"source": "doc-3.md"}),
                         lambda t, v: floor.search(v).metric("cosine").where("source = 'doc-3.md'", prefilter=True)
                         .limit(4).to_list()),
        }
        for mode, (ours, bare) in modes.items():
            mine, base = latencies(ours, pairs), latencies(bare, pairs)
            rows.append({"bench": "knowledge", "what": f"search-{mode}", "chunks": written,
                         "nodeflow_p50_ms": percentile(mine, 0.5), "nodeflow_p95_ms": percentile(mine, 0.95),
                         "floor_p50_ms": percentile(base, 0.5), "floor_p95_ms": percentile(base, 0.95),
                         "ratio": statistics.median(mine) / statistics.median(base)})
    return rows


def report(rows: list[dict[str, Any]]) -> None:
    ingest, *searches = rows
    print(f"\nKnowledge at {ingest['chunks']:,} chunks (64-dim vectors; floor = LanceDB called directly)")
    print(f"{'what':<16}{'NodeFlow':>22}{'floor':>22}{'ratio':>8}  target")
    print(f"{'ingest':<16}{ingest['nodeflow_chunks_per_s']:>15,.0f} ch/s{ingest['floor_chunks_per_s']:>17,.0f} ch/s"
          f"{ingest['ratio']:>8.2f}  <= {RATIO_TARGET}x  {'met' if ingest['ratio'] <= RATIO_TARGET else 'MISSED'}")
    for row in searches:
        met = row["ratio"] <= RATIO_TARGET and row["nodeflow_p95_ms"] < P95_TARGET_MS
        print(f"{row['what']:<16}{row['nodeflow_p50_ms']:>8.1f} / {row['nodeflow_p95_ms']:>6.1f} ms"
              f"{row['floor_p50_ms']:>10.1f} / {row['floor_p95_ms']:>6.1f} ms{row['ratio']:>8.2f}  "
              f"p95 < {P95_TARGET_MS:.0f} ms, <= {RATIO_TARGET}x  {'met' if met else 'MISSED'}")
    print("(search columns: p50 / p95)")
    for row in rows:
        print(json.dumps({k: round(v, 3) if isinstance(v, float) else v for k, v in row.items()}))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.knowledge", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2,000 chunks, 20 queries (a smoke test)")
    parser.add_argument("--chunks", type=int, default=None, help="chunks to index (default 100,000)")
    parser.add_argument("--queries", type=int, default=None, help="queries per search mode (default 200)")
    args, _ = parser.parse_known_args(argv)
    chunks = args.chunks or (2_000 if args.quick else 100_000)
    queries = args.queries or (20 if args.quick else 200)
    report(run(chunks, queries))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    sys.exit(main())
