"""Run user Python in throw-away worker processes (worker.py), with limits, from a pool of warm ones.

Each worker runs exactly one job and is then killed and replaced: nothing a job does (a changed
module, a patched builtin, a left-over thread or file) can reach the next job. A few are started
ahead of time, so a call only pays for sending the job and waiting for the exit (a few ms), not
for starting an interpreter (~20 ms here). Never runs user code in this (the server's) process.

A worker confines itself before its job arrives (confine.py: no network, no programs, no other
process, no file but the standard library's and its scratch folder's) and refuses jobs where the
system cannot confine it, unless NODEFLOW_CODE_ISOLATION=off. It also gets: a clean environment (no variable of the server, so no keys), its own scratch
folder as working directory and HOME (removed after the job), stdout and stderr in files the
server reads back, and the limits of `Limits` (see worker.py). The wall-clock limit is enforced
here: the worker's whole process group is killed when it passes. So is the scratch folder's size: each file
is capped by the worker's RLIMIT_FSIZE, and all of them together (bytes and count) are looked at every
SCRATCH_CHECK_S while the job runs, since no unprivileged limit covers a folder and a full disk (or a full
tmpfs, which is memory) would harm the server and every other run.

Jobs run side by side (a For Each runs up to 32 items at once, and runs are concurrent) only while the memory
limits of the running jobs add up to at most the pool's memory budget (`memory_budget_mb`); a job over what is
left waits its turn, and its time limit starts when it runs.
"""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

WORKER = Path(__file__).with_name("worker.py")
CAPTURE_LIMIT = 16 * 1024  # characters of stdout / stderr kept for the step card
RESULT_LIMIT = 32 * 1024 * 1024  # bytes of result JSON accepted back
PIPE_BUFFER = 64 * 1024  # a job smaller than the pipe's buffer is written without waiting for the worker
CLEAN_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
SCRATCH_LIMIT = 256 * 1024 * 1024  # bytes all of a job's scratch files together may take
SCRATCH_ENTRIES = 10_000  # files and folders a job may create
SCRATCH_CHECK_S = 0.1  # how often a running job's scratch folder is measured


class SandboxError(Exception):
    """The user's code failed (syntax, exception, limit); the message is for the user."""

    def __init__(self, message: str, stdout: str = "", stderr: str = ""):
        super().__init__(message)
        self.stdout, self.stderr = stdout, stderr


@dataclass(frozen=True, slots=True)
class Limits:
    timeout: float = 5.0     # wall-clock seconds
    memory_mb: int = 256     # address space of the worker process


@dataclass(frozen=True, slots=True)
class Outcome:
    value: Any
    stdout: str
    stderr: str


def isolation() -> str:
    """`required` (the default) or `off` (NODEFLOW_CODE_ISOLATION): whether a worker that cannot confine itself runs code."""
    return "off" if os.environ.get("NODEFLOW_CODE_ISOLATION", "").strip().lower() == "off" else "required"


class _Worker:
    """One started worker process and its folder (scratch working directory, captured output, result)."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="nodeflow-code-"))
        self.scratch = self.folder / "work"
        self.scratch.mkdir()
        self.result = self.folder / "result.json"
        with open(self.folder / "stdout", "wb") as out, open(self.folder / "stderr", "wb") as err:
            self.process = subprocess.Popen(
                [sys.executable, "-I", "-S", "-u", str(WORKER), str(self.result), f"--isolation={isolation()}"],
                stdin=subprocess.PIPE, stdout=out, stderr=err, cwd=self.scratch, close_fds=True,
                env={**CLEAN_ENV, "HOME": str(self.scratch), "TMPDIR": str(self.scratch)},
                start_new_session=True)  # its own process group: a kill takes the code's children too

    def send(self, job: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(job)
        self.process.stdin.close()

    def kill(self) -> None:
        """Kill the worker's whole process group, also after the worker itself exited (children it left)."""
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if self.process.poll() is None:
            self.process.wait()
        elif self.process.stdin and not self.process.stdin.closed:
            self.process.stdin.close()

    def read(self, name: str) -> str:
        try:
            with open(self.folder / name, "rb") as handle:
                data = handle.read(CAPTURE_LIMIT * 4 + 1)
        except OSError:
            return ""
        text = data.decode("utf-8", "replace")
        return text if len(text) <= CAPTURE_LIMIT else text[:CAPTURE_LIMIT] + "\n… (output cut)"

    def discard(self) -> None:
        self.kill()
        shutil.rmtree(self.folder, ignore_errors=True)


class _Budget:
    """Megabytes that the memory limits of the running jobs may add up to. A job that does not fit in what is
    left waits, first come first served (a large job is not passed over for ever by small ones). Shared by the
    runs of several event loops: a waiter is woken on its own loop."""

    def __init__(self, total_mb: int):
        self.total_mb, self.used_mb = total_mb, 0
        self._waiting: deque[tuple[int, asyncio.AbstractEventLoop, asyncio.Future]] = deque()
        self._lock = threading.Lock()

    async def acquire(self, memory_mb: int) -> None:
        if memory_mb > self.total_mb:
            raise SandboxError(f"the memory limit ({memory_mb} MB) is more than this server gives all running "
                               f"Code nodes together ({self.total_mb} MB, NODEFLOW_CODE_MEMORY_MB); lower it")
        loop = asyncio.get_running_loop()
        with self._lock:
            if not self._waiting and self.used_mb + memory_mb <= self.total_mb:
                self.used_mb += memory_mb
                return
            entry = (memory_mb, loop, loop.create_future())
            self._waiting.append(entry)
        try:
            await entry[2]
        except asyncio.CancelledError:
            with self._lock:
                granted = entry not in self._waiting
                if not granted:
                    self._waiting.remove(entry)
                    self._wake()  # it may have held up smaller jobs behind it
            if granted:  # its turn came as it was cancelled: give it back
                self.release(memory_mb)
            raise

    def release(self, memory_mb: int) -> None:
        with self._lock:
            self.used_mb -= memory_mb
            self._wake()

    def _wake(self) -> None:
        """Grant the waiters at the head of the queue that fit (the lock is held)."""
        while self._waiting and self.used_mb + self._waiting[0][0] <= self.total_mb:
            memory_mb, loop, turn = self._waiting.popleft()
            self.used_mb += memory_mb
            try:
                loop.call_soon_threadsafe(lambda turn=turn: turn.done() or turn.set_result(None))
            except RuntimeError:  # its loop is closed: nobody is waiting there any more
                self.used_mb -= memory_mb


def memory_budget_mb() -> int:
    """NODEFLOW_CODE_MEMORY_MB, else half the memory of the machine (or of the container, cgroup v2)."""
    configured = os.environ.get("NODEFLOW_CODE_MEMORY_MB", "").strip()
    if configured:
        return int(configured)
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    try:
        total = min(total, int(Path("/sys/fs/cgroup/memory.max").read_text()))
    except (OSError, ValueError):  # no cgroup v2, or "max"
        pass
    return total // 2 // (1024 * 1024)


class WorkerPool:
    """Keeps `size` started workers; `run` takes one for a job and starts its replacement at once. The jobs
    running at once hold at most `memory_mb` of memory limits together (`memory_budget_mb()` by default)."""

    def __init__(self, size: int = 2, memory_mb: int | None = None):
        self.size = size
        self.budget = _Budget(memory_budget_mb() if memory_mb is None else memory_mb)
        self._idle: list[_Worker] = []
        self._closed = False
        self._lock = threading.Lock()  # the pool is process-wide; runs of several event loops share it

    def warm(self) -> None:
        """Start workers until `size` are waiting (cheap: the interpreters start in the background)."""
        with self._lock:
            while len(self._idle) < self.size and not self._closed:
                self._idle.append(_Worker())

    def _take(self) -> _Worker:
        with self._lock:
            worker = self._idle.pop(0) if self._idle else None
        return worker or _Worker()

    async def run(self, code: str, value: Any, limits: Limits) -> Outcome:
        """Run `code` on `value` in a worker once the budget has room; the value it returns, or SandboxError."""
        await self.budget.acquire(limits.memory_mb)
        try:
            return await self._run(code, value, limits)
        finally:
            self.budget.release(limits.memory_mb)

    async def _run(self, code: str, value: Any, limits: Limits) -> Outcome:
        worker = self._take()
        try:
            job = _encode({"code": code, "input": value, "memory_mb": limits.memory_mb,
                           "cpu_seconds": max(1, int(limits.timeout) + 1)})
            if len(job) < PIPE_BUFFER:
                worker.send(job)
            else:  # it would fill the pipe and wait for the worker to read: not on the event loop
                await asyncio.to_thread(worker.send, job)
            exited = await _wait_within_scratch(worker, limits.timeout)
            stdout, stderr = worker.read("stdout"), worker.read("stderr")
            if not exited:
                raise SandboxError(f"the code did not finish within {limits.timeout:g} s and was stopped "
                                   "(an endless loop?)", stdout, stderr)
            return Outcome(_result(worker, limits), stdout, stderr)
        except SandboxError as error:
            if not error.stdout and not error.stderr:
                error.stdout, error.stderr = worker.read("stdout"), worker.read("stderr")
            raise
        finally:
            worker.kill()
            self._replace_soon(worker)

    def _replace_soon(self, used: _Worker) -> None:
        """Remove `used` and start its replacement off this call's path (a start costs this thread several ms)."""
        def replace() -> None:
            used.discard()
            self.warm()
        try:
            asyncio.get_running_loop().run_in_executor(None, replace)
        except RuntimeError:  # the loop is closing: do it here
            replace()

    def close(self) -> None:
        """Discard the idle workers; replacements still on their way are not started any more."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.discard()


def _encode(job: dict[str, Any]) -> bytes:
    """One line of JSON; NaN, infinities and non-JSON values raise ValueError / TypeError."""
    try:
        return json.dumps(job, ensure_ascii=False, allow_nan=False).encode() + b"\n"
    except TypeError as error:
        raise ValueError(str(error)) from None


def _result(worker: _Worker, limits: Limits) -> Any:
    """The worker's answer; a worker that died without one (memory, signal) gets a reason."""
    code = worker.process.returncode
    try:
        size = worker.result.stat().st_size
    except FileNotFoundError:
        raise SandboxError(_death(code, limits)) from None
    if size > RESULT_LIMIT:
        raise SandboxError(f"the result is {size // 1024 // 1024} MB of JSON; the limit is "
                           f"{RESULT_LIMIT // 1024 // 1024} MB")
    try:
        answer = json.loads(worker.result.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise SandboxError(_death(code, limits)) from None
    if not answer.get("ok"):
        raise SandboxError(str(answer.get("error")))
    return answer.get("value")


def _death(returncode: int | None, limits: Limits) -> str:
    if returncode == -signal.SIGXCPU or returncode == -signal.SIGKILL:
        return f"the code used more than its CPU time ({limits.timeout:g} s) and was stopped"
    if returncode == -signal.SIGSEGV:  # an allocation that failed where Python could not raise MemoryError
        return f"the code crashed, probably out of memory (limit {limits.memory_mb} MB)"
    return f"the code stopped without a result (exit status {returncode})"


async def _wait_within_scratch(worker: _Worker, timeout: float) -> bool:
    """`_wait_exit`, while the job's scratch folder stays within its limits; SandboxError when it does not."""
    exit_task = asyncio.ensure_future(_wait_exit(worker.process, timeout))
    watch = asyncio.ensure_future(_watch_scratch(worker.scratch, worker.process.pid))
    try:
        await asyncio.wait((exit_task, watch), return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (exit_task, watch):
            if not task.done():
                task.cancel()
    if watch.done() and not watch.cancelled():
        worker.kill()
        failure = watch.exception()
        raise SandboxError(watch.result() if failure is None
                           else f"the code was stopped: its scratch folder could not be measured ({failure})")
    return exit_task.result()


async def _watch_scratch(folder: Path, pid: int) -> str:
    """Return (only) when the job passes its scratch limits, saying how; measured in a thread."""
    while True:
        await asyncio.sleep(SCRATCH_CHECK_S)
        overflow = await asyncio.to_thread(_scratch_overflow, folder, pid)
        if overflow:
            return overflow


def _scratch_overflow(folder: Path, pid: int) -> str:
    """Why the job is over its limits ("" when it is not): the files under `folder` (walked by folder handle, so
    no path is ever too long to open) plus files it deleted but keeps open; stops counting as soon as it is over."""
    size, entries = _deleted_but_open(pid), 0
    try:
        for _, folders, files, handle in os.fwalk(folder, onerror=_unless_gone):
            entries += len(folders) + len(files)
            for name in files:
                try:
                    size += os.stat(name, dir_fd=handle, follow_symlinks=False).st_size
                except FileNotFoundError:  # removed meanwhile
                    continue
            if entries > SCRATCH_ENTRIES:
                return (f"the code created more than {SCRATCH_ENTRIES:,} files and folders in its scratch folder "
                        "and was stopped")
            if size > SCRATCH_LIMIT:
                break
    except OSError as error:  # a folder it made unreadable: what cannot be measured is not allowed
        return f"the code was stopped: its scratch folder could not be measured ({error.strerror})"
    if size > SCRATCH_LIMIT:
        return f"the code wrote more than {SCRATCH_LIMIT // 1024 // 1024} MB to its scratch folder and was stopped"
    return ""


def _unless_gone(error: OSError) -> None:
    if not isinstance(error, FileNotFoundError):
        raise error


def _deleted_but_open(pid: int) -> int:
    """Bytes of the files the process deleted but keeps open (they take space until it exits); 0 off Linux."""
    total = 0
    try:
        descriptors = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return 0
    for fd in descriptors:
        try:
            info = os.stat(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode) and info.st_nlink == 0:
            total += info.st_size
    return total


async def _wait_exit(process: subprocess.Popen, timeout: float) -> bool:
    """Wait for the worker to exit, at most `timeout` s (the caller kills it otherwise).

    On Linux a pidfd on the event loop: no thread per call. Elsewhere a thread waits.
    """
    if not hasattr(os, "pidfd_open"):  # not Linux: a thread waits instead
        try:
            await asyncio.to_thread(process.wait, timeout)
            return True
        except subprocess.TimeoutExpired:
            return False
    loop = asyncio.get_running_loop()
    exited = loop.create_future()
    pidfd = os.pidfd_open(process.pid)
    loop.add_reader(pidfd, lambda: exited.done() or exited.set_result(True))
    try:
        await asyncio.wait_for(exited, timeout)
        process.wait()
        return True
    except asyncio.TimeoutError:
        return False
    finally:
        loop.remove_reader(pidfd)
        os.close(pidfd)


_POOL: WorkerPool | None = None


def pool() -> WorkerPool:
    """The process-wide pool (created, and warmed, on first use)."""
    global _POOL
    if _POOL is None:
        _POOL = WorkerPool(size=int(os.environ.get("NODEFLOW_CODE_WORKERS", "2")))
        atexit.register(_POOL.close)  # idle workers exit on their own (stdin closes); their folders do not
    return _POOL
