"""The Code node's worker: a separate Python process that runs one job of user code and exits.

Started by sandbox.py as `python -I -S -u worker.py <result file> --isolation=required|off` with a clean environment, its
working directory a fresh scratch folder and stdout/stderr going to files (unbuffered, so what was
printed before a kill at the time limit is kept). Standard library only (`-S`: no site-packages),
so nothing of NodeFlow and none of its dependencies is importable here.

1. Open the result file, then confine this process (confine.py: no network, no programs, no files
   but the standard library and the scratch folder) unless started with `--isolation=off`.
2. Wait for the job on stdin: `{"code", "input", "memory_mb", "cpu_seconds"}` (JSON, one line).
3. Apply the limits (address space, CPU seconds, file size) to this process.
4. Compile the user's code as the body of `def main(input, items)`, keeping the user's line
   numbers, so a top-level `return` gives the result and errors point at the user's lines.
5. Run it; write `{"ok": true, "value"}` or `{"ok": false, "error"}` to the result file; exit.
"""

import ast
import json
import linecache
import os
import resource
import sys
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # -I leaves this folder off the path
import confine  # noqa: E402

del sys.path[0]  # the user's `import` sees the standard library only

FILENAME = "<code>"
FILE_LIMIT = 64 * 1024 * 1024  # bytes any single file (stdout included) may grow to
FILE_HANDLES = 256  # open files at once

# Taken before the user's code runs: it may replace `json.dumps`, `open` or `os._exit` for itself.
_dumps, _open, _exit, _flush_out, _flush_err = json.dumps, open, os._exit, sys.stdout.flush, sys.stderr.flush


def main() -> None:
    result_path, isolation = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "--isolation=required"
    # Opened before confinement: its folder is out of reach after. A lone surrogate in the result (it can only sit
    # inside a JSON string) is written as its JSON escape, which reads back as the same text.
    result = _open(result_path, "w", encoding="utf-8", errors="backslashreplace")
    refusal = None if isolation == "--isolation=off" else _confine()
    line = sys.stdin.readline()
    if not line:  # the server went away before giving a job
        os._exit(0)
    job = json.loads(line)
    _limit(job["memory_mb"], job["cpu_seconds"])
    try:
        if refusal:
            raise _UserError(refusal)
        outcome = {"ok": True, "value": _run(job["code"], job["input"])}
        text = _dumps(outcome, ensure_ascii=False, allow_nan=False)
    except _UserError as error:
        text = _dumps({"ok": False, "error": str(error)})
    except MemoryError:
        text = _dumps({"ok": False, "error": f"the code ran out of memory (limit {job['memory_mb']} MB)"})
    _flush_out()
    _flush_err()
    result.write(text)
    result.close()
    _exit(0)  # skip interpreter teardown: the process is thrown away anyway


_isolated = False  # set once confined: a PermissionError of the user's code then gets ISOLATION_HINT
ISOLATION_HINT = ("(The Code node is isolated: no network, no programs, no other processes, and on disk only the "
                  "standard library and its own scratch folder. An HTTP Request node reaches the network.)")


class _UserError(Exception):
    """A failure of the user's code, worded for the step card."""


def _confine() -> str | None:
    """Confine this process to its scratch folder; or, where the system cannot, why jobs are refused."""
    global _isolated
    try:
        confine.confine(os.getcwd())
    except confine.Unavailable as error:
        return (f"the Code node cannot run on this server: it cannot be isolated ({error}). Without isolation "
                "the code could read the server's files and reach its network; an admin can allow that with "
                "NODEFLOW_CODE_ISOLATION=off (docs/security.md)")
    _isolated = True
    return None


def _limit(memory_mb: int, cpu_seconds: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (memory_mb * 1024 * 1024,) * 2)
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_LIMIT, FILE_LIMIT))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NOFILE, (FILE_HANDLES, FILE_HANDLES))


def _compile(code: str):
    """The user's code as the body of `main(input, items)`, line numbers unchanged."""
    linecache.cache[FILENAME] = (len(code), None, code.splitlines(True), FILENAME)  # tracebacks quote lines
    try:
        module = ast.parse(code, FILENAME)
        body = module.body or [ast.Pass()]
        arguments = ast.arguments(posonlyargs=[], args=[ast.arg("input"), ast.arg("items")], kwonlyargs=[],
                                  kw_defaults=[], defaults=[])
        function = ast.FunctionDef(name="main", args=arguments, body=body, decorator_list=[], returns=None,
                                   type_comment=None)
        wrapper = ast.Module(body=[function], type_ignores=[])
        ast.fix_missing_locations(wrapper)
        namespace: dict = {"__name__": "__code__"}
        exec(compile(wrapper, FILENAME, "exec"), namespace)  # defines main(); runs none of the user's code
    except SyntaxError as error:
        raise _UserError(_syntax_message(error)) from None
    except (RecursionError, MemoryError, ValueError) as error:
        raise _UserError(f"the code cannot be compiled: {type(error).__name__}: {error}") from None
    return namespace["main"]


def _syntax_message(error: SyntaxError) -> str:
    where = f"line {error.lineno}" + (f", column {error.offset}" if error.offset else "")
    message = f"syntax error on {where}: {error.msg}"
    if error.text:
        pointer = " " * max((error.offset or 1) - 1, 0) + "^"
        message += f"\n    {error.text.rstrip()}\n    {pointer}"
    return message


def _run(code: str, value):
    main_function = _compile(code)
    try:
        result = main_function(value, value if isinstance(value, list) else None)
    except MemoryError:
        raise
    except BaseException as error:  # noqa: BLE001 - SystemExit and KeyboardInterrupt are user errors too
        raise _UserError(_runtime_message(error)) from None
    problem = _json_problem(result, "the result")
    if problem:
        raise _UserError(problem)
    return result


def _runtime_message(error: BaseException) -> str:
    """`line N: Type: message`, then the user's own frames of the traceback (not the worker's)."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == FILENAME]
    head = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    if isinstance(error, PermissionError) and _isolated:
        head += "\n" + ISOLATION_HINT
    if not frames:
        return head
    lines = [f"line {frames[-1].lineno}: {head}", f"    {(frames[-1].line or '').strip()}"]
    if len(frames) > 1:
        lines.append("Traceback (your code):")
        for frame in frames:
            where = "top level" if frame.name == "main" else f"in {frame.name}()"
            lines.append(f"  line {frame.lineno}, {where}: {(frame.line or '').strip()}")
    return "\n".join(lines)


_MAX_INT_BITS = 14_280  # under 10 ** 4299: what int-to-text conversion takes without sys.set_int_max_str_digits


def _json_problem(value, where: str, depth: int = 0):
    """Why `value` is not plain JSON (naming where inside the result), or None."""
    if depth > 200:
        return f"{where} is nested more than 200 levels deep"
    if value is None or isinstance(value, (bool, str)):
        return None
    if isinstance(value, int):  # JSON text of a whole number over ~4,300 digits is refused by Python's int limit
        return None if value.bit_length() <= _MAX_INT_BITS else \
            f"{where} is a whole number of about {value.bit_length() * 0.30103:,.0f} digits; return it as text (str(...))"
    if isinstance(value, float):
        return None if value == value and value not in (float("inf"), float("-inf")) else \
            f"{where} is {value}, which JSON cannot hold"
    if isinstance(value, list):
        for index, item in enumerate(value):
            problem = _json_problem(item, f"{where}[{index}]", depth + 1)
            if problem:
                return problem
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"{where} has the key {key!r} ({type(key).__name__}); JSON object keys must be strings"
            problem = _json_problem(item, f"{where}[{key!r}]", depth + 1)
            if problem:
                return problem
        return None
    return (f"{where} is a {type(value).__name__}, which is not JSON; return a dict, list, str, int, "
            "float, bool or None (e.g. list(...) for a set or tuple)")


if __name__ == "__main__":
    main()
