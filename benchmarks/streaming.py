"""Streaming benchmark: an Agent node's tokens/s and time to first token against Agno's own stream and plain httpx.

A fake OpenAI-compatible server (tests/llm/fake_openai.py) runs in this process, on a thread, and streams a
scripted answer. Three systems read the same answer through the same shared httpx client; rounds interleave
them in a shuffled order and the median per (scenario, system) is reported as a table, then as one JSON line
each. `python -m benchmarks.streaming [--quick] [--rounds N] [--profile]`.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import contextlib
import gc
import io
import json
import os
import platform
import pstats
import random
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Iterator

PROMPT = "Write a long answer."
MODEL_ID = "fake-model"
THROUGHPUT_TARGET = 0.90  # the Agent node keeps >= 90% of Agno's tokens/s
ADDED_FIRST_TOKEN_MS = 5.0  # and adds < 5 ms to the first token


@dataclass(frozen=True)
class Scenario:
    key: str
    what: str
    tokens: int
    delay_s: float  # the server waits this long before each token


@dataclass(frozen=True)
class Sample:
    tokens: int
    first_token_s: float
    total_s: float
    first_token_emitted_s: float | None = None  # NodeFlow: when the node made the event (its timestamp)


def scenarios(quick: bool) -> list[Scenario]:
    long, short, delay = (200, 5, 0.002) if quick else (2000, 40, 0.005)
    return [
        Scenario("throughput", f"{long} tokens, no delay: how fast each system consumes a stream", long, 0.0),
        Scenario("first-token", f"{short} tokens, {delay * 1000:g} ms before each: time to the first token",
                 short, delay),
    ]


# -- systems: each reads one streamed answer and reports (tokens, first token, total) ---------------

class System:
    name = ""
    does = ""

    async def sample(self) -> Sample:
        raise NotImplementedError


class _Clock:
    """Counts tokens and notes when the first one arrived, relative to the start."""

    def __init__(self) -> None:
        self.start = time.perf_counter()
        self.wall_start = time.time()  # NodeEvent timestamps are wall-clock
        self.first: float | None = None
        self.count = 0

    def token(self) -> None:
        if self.first is None:
            self.first = time.perf_counter()
        self.count += 1

    def done(self, emitted_at: float | None = None) -> Sample:
        end = time.perf_counter()
        emitted = None if emitted_at is None else emitted_at - self.wall_start
        return Sample(self.count, (self.first or end) - self.start, end - self.start, emitted)


class PlainHttpx(System):
    name = "httpx"
    does = "POST + SSE lines read with the shared httpx client, json.loads per chunk: the floor"

    def __init__(self, base_url: str):
        self.url = f"{base_url}/chat/completions"

    async def sample(self) -> Sample:
        from nodeflow_app.llm.providers import shared_http_client

        client = shared_http_client("openai-compatible", self.url.rsplit("/chat/", 1)[0])
        body = {"model": MODEL_ID, "messages": [{"role": "user", "content": PROMPT}], "stream": True}
        clock = _Clock()
        async with client.stream("POST", self.url, json=body, headers={"Authorization": "Bearer x"}) as response:
            response.raise_for_status()
            async for line in response.aiter_lines():
                if not line.startswith("data: "):
                    continue
                if line == "data: [DONE]":
                    break
                for choice in json.loads(line[6:]).get("choices") or ():
                    if (choice.get("delta") or {}).get("content"):
                        clock.token()
        return clock.done()


class AgnoAgent(System):
    name = "agno"
    does = ("Agent(model=OpenAILike(..., http_client=the shared client)) built per sample, "
            "arun(stream=True, stream_events=True), RunContent deltas counted")

    def __init__(self, base_url: str):
        self.base_url = base_url

    async def sample(self) -> Sample:
        from agno.agent import Agent
        from agno.models.openai import OpenAILike

        from nodeflow_app.llm.providers import shared_http_client

        clock = _Clock()
        model = OpenAILike(id=MODEL_ID, base_url=self.base_url, api_key="x", max_retries=0,
                           http_client=shared_http_client("openai-compatible", self.base_url))
        async for event in Agent(model=model, telemetry=False).arun(PROMPT, stream=True, stream_events=True):
            if event.event == "RunContent" and event.content:
                clock.token()
        return clock.done()


class NodeFlowAgent(System):
    name = "nodeflow"
    does = ("start_run(Chat Start -> Agent, the real registry) per sample, persistence off, "
            "`token` events of run.events() counted")

    def __init__(self) -> None:
        from nodes._registry import default_registry

        self.registry = default_registry()
        self.graph = json.dumps({"id": "bench-stream", "name": "streaming benchmark", "nodes": [
            {"id": "chat", "type": "chat-start", "name": "Chat Start", "data": {}},
            {"id": "agent", "type": "agent", "name": "Agent",
             "data": {"model": f"openai-compatible:{MODEL_ID}", "history": False}},
        ], "edges": [{"id": "e1", "source": "chat", "sourceHandle": "output", "target": "agent",
                      "targetHandle": "input", "data": {"channel": "flow"}}]})

    async def sample(self) -> Sample:
        from nodeflow_app.runtime.engine import start_run

        clock = _Clock()
        emitted_at = None
        run = start_run(json.loads(self.graph), self.registry, payload=PROMPT)
        async for event in run.events():
            if event.event_type == "token":
                if emitted_at is None:
                    emitted_at = event.timestamp
                clock.token()
        if run.status != "completed":
            raise RuntimeError(f"NodeFlow run {run.status}: {run.error}")
        return clock.done(emitted_at)


# -- the fake server and the environment that points NodeFlow at it ---------------------------------

@contextlib.contextmanager
def fake_provider() -> Iterator[Any]:
    """The fake OpenAI server on a thread, `openai-compatible:*` pointed at it; the environment restored after."""
    from nodeflow_app.llm import providers
    from tests.llm.fake_openai import FakeServer

    server = FakeServer()
    fake = server.start()
    saved = dict(os.environ)
    with tempfile.TemporaryDirectory(prefix="nodeflow-bench-") as data_dir:
        os.environ.update({providers.COMPATIBLE_BASE_URL_ENV: fake.base_url, providers.COMPATIBLE_API_KEY_ENV: "x",
                           providers.MAX_RETRIES_ENV: "0", "NODEFLOW_DATA_DIR": data_dir,
                           "AGNO_TELEMETRY": "false"})
        try:
            yield fake
        finally:
            os.environ.clear()
            os.environ.update(saved)
            server.stop()


def scripted(fake: Any, scenario: Scenario, sample: Callable[[], Awaitable[Sample]]) -> Callable[[], Awaitable[Sample]]:
    """`sample` preceded by queueing the scenario's answer (outside the timed part)."""
    from tests.llm.fake_openai import text

    tokens = [f" t{i}" for i in range(scenario.tokens)]

    async def run() -> Sample:
        fake.reset()
        fake.script(text(tokens, delay=scenario.delay_s))
        gc.collect()
        result = await sample()
        if result.tokens != scenario.tokens:
            raise RuntimeError(f"read {result.tokens} tokens, the server sent {scenario.tokens}")
        return result
    return run


# -- measuring and reporting ------------------------------------------------------------------------

async def measure(fake: Any, systems: list[System], loads: list[Scenario],
                  rounds: int) -> dict[tuple[str, str], list[Sample]]:
    warm = Scenario("warm-up", "", 20, 0.0)
    for system in systems:  # imports, first connection, Agno's first-call paths
        await scripted(fake, warm, system.sample)()
    prepared = {(s.key, system.name): scripted(fake, s, system.sample) for s in loads for system in systems}
    samples: dict[tuple[str, str], list[Sample]] = {key: [] for key in prepared}
    order = list(prepared)
    for round_index in range(rounds):
        random.Random(round_index).shuffle(order)
        for key in order:
            samples[key].append(await prepared[key]())
        print(f"  round {round_index + 1}/{rounds} done", file=sys.stderr, flush=True)
    return samples


def rows(samples: dict[tuple[str, str], list[Sample]]) -> list[dict[str, Any]]:
    rates = {key: statistics.median(s.tokens / s.total_s for s in values) for key, values in samples.items()}
    firsts = {key: statistics.median(s.first_token_s * 1000 for s in values) for key, values in samples.items()}
    out = []
    for (scenario, system), values in samples.items():
        agno = (scenario, "agno")
        row: dict[str, Any] = {
            "bench": "streaming", "scenario": scenario, "system": system, "tokens": values[0].tokens,
            "tokens_per_s": round(rates[(scenario, system)], 1),
            "first_token_ms": round(firsts[(scenario, system)], 3),
            "rounds": len(values),
            "samples_tokens_per_s": [round(s.tokens / s.total_s, 1) for s in values],
            "samples_first_token_ms": [round(s.first_token_s * 1000, 3) for s in values],
        }
        if agno in rates:
            row["vs_agno"] = round(rates[(scenario, system)] / rates[agno], 3)
            row["added_first_token_ms"] = round(firsts[(scenario, system)] - firsts[agno], 3)
        emitted = [s.first_token_emitted_s for s in values if s.first_token_emitted_s is not None]
        if emitted:  # when the node made its first token event, before the consumer saw it
            row["first_token_emitted_ms"] = round(statistics.median(emitted) * 1000, 3)
        if system == "nodeflow" and "vs_agno" in row:
            if scenario == "throughput":
                row["target_rate"] = f">= {THROUGHPUT_TARGET:.0%} of agno's tokens/s"
                row["target_rate_met"] = row["vs_agno"] >= THROUGHPUT_TARGET
            row["target_first_token"] = f"< {ADDED_FIRST_TOKEN_MS:g} ms added to the first token"
            row["target_first_token_met"] = row["added_first_token_ms"] < ADDED_FIRST_TOKEN_MS
        out.append(row)
    order = {name: i for i, name in enumerate(("httpx", "agno", "nodeflow"))}
    return sorted(out, key=lambda r: (r["scenario"] != "throughput", order.get(r["system"], 99)))


def report(table: list[dict[str, Any]], systems: list[System], loads: list[Scenario], rounds: int) -> None:
    print(f"\nNodeFlow streaming benchmark: {rounds} round(s), interleaved, median per (scenario, system); "
          f"{os.cpu_count()} CPUs, Python {platform.python_version()}")
    print("The fake OpenAI server runs on a thread of this process: its work shares the GIL with every system.")
    print("Scenarios:")
    for s in loads:
        print(f"  {s.key}: {s.what}")
    print("Systems (timed from before anything is built to the end of the stream):")
    for s in systems:
        print(f"  {s.name}: {s.does}")
    header = ("scenario", "system", "tokens/s", "x agno", "first token ms", "+ms vs agno", "(emitted ms)",
              f">={THROUGHPUT_TARGET:.0%} rate", f"<{ADDED_FIRST_TOKEN_MS:g} ms added")
    lines = [header]
    for r in table:
        lines.append((r["scenario"], r["system"], f"{r['tokens_per_s']:.0f}",
                      f"{r['vs_agno']:.2f}x" if "vs_agno" in r else "", f"{r['first_token_ms']:.2f}",
                      f"{r['added_first_token_ms']:+.2f}" if "added_first_token_ms" in r else "",
                      f"{r['first_token_emitted_ms']:.2f}" if "first_token_emitted_ms" in r else "",
                      _met(r.get("target_rate_met")), _met(r.get("target_first_token_met"))))
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    print()
    for index, line in enumerate(lines):
        print("  ".join(cell.ljust(width) if i < 2 else cell.rjust(width)
                        for i, (cell, width) in enumerate(zip(line, widths))).rstrip())
        if index == 0:
            print("  ".join("-" * width for width in widths))
    print("(emitted ms): when the Agent node made its first token event; the difference to \"first token ms\" is "
          "the wait until the consumer of run.events() got it.")
    missed = missed_targets(table)
    print("targets: " + ("all met" if not missed else "MISSED: " + "; ".join(missed)))
    print()
    for r in table:
        print(json.dumps(r))


def missed_targets(table: list[dict[str, Any]]) -> list[str]:
    return [f"{r['scenario']}: {r[key]}" for r in table for key in ("target_rate", "target_first_token")
            if r.get(f"{key}_met") is False]


def _met(value: bool | None) -> str:
    return "" if value is None else "yes" if value else "NO"


async def profile(fake: Any, systems: list[System], scenario: Scenario, top: int = 20) -> None:
    """cProfile one sample of agno and of nodeflow (this thread only: the server's thread is not profiled).

    For nodeflow, NodeFlow's own functions (nodeflow_app/, nodes/) are listed too: what it adds to Agno.
    """
    from tests.llm.fake_openai import text

    for system in systems:
        if system.name not in ("agno", "nodeflow"):
            continue
        fake.reset()
        fake.script(text([f" t{i}" for i in range(scenario.tokens)], delay=scenario.delay_s))
        gc.collect()
        profiler = cProfile.Profile()
        profiler.enable()
        await system.sample()
        profiler.disable()
        print(f"\n-- cProfile, {system.name}, one {scenario.key} sample ({scenario.tokens} tokens), by own time")
        _print_stats(profiler, top)
        if system.name == "nodeflow":
            print("-- NodeFlow's own functions, by cumulative time")
            _print_stats(profiler, top, "cumulative", r"nodeflow_app|/nodes/")


def _print_stats(profiler: cProfile.Profile, top: int, order: str = "tottime", only: str | None = None) -> None:
    buffer = io.StringIO()
    stats = pstats.Stats(profiler, stream=buffer).sort_stats(order)
    stats.print_stats(*([only] if only else []), top)
    print("\n".join(line for line in buffer.getvalue().splitlines() if line.strip()))


async def _run(args: argparse.Namespace) -> int:
    from nodeflow_app.llm.providers import close_http_clients

    loads = scenarios(args.quick)
    with fake_provider() as fake:
        systems: list[System] = [PlainHttpx(fake.base_url), AgnoAgent(fake.base_url), NodeFlowAgent()]
        try:
            samples = await measure(fake, systems, loads, args.rounds)
            table = rows(samples)
            report(table, systems, loads, args.rounds)
            if args.profile or (missed_targets(table) and not args.quick):
                await profile(fake, systems, loads[0])
        finally:
            await close_http_clients()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.streaming", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 round, short answers (a smoke test, not a measurement)")
    parser.add_argument("--rounds", type=int, default=None, help="rounds (default 7, --quick 1)")
    parser.add_argument("--profile", action="store_true",
                        help="also cProfile one throughput sample of agno and nodeflow (automatic when a target is missed)")
    args = parser.parse_args(argv)
    args.rounds = args.rounds or (1 if args.quick else 7)
    return asyncio.run(_run(args))


if __name__ == "__main__":
    sys.exit(main())
