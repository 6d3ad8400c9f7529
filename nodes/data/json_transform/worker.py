"""JSON Transform's evaluator: a process that evaluates JSONata requests one after another, within a memory limit.

Started by sandbox.py as `python -I worker.py <memory MB> <result limit in bytes>` with a clean environment. Each
request is one line of JSON on stdin, `{"expression", "value", "each", "time_limit_ms"}` (`each`: `value` is the
list of items); each answer one line on stdout, `{"ok": true, "value"}` or `{"ok": false, "error"}`, with
`"retire": true` when the process exits after it (it ran out of memory, or holds more than RETIRE_MB since).
"""

import json
import os
import resource
import sys

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..")))  # the repository

from nodes.data.json_transform.evaluation import transform, transform_each  # noqa: E402
from nodeflow_app.contract import NodeError  # noqa: E402

RETIRE_MB = 256  # after an answer, a process holding more than this is replaced (Python keeps a grown heap)


def main() -> None:
    memory_mb, result_limit = int(sys.argv[1]), int(sys.argv[2])
    resource.setrlimit(resource.RLIMIT_AS, (memory_mb * 1024 * 1024,) * 2)
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    for line in sys.stdin.buffer:
        answer = _answer(line, memory_mb)
        answer.setdefault("retire", _resident_mb() > RETIRE_MB)
        try:
            text = json.dumps(answer).encode()
        except MemoryError:
            answer = {"ok": False, "retire": True, "error": _out_of_memory(memory_mb)}
            text = json.dumps(answer).encode()
        if len(text) > result_limit:
            text = json.dumps({"ok": False, "retire": answer["retire"],
                               "error": f"the result is {len(text) // 1024 // 1024} MB of JSON; the limit is "
                                        f"{result_limit // 1024 // 1024} MB"}).encode()
        sys.stdout.buffer.write(text + b"\n")
        sys.stdout.buffer.flush()
        if answer["retire"]:
            break


def _answer(line: bytes, memory_mb: int) -> dict:
    try:
        request = json.loads(line)
        run = transform_each if request["each"] else transform
        return {"ok": True, "value": run(request["expression"], request["value"], request["time_limit_ms"])}
    except NodeError as error:
        return {"ok": False, "error": str(error)}
    except MemoryError:
        return {"ok": False, "retire": True, "error": _out_of_memory(memory_mb)}
    except Exception as error:  # noqa: BLE001 - e.g. an input nested too deeply to read back
        return {"ok": False, "error": f"expression error: {type(error).__name__}: {error}"}


def _out_of_memory(memory_mb: int) -> str:
    return f"the expression needed more than its {memory_mb} MB of memory and was stopped"


def _resident_mb() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // (1024 * 1024)


if __name__ == "__main__":
    main()
