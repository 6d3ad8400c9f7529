"""nodes/data/code: user Python in a throw-away worker process, with limits; errors point at the user's lines."""

from __future__ import annotations

import asyncio
import json
import os
import platform
import subprocess
import time
from pathlib import Path

import pytest

from nodeflow_app.cli import main
from nodeflow_app.contract import ExecutionResult, FlowContext, NodeError
from nodes.data.code.definition import definition
from nodes.data.code.executor import executor
from nodes.data.code.sandbox import Limits, SandboxError, WorkerPool

EXAMPLES = Path(__file__).parents[1] / "fixtures" / "graphs" / "examples"
CLONE = {"x86_64": 56, "aarch64": 220}.get(platform.machine(), -1)  # the clone system call's number


def ctx() -> FlowContext:
    return FlowContext(node_id="code-1", node_type="code", run_id="run-1", runtime=None)


async def run(input, code: str, **data) -> ExecutionResult:
    return await executor.execute({**definition.defaults(), "code": code, **data}, {"input": input}, ctx())


async def failure(input, code: str, **data) -> str:
    with pytest.raises(NodeError) as caught:
        await run(input, code, **data)
    return str(caught.value)


async def test_the_returned_value_is_the_output_and_items_is_the_list():
    result = await run([{"n": 1}, {"n": 2}], "total = sum(i['n'] for i in items)\nreturn {'total': total}")
    assert result.outputs == {"output": {"total": 3}}


async def test_items_is_none_when_the_input_is_not_a_list():
    result = await run({"a": 1}, "return [input, items]")
    assert result.outputs == {"output": [{"a": 1}, None]}


async def test_no_return_gives_null_and_the_default_code_passes_the_input_on():
    assert (await run(1, "x = 2")).outputs == {"output": None}
    assert (await executor.execute(definition.defaults(), {"input": {"k": [1]}}, ctx())).outputs == {
        "output": {"k": [1]}}


async def test_printed_text_comes_back_on_the_console_port():
    result = await run(None, "import sys\nprint('hello')\nprint('warn', file=sys.stderr)\nreturn 1")
    assert result.outputs == {"output": 1, "console": {"stdout": "hello\n", "stderr": "warn\n"}}


async def test_a_runtime_error_names_the_users_line_and_keeps_the_output_printed_before():
    code = "print('before')\ndef half(x):\n    return x / 0\n\nreturn half(input)"
    message = await failure(4, code)
    assert message.startswith("line 3: ZeroDivisionError: division by zero\n    return x / 0\n")
    assert "line 5, top level: return half(input)" in message and "line 3, in half(): return x / 0" in message
    assert message.endswith("stdout:\nbefore\n")
    assert "worker.py" not in message


async def test_a_syntax_error_names_the_users_line_and_column():
    message = await failure(None, "x = 1\nif x >:\n    pass")
    assert message.startswith("syntax error on line 2, column 7: invalid syntax\n    if x >:\n")


async def test_an_endless_loop_is_stopped_at_the_time_limit_keeping_what_it_printed():
    started = time.perf_counter()
    message = await failure(None, "print('starting')\nwhile True:\n    pass", time_limit=0.5)
    assert message == ("the code did not finish within 0.5 s and was stopped (an endless loop?)"
                       "\n\nstdout:\nstarting\n")
    assert time.perf_counter() - started < 3


async def test_the_memory_limit_stops_a_greedy_allocation():
    message = await failure(None, "block = bytearray(400 * 1024 * 1024)\nreturn len(block)", memory_mb=128)
    assert message == "the code ran out of memory (limit 128 MB)"


@pytest.mark.parametrize(("limit", "code", "message"), [
    ("SCRATCH_LIMIT", "for i in range(10**6):\n    open(f'f{i}', 'wb').write(b'x' * 1_000_000)",
     "the code wrote more than 8 MB to its scratch folder and was stopped"),
    ("SCRATCH_ENTRIES", "import os\nfor i in range(10**7):\n    os.makedirs(f'd{i % 50}', exist_ok=True)\n"
                        "    open(f'd{i % 50}/e{i}', 'w').close()",
     "the code created more than 500 files and folders in its scratch folder and was stopped"),
    # below folders too deep for a path to reach (longer than PATH_MAX): walked by folder handle
    ("SCRATCH_LIMIT", "import os\nfor _ in range(20):\n    os.mkdir('d' * 250)\n    os.chdir('d' * 250)\n"
                      "for i in range(10**6):\n    open(f'f{i}', 'wb').write(b'x' * 1_000_000)",
     "the code wrote more than 8 MB to its scratch folder and was stopped"),
    # deleted but kept open: no folder shows them, the disk still holds them
    ("SCRATCH_LIMIT", "import os, time\nkept = []\nfor i in range(200):\n    f = open(f'f{i}', 'wb')\n"
                      "    f.write(b'x' * 1_000_000)\n    f.flush()\n    os.unlink(f'f{i}')\n    kept.append(f)\n"
                      "time.sleep(30)",
     "the code wrote more than 8 MB to its scratch folder and was stopped"),
])
async def test_filling_the_scratch_folder_stops_the_code(monkeypatch, limit, code, message):
    """Each file is capped by the worker's rlimit; the folder as a whole by the server watching it."""
    from nodes.data.code import sandbox

    monkeypatch.setattr(sandbox, limit, 8 * 1024 * 1024 if limit == "SCRATCH_LIMIT" else 500)
    started = time.perf_counter()
    assert await failure(None, code, time_limit=20) == message
    assert time.perf_counter() - started < 5  # stopped at once, not at the time limit


async def test_a_non_json_result_is_refused_naming_where():
    message = await failure(None, "return {'ok': [1, {2, 3}]}")
    assert message.startswith("the result['ok'][1] is a set, which is not JSON")
    assert (await failure(None, "return {1: 'a'}")).startswith("the result has the key 1 (int)")
    assert (await failure(None, "return float('nan')")) == "the result is nan, which JSON cannot hold"
    huge = "the result['n'] is a whole number of about 5,736 digits; return it as text (str(...))"
    assert (await failure(None, "import math\nreturn {'n': math.factorial(2000)}")) == huge
    assert (await failure(None, "import math, sys\nsys.set_int_max_str_digits(0)\n"
                                "return {'n': math.factorial(2000)}")) == huge  # the server could not read it
    assert (await run(None, "return 2 ** 14_000")).outputs["output"] == 2 ** 14_000  # 4,215 digits: fine


async def test_the_code_sees_no_server_environment_and_works_in_its_own_scratch_folder(monkeypatch):
    monkeypatch.setenv("NODEFLOW_TEST_SECRET", "sk-do-not-leak")
    code = ("import os\nopen('note.txt', 'w').write('x')\n"
            "return {'env': dict(os.environ), 'cwd': os.getcwd(), 'files': os.listdir('.')}")
    value = (await run(None, code)).outputs["output"]
    assert "NODEFLOW_TEST_SECRET" not in value["env"] and "sk-do-not-leak" not in str(value)
    assert value["files"] == ["note.txt"]
    assert value["cwd"] != os.getcwd() and value["env"]["HOME"] == value["cwd"]
    for _ in range(250):  # the folder is removed right after the job (off the call's path)
        if not Path(value["cwd"]).exists():
            break
        await asyncio.sleep(0.02)
    assert not Path(value["cwd"]).exists()


async def test_state_does_not_leak_from_one_call_to_the_next():
    await run(None, "import json\njson.dumps = None\nimport builtins\nbuiltins.leak = 1")
    assert (await run(None, "import json, builtins\nreturn [json.dumps([1]), hasattr(builtins, 'leak')]")
            ).outputs == {"output": ["[1]", False]}


async def test_the_servers_packages_are_not_importable():
    message = await failure(None, "import nodeflow_app")
    assert message.startswith("line 1: ModuleNotFoundError: No module named 'nodeflow_app'")


async def test_exiting_without_a_result_is_reported():
    message = await failure(None, "import os\nos._exit(3)")
    assert message == "the code stopped without a result (exit status 3)"


@pytest.mark.parametrize("data, message", [
    ({"code": "   "}, "parameter 'code' is empty"),
    ({"time_limit": 0}, "parameter 'time_limit' must be a number from 0.1 to 300, got 0"),
    ({"memory_mb": "lots"}, "parameter 'memory_mb' must be a number from 64 to 8192, got 'lots'"),
])
async def test_bad_parameters_are_named(data, message):
    with pytest.raises(NodeError, match=message):
        await executor.execute({**definition.defaults(), **data}, {"input": 1}, ctx())


async def test_an_input_that_is_not_json_is_refused():
    assert (await failure(float("nan"), "return 1")).startswith("the input cannot be given to the code as JSON")


async def test_a_cancelled_call_kills_its_worker_at_once():
    pool = WorkerPool(size=0)
    taken = []
    take = pool._take
    pool._take = lambda: taken.append(take()) or taken[-1]
    task = asyncio.ensure_future(pool.run("while True:\n    pass", None, Limits(timeout=30)))
    await asyncio.sleep(0.3)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert taken[0].process.returncode == -9
    pool.close()


SLEEPER = "import time\nstart = time.time()\ntime.sleep(1)\nreturn [start, time.time()]"
LONG_SLEEPER = SLEEPER.replace("sleep(1)", "sleep(2)")


async def test_jobs_run_side_by_side_only_while_their_memory_limits_fit_the_budget():
    """Each job may take its memory limit; together they may not take the server's memory (the audit: 20 jobs,
    20 workers, 3.5 GB). A job over the budget waits, and its time limit starts when it runs."""
    pool = WorkerPool(size=0, memory_mb=512)
    try:
        spans = await asyncio.gather(*(pool.run(LONG_SLEEPER, None, Limits(timeout=3.5, memory_mb=256))
                                       for _ in range(4)))
    finally:
        pool.close()
    # The last two waited ~2 s, then ran ~2 s: within their 3.5 s (1.5 s left for starting a worker on a busy
    # machine), which a time limit started while they waited would not have been.
    spans = [outcome.value for outcome in spans]
    at_once = max(sum(start <= moment < end for start, end in spans) for moment, _ in spans)
    assert at_once == 2
    assert pool.budget.used_mb == 0


async def test_a_job_cancelled_while_it_waits_gives_up_its_turn():
    pool = WorkerPool(size=0, memory_mb=256)
    try:
        first = asyncio.ensure_future(pool.run(SLEEPER, None, Limits(timeout=5, memory_mb=256)))
        await asyncio.sleep(0.1)
        waiting = asyncio.ensure_future(pool.run("return 'waited'", None, Limits(memory_mb=128)))
        behind = asyncio.ensure_future(pool.run("return 'behind'", None, Limits(memory_mb=128)))
        await asyncio.sleep(0.1)
        assert not waiting.done() and not behind.done()
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        assert (await behind).value == "behind" and first.done()
        assert pool.budget.used_mb == 0
    finally:
        pool.close()


async def test_a_job_waiting_on_another_event_loop_is_woken_on_its_own():
    pool = WorkerPool(size=0, memory_mb=256)  # process-wide: runs of several event loops share it
    try:
        first = asyncio.ensure_future(pool.run(SLEEPER, None, Limits(timeout=5, memory_mb=256)))
        await asyncio.sleep(0.1)
        other = await asyncio.to_thread(asyncio.run, pool.run("return 'other loop'", None, Limits(memory_mb=256)))
        assert other.value == "other loop" and first.done()
    finally:
        pool.close()


async def test_a_memory_limit_over_the_whole_budget_is_refused_naming_the_setting(monkeypatch):
    from nodes.data.code import sandbox
    monkeypatch.setenv("NODEFLOW_CODE_MEMORY_MB", "512")
    monkeypatch.setattr(sandbox, "_POOL", None)
    try:
        assert sandbox.pool().budget.total_mb == 512
        message = await failure(None, "return 1", memory_mb=1024)
    finally:
        sandbox.pool().close()
    assert message == ("the memory limit (1024 MB) is more than this server gives all running Code nodes "
                       "together (512 MB, NODEFLOW_CODE_MEMORY_MB); lower it")


async def test_a_warm_call_is_served_by_a_worker_started_before_it():
    pool = WorkerPool(size=1)
    pool.warm()
    waiting = list(pool._idle)
    taken = []
    take = pool._take
    pool._take = lambda: taken.append(take()) or taken[-1]
    try:
        outcome = await pool.run("return input + 1", 1, Limits())
    finally:
        pool.close()
    assert outcome.value == 2
    # No interpreter started on the call's path; what a warm call costs is benchmarks/code_node.py's figure.
    assert len(waiting) == 1 and taken == waiting


async def test_the_sandbox_error_carries_what_was_printed():
    pool = WorkerPool(size=0)
    with pytest.raises(SandboxError) as caught:
        await pool.run("print('a')\nraise ValueError('bad value')", None, Limits())
    assert str(caught.value).startswith("line 2: ValueError: bad value")
    assert caught.value.stdout == "a\n"


# -- isolation (confine.py): no files but the standard library and the scratch folder, no network, no programs --

async def test_the_code_cannot_read_the_servers_files_or_look_at_the_server_process(tmp_path):
    secret = tmp_path / "secret.key"
    secret.write_text("the server's key")
    for code in (f"return open({str(secret)!r}).read()",
                 f"import os\nreturn os.listdir({str(tmp_path)!r})",
                 "import os\nreturn open(f'/proc/{os.getppid()}/environ').read()",
                 f"return open({str(Path(__file__))!r}).read()"):  # the source tree
        message = await failure(None, code)
        assert "PermissionError: [Errno 13] Permission denied" in message, code
        assert "The Code node is isolated" in message


async def test_the_code_has_no_network_not_even_the_local_database(tmp_path):
    connections = []
    server = await asyncio.start_server(lambda r, w: connections.append(w), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        for code in (f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=2)",
                     f"import urllib.request\nurllib.request.urlopen('http://127.0.0.1:{port}/', timeout=2)",
                     "import socket\nsocket.socket(socket.AF_INET, socket.SOCK_DGRAM)",  # UDP (DNS)
                     "import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect('/var/run/postgresql/.s.PGSQL.5432')"):
            message = await failure(None, code)
            assert "Operation not permitted" in message, (code, message)
        await asyncio.sleep(0.1)
        assert connections == []
    finally:
        server.close()


async def test_the_code_cannot_start_programs_or_processes_nor_touch_the_server_process(tmp_path):
    before = os.sched_getaffinity(0), os.getpriority(os.PRIO_PROCESS, 0)
    for code in ("import subprocess\nsubprocess.run(['true'])",
                 "import os\nos.execv('/bin/sh', ['sh'])",
                 "import os\nos.fork()",  # threads only: no child outlives the job, no fork bomb
                 "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"  # clone(CLONE_NEWUSER | SIGCHLD)
                 f"if libc.syscall({CLONE}, 0x10000000 | 17, 0, 0, 0, 0) < 0:\n"
                 "    raise PermissionError(ctypes.get_errno(), 'Operation not permitted')",
                 "import os\nos.kill(os.getppid(), 0)",
                 "import os, fcntl\nr, w = os.pipe()\nfcntl.fcntl(r, fcntl.F_SETOWN, os.getppid())",  # SIGIO
                 "import os\nos.setsid()",
                 "import resource, os\nresource.prlimit(os.getppid(), resource.RLIMIT_CPU, (1, 1))",
                 "import os\nos.sched_setaffinity(os.getppid(), {0})",
                 "import os\nos.setpriority(os.PRIO_PROCESS, os.getppid(), 19)",
                 "import os\nos.memfd_create('outside the memory limit')",
                 "import resource\nresource.setrlimit(resource.RLIMIT_AS, (-1, -1))"):
        message = await failure(None, code)
        assert "Operation not permitted" in message or "not allowed to raise" in message, (code, message)
    assert (os.sched_getaffinity(0), os.getpriority(os.PRIO_PROCESS, 0)) == before  # this process: untouched


async def test_the_code_cannot_change_files_it_cannot_open(tmp_path):
    """Landlock governs opening; permissions, owners, times and truncation by path are refused by seccomp."""
    target = tmp_path / "secret.key"
    target.write_text("key")
    target.chmod(0o600)
    stamp = target.stat()
    for code in (f"import os\nos.chmod({str(target)!r}, 0o666)", f"import os\nos.chown({str(target)!r}, 0, 0)",
                 f"import os\nos.utime({str(target)!r})", f"import os\nos.truncate({str(target)!r}, 0)",
                 f"import os\nos.setxattr({str(target)!r}, 'user.x', b'1')"):
        message = await failure(None, code)
        assert "Operation not permitted" in message, (code, message)
    after = target.stat()
    assert (after.st_mode, after.st_mtime_ns, target.read_text()) == (stamp.st_mode, stamp.st_mtime_ns, "key")


SEGMENT = 200 * 1024 * 1024 + 4096  # a size no other process here asks for
CHECKED = ("import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
           "def checked(result):\n"
           "    if result < 0:\n"
           "        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))\n"
           "    return result\n")


def _segments_of_our_size() -> set[str]:
    """System V shared memory segments of SEGMENT bytes, by id (what ipcs -m lists)."""
    rows = Path("/proc/sysvipc/shm").read_text().splitlines()[1:]
    return {row.split()[1] for row in rows if int(row.split()[3]) == SEGMENT}


async def test_the_code_cannot_keep_memory_outside_its_limit_that_outlives_it():
    """System V shared memory sits outside RLIMIT_AS and stays after the worker is killed (only ipcrm frees it);
    its message queues and semaphores outlive it too. POSIX shared memory and queues are refused by Landlock."""
    before = _segments_of_our_size()
    sysv = (f"sid = checked(libc.shmget(0, ctypes.c_size_t({SEGMENT}), 0o1600))\n"  # IPC_PRIVATE, IPC_CREAT
            "libc.shmat.restype = ctypes.c_void_p\naddress = libc.shmat(sid, None, 0)\n"
            f"ctypes.memset(address, 1, {SEGMENT})\nlibc.shmdt(ctypes.c_void_p(address))",
            "checked(libc.msgget(0, 0o1600))", "checked(libc.semget(0, 1, 0o1600))")
    posix = ("from multiprocessing import shared_memory\nshared_memory.SharedMemory(create=True, size=1 << 20)",
             "checked(libc.mq_open(b'/nodeflow-test', os.O_CREAT | os.O_RDWR, 0o600, None))")
    try:
        for code in sysv:
            message = await failure(None, CHECKED + code)
            assert "PermissionError: [Errno 1] Operation not permitted" in message, (code, message)
        for code in posix:
            message = await failure(None, CHECKED + code)
            assert "PermissionError: [Errno 13] Permission denied" in message, (code, message)
    finally:
        left = _segments_of_our_size() - before
        for segment in left:
            subprocess.run(["ipcrm", "-m", segment], check=False)
    assert left == set()


async def test_the_standard_library_threads_asyncio_and_the_scratch_folder_still_work():
    code = ("import sqlite3, zoneinfo, decimal, csv, hashlib, threading, os, tempfile, datetime, asyncio\n"
            "open('rows.csv', 'w').write('a,b\\n1,2\\n')\n"
            "rows = list(csv.DictReader(open('rows.csv')))\n"
            "os.mkdir('sub'); os.rename('rows.csv', 'sub/rows.csv')\n"
            "thread = threading.Thread(target=lambda: None); thread.start(); thread.join()\n"
            "async def seven():\n    return 7\n"
            "paris = datetime.datetime(2026, 7, 1, 12, tzinfo=zoneinfo.ZoneInfo('Europe/Paris'))\n"
            "return {'rows': rows, 'sql': sqlite3.connect(':memory:').execute('select 6 * 7').fetchone()[0],\n"
            "        'offset': str(paris.utcoffset()), 'sum': str(decimal.Decimal('0.1') + decimal.Decimal('0.2')),\n"
            "        'files': os.listdir('sub'), 'temp': os.path.isdir(tempfile.mkdtemp()), 'async': asyncio.run(seven())}")
    assert (await run(None, code)).outputs["output"] == {
        "rows": [{"a": "1", "b": "2"}], "sql": 42, "offset": "2:00:00", "sum": "0.3", "files": ["rows.csv"],
        "temp": True, "async": 7}


def _worker_with(prelude: str, isolation: str, code: str, tmp_path: Path) -> dict:
    """Run worker.py by hand after `prelude` has changed its confine module (what a system without Landlock does)."""
    import subprocess
    import sys
    worker = Path(__file__).parents[2] / "nodes" / "data" / "code" / "worker.py"
    result = tmp_path / "result.json"
    scratch = tmp_path / "work"
    scratch.mkdir()
    launcher = (f"import sys, runpy; sys.path.insert(0, {str(worker.parent)!r}); import confine; {prelude}; "
                f"sys.argv = [{str(worker)!r}, {str(result)!r}, '--isolation={isolation}']; "
                f"runpy.run_path({str(worker)!r}, run_name='__main__')")
    job = json.dumps({"code": code, "input": None, "memory_mb": 256, "cpu_seconds": 5})
    subprocess.run([sys.executable, "-I", "-S", "-c", launcher], input=job.encode(), cwd=scratch, check=True,
                   timeout=30, env={"PATH": "/usr/bin:/bin"})
    return json.loads(result.read_text())


def test_where_the_worker_cannot_be_isolated_it_refuses_the_job_naming_the_switch(tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("readable")
    without_landlock = "confine._CREATE_RULESET = 1_000_000"  # no such system call: what an old kernel answers
    answer = _worker_with(without_landlock, "required", f"return open({str(outside)!r}).read()", tmp_path)
    assert answer["ok"] is False
    assert answer["error"].startswith("the Code node cannot run on this server: it cannot be isolated "
                                      "(Landlock is not available on this kernel (Function not implemented;")
    assert "NODEFLOW_CODE_ISOLATION=off" in answer["error"]


def test_with_isolation_switched_off_the_code_runs_unconfined(tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("readable")
    answer = _worker_with("confine._CREATE_RULESET = 1_000_000", "off", f"return open({str(outside)!r}).read()",
                          tmp_path)
    assert answer == {"ok": True, "value": "readable"}


async def test_the_install_switch_reaches_new_workers(tmp_path, monkeypatch):
    outside = tmp_path / "outside.txt"
    outside.write_text("readable")
    monkeypatch.setenv("NODEFLOW_CODE_ISOLATION", "off")
    pool = WorkerPool(size=0)
    try:
        assert (await pool.run(f"return open({str(outside)!r}).read()", None, Limits())).value == "readable"
    finally:
        pool.close()


# -- the example graph, through the CLI -----------------------------------------------------------

#   Start --> Score orders (Code) --> Report
def test_the_example_graph_runs_through_the_cli(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("REFLEX_DB_URL", f"sqlite:///{tmp_path / 'runs.db'}")
    assert main(["run", str(EXAMPLES / "code.json"), "--json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
    outputs = lines[-1]["outputs"]
    assert outputs["Score orders"] == {
        "output": {"big": [2, 3], "by_country": {"FR": 2, "DE": 1}, "revenue": 225},
        "console": {"stdout": "2 of 3 orders are big\n", "stderr": ""}}
    assert outputs["Report"]["output"]["summary"] == "225 in revenue"


#   Start --> Code      (the chat's step card for the Code node shows what it printed)
async def test_the_step_card_shows_what_the_code_printed():
    from nodeflow_app.chat.adapter import MessageBuilder
    from nodeflow_app.runtime.engine import start_run
    from nodes._registry import default_registry

    graph = {"id": "g", "name": "g", "nodes": [
        {"id": "start", "type": "manual-trigger", "name": "Start", "data": {}},
        {"id": "code", "type": "code", "name": "Shout", "data": {"code": "print('HELLO', input)\nreturn 1"}}],
        "edges": [{"id": "e", "source": "start", "sourceHandle": "output", "target": "code", "targetHandle": "input",
                   "data": {"channel": "flow"}}]}
    run = start_run(graph, default_registry(), payload="there")
    builder = MessageBuilder()
    async for event in run.events():
        builder.consume(event)
    card = next(b for b in builder.snapshot() if b["type"] == "flow_step" and b["node_id"] == "code")
    assert card["status"] == "completed"
    assert '"stdout": "HELLO there\\n"' in card["detail"]


async def test_a_large_input_crosses_the_boundary():
    rows = [{"id": n, "text": "x" * 50} for n in range(20000)]  # ~1.3 MB of JSON, more than a pipe holds
    result = await run(rows, "return {'count': len(items), 'last': items[-1]['id']}")
    assert result.outputs == {"output": {"count": 20000, "last": 19999}}


async def test_without_pidfd_a_thread_waits_for_the_worker(monkeypatch):
    monkeypatch.delattr("os.pidfd_open")
    pool = WorkerPool(size=0)
    try:
        assert (await pool.run("return 7", None, Limits())).value == 7
        with pytest.raises(SandboxError, match="did not finish within 0.3 s"):
            await pool.run("while True: pass", None, Limits(timeout=0.3))
    finally:
        pool.close()


async def test_a_closed_pool_leaves_no_worker_or_folder_behind():
    pool = WorkerPool(size=2)
    pool.warm()
    folders = [worker.folder for worker in pool._idle]
    await pool.run("return 1", None, Limits())
    pool.close()
    await asyncio.sleep(0.3)  # the replacement thread runs after close: it must not start a worker
    assert pool._idle == []
    assert not any(folder.exists() for folder in folders)


async def test_a_lone_surrogate_in_the_result_reads_back_as_itself():
    assert (await run(None, "return {'text': 'a\\ud800b'}")).outputs["output"] == {"text": "a\ud800b"}
