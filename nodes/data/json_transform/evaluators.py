"""Evaluate JSONata in evaluator processes (worker.py), never in the server's: each has a memory limit.

JSONata builds large values from small expressions (`$pad("", 300000000)`, `[1..300].[1..10000000]`) in one
step, faster than any check between steps could stop them; an evaluator's address-space limit (MEMORY_MB) stops
every way at once, and the server gets an error instead of running out of memory. Evaluators are kept and
reused (JSONata runs no user Python, so a call leaves nothing behind for the next; one that grew large exits),
so a call costs a JSON round trip over pipes, not a process start. At most `size` evaluate at once; other calls
wait for one (in their thread). An evaluator that does not answer within the time limit plus GRACE_S (a single
long step the port's time box cannot interrupt) is killed. Blocking: call it in a thread.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from nodeflow_app.contract import NodeError

WORKER = Path(__file__).with_name("worker.py")
MEMORY_MB = 1024  # address space of an evaluator process: what one call may take, its input included
RESULT_LIMIT = 64 * 1024 * 1024  # bytes of result JSON an evaluator sends back
GRACE_S = 2.0  # past the time limit, before a silent evaluator is killed
CLEAN_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}


class _Evaluator:
    """One evaluator process, waiting for requests on its stdin."""

    def __init__(self, memory_mb: int) -> None:
        self.memory_mb = memory_mb
        self.process = subprocess.Popen(
            [sys.executable, "-I", str(WORKER), str(memory_mb), str(RESULT_LIMIT)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=CLEAN_ENV, close_fds=True)

    def ask(self, request: bytes, timeout: float, time_limit_s: float) -> dict:
        """Its answer to `request`; NodeError when it passes the time limit or dies (out of memory)."""
        assert self.process.stdin is not None and self.process.stdout is not None
        try:
            self.process.stdin.write(request)
            self.process.stdin.flush()
        except BrokenPipeError:
            raise NodeError(self._death()) from None
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        if not ready:
            raise NodeError(f"expression ran longer than {time_limit_s:g} s and was stopped")
        line = self.process.stdout.readline()
        if not line.endswith(b"\n"):
            raise NodeError(self._death())
        return json.loads(line)

    def _death(self) -> str:
        self.kill()
        return (f"the expression stopped its evaluator (exit status {self.process.returncode}), probably out of "
                f"memory (limit {self.memory_mb} MB)")

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                try:
                    pipe.close()
                except BrokenPipeError:  # unsent bytes of a request to a dead evaluator
                    pass


class EvaluatorPool:
    """At most `size` evaluators at work at once, each within `memory_mb`; idle ones are kept for the next call."""

    def __init__(self, size: int, memory_mb: int = MEMORY_MB) -> None:
        self.memory_mb = memory_mb
        self._slots = threading.BoundedSemaphore(size)
        self._idle: list[_Evaluator] = []
        self._lock = threading.Lock()

    def evaluate(self, expression: str, value: Any, each: bool, time_limit_ms: int) -> Any:
        """The expression's result on `value` (on each of its items when `each`); NodeError saying why not."""
        try:  # a value JSON has no type for (a date, bytes) reaches JSONata as its text
            request = json.dumps({"expression": expression, "value": value, "each": each,
                                  "time_limit_ms": time_limit_ms}, default=str).encode() + b"\n"
        except (ValueError, RecursionError) as error:  # a circular or too deeply nested value
            raise NodeError(f"the input cannot be given to the expression as JSON: {error}") from None
        with self._slots:
            evaluator = self._take()
            try:
                answer = evaluator.ask(request, time_limit_ms / 1000 + GRACE_S, time_limit_ms / 1000)
            except BaseException:
                evaluator.kill()
                raise
            if answer["retire"]:
                evaluator.kill()
            else:
                with self._lock:
                    self._idle.append(evaluator)
        if not answer["ok"]:
            raise NodeError(answer["error"])
        return answer["value"]

    def _take(self) -> _Evaluator:
        with self._lock:
            while self._idle:
                evaluator = self._idle.pop()
                if evaluator.process.poll() is None:
                    return evaluator
                evaluator.kill()  # it went away while idle (killed from outside)
        return _Evaluator(self.memory_mb)

    def close(self) -> None:
        """Stop the idle evaluators."""
        with self._lock:
            idle, self._idle = self._idle, []
        for evaluator in idle:
            evaluator.kill()


_POOL: EvaluatorPool | None = None
_POOL_LOCK = threading.Lock()


def pool() -> EvaluatorPool:
    """The process-wide pool: as many evaluators at once as the machine has cores (at least 2, at most 8)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = EvaluatorPool(size=max(2, min(8, os.cpu_count() or 1)))
            atexit.register(_POOL.close)
    return _POOL
