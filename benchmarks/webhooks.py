"""Webhook benchmark: webhook-triggered runs per second and p50 / p99 latency, against a bare endpoint (the floor).

The server is NodeFlow's HTTP API (FastAPI) on Granian, the server `reflex run --env prod` uses, one worker, on
127.0.0.1, with persistence on: every run and node record is written to the database (SQLite, then the real
PostgreSQL). The graph is the 3-node example `tests/fixtures/graphs/examples/webhook.json` (Webhook -> Edit
Fields -> Edit Fields) answering "when the last node finishes". The floor is a bare FastAPI route of the same
server doing the same JSON work (parse the body, build the same answer). The load generator is a separate
process with a fixed number of keep-alive connections (bounded concurrency). After the load, the number of runs
stored is checked against the calls made.
Floor and webhook loads are taken in turns (3 rounds by default): the table shows medians, the ratio is the median
of each round's webhook rate over the floor's just before it.
A last, diagnostic case (`unrecorded`, SQLite only) takes the same calls on a server whose runs write nothing: not
a way NodeFlow may run (the SPEC keeps every run on record) but the bound on what any faster persistence could
give, measured in the same run against a floor of its own.
`python -m benchmarks.webhooks [--quick] [--requests N] [--rounds R] [--concurrency C] [--backends sqlite,postgresql]
[--no-bound]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from fastapi import Request, Response

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "tests" / "fixtures" / "graphs" / "examples" / "webhook.json"
POSTGRES_URL = os.environ.get("NODEFLOW_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
BODY = json.dumps({"sku": "pen", "qty": 3}).encode()
TARGET_RUNS_S = 250.0  # issue 17: with SQLite
UNRECORDED = "NODEFLOW_BENCH_UNRECORDED"  # set on the server of the diagnostic case: its runs write nothing
EXPECTED = {"sku": "pen", "qty": 3, "source": "bench", "status": "accepted"}


# -- the server (its own process, started by Granian) --------------------------------------------------

def make_app() -> Any:
    """NodeFlow's API plus the floor route (Granian's factory)."""
    from nodeflow_app.api.access import requires
    from nodeflow_app.api.app import create_api
    from nodeflow_app.api.services import Services
    from nodeflow_app.heap import freeze_startup_objects

    app = create_api(Services(launcher=_unrecorded_launcher) if os.environ.get(UNRECORDED) else None)

    @app.post("/bench/floor")
    @requires("public")
    async def floor(request: Request) -> Response:
        body = json.loads(await request.body())
        answer = {"sku": body.get("sku"), "qty": body.get("qty"), "source": request.query_params.get("source"),
                  "status": "accepted"}
        return Response(json.dumps(answer), media_type="application/json")

    # Tried first, as the webhook routes are (create_api): both cases then pay the same route matching.
    app.router.routes.insert(0, app.router.routes.pop())
    freeze_startup_objects()  # as the app's last lifespan task does (nodeflow_app/nodeflow_app.py)
    return app


_unrecorded: list[Any] = []


def _unrecorded_launcher() -> Any:
    """The diagnostic case's launcher (made on the first call, in the server's worker): the same runs, started
    with `persist=False`, so nothing of them is written."""
    if not _unrecorded:
        from nodeflow_app.runs.launcher import RunLauncher

        class UnrecordedLauncher(RunLauncher):
            def start(self, *args: Any, **options: Any) -> Any:
                return super().start(*args, **{**options, "persist": False})

        _unrecorded.append(UnrecordedLauncher(os.environ["REFLEX_DB_URL"]))
    return _unrecorded[0]


def prepare(url: str) -> str:
    """The example graph stored and activated on `url`; its webhook's path."""
    from nodeflow_app.runs.launcher import RunLauncher
    from nodeflow_app.store.graphs import GraphStore
    from nodeflow_app.triggers.activation import Activation
    from nodeflow_app.triggers.webhooks import hook_id

    launcher = RunLauncher(url)
    try:
        graph_id = GraphStore(launcher.engine).create("Webhook bench", json.loads(EXAMPLE.read_text())).id
        Activation(launcher).activate(graph_id)
        return f"/api/hooks/{hook_id(graph_id, 'hook')}"
    finally:
        launcher.close()


def stored_runs(url: str) -> int:
    from sqlalchemy import func, select

    from nodeflow_app.store.db import make_engine
    from nodeflow_app.store.models import RunRow

    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            table = RunRow.__table__  # type: ignore[attr-defined]
            return conn.execute(select(func.count()).select_from(table).where(
                table.c.started_by == "webhook", table.c.status == "completed")).scalar()
    finally:
        engine.dispose()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, url: str, *, unrecorded: bool = False):
        self.url, self.port = url, free_port()
        env = {**os.environ, "REFLEX_DB_URL": url, "PYTHONPATH": str(ROOT), "GRANIAN_LOG_LEVEL": "warning",
               **({UNRECORDED: "1"} if unrecorded else {})}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "granian", "--interface", "asgi", "--workers", "1", "--host", "127.0.0.1",
             "--port", str(self.port), "--factory", "--no-ws", "benchmarks.webhooks:make_app"],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the benchmark server stopped: {self.process.stderr.read()[-2000:]}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("the benchmark server did not start within 60 s")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()


# -- the load generator (its own process) --------------------------------------------------------------

async def _one(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes) -> tuple[int, bytes]:
    writer.write(request)
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    length = next(int(line.split(":", 1)[1]) for line in lines[1:] if line.lower().startswith("content-length:"))
    return status, await reader.readexactly(length)


async def _connection(port: int, request: bytes, jobs: list[int], latencies: list[float],
                      answers: list[bytes]) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        while jobs:
            jobs.pop()
            started = time.perf_counter()
            status, body = await _one(reader, writer, request)
            latencies.append(time.perf_counter() - started)
            if status != 200:
                raise RuntimeError(f"HTTP {status}: {body[:300]!r}")
            answers.append(body)
    finally:
        writer.close()


async def load(port: int, path: str, requests: int, concurrency: int) -> dict[str, Any]:
    request = (f"POST {path}?source=bench HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
               f"Content-Length: {len(BODY)}\r\n\r\n").encode() + BODY
    latencies: list[float] = []
    answers: list[bytes] = []
    warmup = max(1, requests // 10 // concurrency)
    await asyncio.gather(*(_connection(port, request, list(range(warmup)), [], []) for _ in range(concurrency)))
    jobs = list(range(requests))
    started = time.perf_counter()
    await asyncio.gather(*(_connection(port, request, jobs, latencies, answers) for _ in range(concurrency)))
    elapsed = time.perf_counter() - started
    wrong = sum(1 for a in answers if json.loads(a) != EXPECTED)
    ordered = sorted(latencies)
    return {"requests": len(latencies), "per_s": len(latencies) / elapsed, "wrong": wrong,
            "p50_ms": statistics.median(ordered) * 1000, "p99_ms": ordered[int(len(ordered) * 0.99) - 1] * 1000,
            "warmup": warmup * concurrency}


def run_load(port: int, path: str, requests: int, concurrency: int) -> dict[str, Any]:
    """The load generator in a separate process (it must not share the server's CPU time slices in-process)."""
    done = subprocess.run([sys.executable, "-m", "benchmarks.webhooks", "--load", str(port), path, str(requests),
                           str(concurrency)], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"load generator failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# -- the benchmark -------------------------------------------------------------------------------------

def _database(backend: str, folder: str) -> tuple[str, Any]:
    """(url, cleanup) of a fresh database."""
    if backend == "sqlite":
        return f"sqlite:///{folder}/bench.db", lambda: None
    from sqlalchemy import text

    from nodeflow_app.store.db import make_engine

    schema = f"nodeflow_bench_{uuid.uuid4().hex[:12]}"
    admin = make_engine(POSTGRES_URL)
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))

    def drop() -> None:
        with admin.begin() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()

    return f"{POSTGRES_URL}?options=-csearch_path%3D{schema}", drop


def measure(backend: str, requests: int, concurrency: int, rounds: int, *,
            unrecorded: bool = False) -> list[dict[str, Any]]:
    """Floor and webhook loads taken in turns, `rounds` times: this machine's speed drifts by 10-30% from one
    minute to the next, and each round's ratio compares two loads run seconds apart. `unrecorded`: the diagnostic
    case (runs write nothing, so none is counted in the database)."""
    floors: list[dict[str, Any]] = []
    hooks: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as folder:
        url, cleanup = _database(backend, folder)
        try:
            path = prepare(url)
            server = Server(url, unrecorded=unrecorded)
            try:
                for _ in range(rounds):
                    floors.append(run_load(server.port, "/bench/floor", requests, concurrency))
                    hooks.append(run_load(server.port, path, requests, concurrency))
                calls = sum(h["requests"] + h["warmup"] for h in hooks)
                deadline = time.monotonic() + 30
                stored = stored_runs(url)  # unrecorded: must stay none, else the case measured something else
                while not unrecorded and stored < calls and time.monotonic() < deadline:
                    time.sleep(0.2)
                    stored = stored_runs(url)
            finally:
                server.stop()
        finally:
            cleanup()
    cases = (("floor", floors), ("unrecorded" if unrecorded else "webhook", hooks))
    rows = [_median_row(backend, case, concurrency, results) for case, results in cases]
    if unrecorded:
        rows[0]["case"] = "floor*"  # the diagnostic server's own floor
    rows[-1].update(calls=calls, runs_stored=stored, ratio_to_floor=round(statistics.median(
        h["per_s"] / f["per_s"] for f, h in zip(floors, hooks)), 3))
    return rows


def _median_row(backend: str, case: str, concurrency: int, results: list[dict[str, Any]]) -> dict[str, Any]:
    """One case's rounds: medians of rate and latencies, answers checked in every round."""
    def median(key: str) -> float:
        return round(statistics.median(r[key] for r in results), 2)

    return {"bench": "webhooks", "backend": backend, "case": case, "concurrency": concurrency,
            "rounds": len(results), "requests": results[0]["requests"], "warmup": results[0]["warmup"],
            "per_s": median("per_s"), "p50_ms": median("p50_ms"), "p99_ms": median("p99_ms"),
            "per_s_rounds": [round(r["per_s"]) for r in results], "wrong": sum(r["wrong"] for r in results)}


def report(rows: list[dict[str, Any]]) -> int:
    print(f"{'backend':<11} {'case':<10} {'per s':>8} {'p50 ms':>8} {'p99 ms':>8} {'vs floor':>9}  per s by round")
    for r in rows:
        ratio = f"{r['ratio_to_floor']:.2f}x" if "ratio_to_floor" in r else ""
        print(f"{r['backend']:<11} {r['case']:<10} {r['per_s']:>8.0f} {r['p50_ms']:>8.1f} {r['p99_ms']:>8.1f} "
              f"{ratio:>9}  {', '.join(str(n) for n in r['per_s_rounds'])}")
    failed = 0
    for r in rows:
        print(json.dumps(r))
        if r["wrong"]:
            print(f"{r['backend']} {r['case']}: {r['wrong']} answers differ from {EXPECTED}", file=sys.stderr)
            failed = 1
        if r["case"] == "unrecorded" and r["runs_stored"]:
            print(f"unrecorded: {r['runs_stored']} runs were stored by a server that should write none",
                  file=sys.stderr)
            failed = 1
        if r["case"] == "webhook" and r["runs_stored"] < r["calls"]:
            print(f"{r['backend']}: {r['runs_stored']} completed runs stored for {r['calls']} calls",
                  file=sys.stderr)
            failed = 1
    for r in rows:
        if r["case"] == "webhook":
            goal = (f"target >= {TARGET_RUNS_S:.0f} runs/s: {'met' if r['per_s'] >= TARGET_RUNS_S else 'MISSED'}; "
                    if r["backend"] == "sqlite" else "")
            half = "met" if r["ratio_to_floor"] >= 0.5 else "MISSED"
            print(f"{r['backend']}: {goal}target >= 0.5x the bare endpoint: {half}")
        if r["case"] == "unrecorded":
            print(f"bound: with nothing written, webhook runs reach {r['ratio_to_floor']:.2f}x the bare endpoint")
    return failed


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--load"]:
        port, path, requests, concurrency = int(argv[1]), argv[2], int(argv[3]), int(argv[4])
        print(json.dumps(asyncio.run(load(port, path, requests, concurrency))))
        return 0
    parser = argparse.ArgumentParser(prog="python -m benchmarks.webhooks", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="few requests (a smoke test, not a measurement)")
    parser.add_argument("--requests", type=int, default=None, help="measured calls per case (default 3000)")
    parser.add_argument("--concurrency", type=int, default=16, help="connections kept busy at once")
    parser.add_argument("--rounds", type=int, default=None, help="floor and webhook loads taken in turns (default 3)")
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--no-bound", action="store_true", help="leave out the diagnostic case (runs writing nothing)")
    args = parser.parse_args(argv)
    requests = args.requests or (200 if args.quick else 3000)
    rounds = args.rounds or (1 if args.quick else 3)
    rows = [row for backend in args.backends.split(",")
            for row in measure(backend, requests, args.concurrency, rounds)]
    if not args.no_bound:
        rows += measure("sqlite", requests, args.concurrency, rounds, unrecorded=True)
    return report(rows)


if __name__ == "__main__":
    sys.exit(main())
