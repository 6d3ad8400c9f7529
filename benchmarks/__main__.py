"""Run every benchmark module in this folder (`make bench`): `python -m benchmarks [NAME ...] [--quick]`.

A module takes part when its name does not start with `_` and it defines `main(argv) -> int`; options
(anything starting with `-`) go to every module, plain words pick modules by name.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path


def discover() -> list[str]:
    """Benchmark module names, sorted (private helpers `_*` left out)."""
    folder = Path(__file__).resolve().parent
    return sorted(m.name for m in pkgutil.iter_modules([str(folder)]) if not m.name.startswith("_"))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    wanted = [a for a in argv if not a.startswith("-")]
    options = [a for a in argv if a.startswith("-")]
    names = discover()
    unknown = sorted(set(wanted) - set(names))
    if unknown:
        print(f"no benchmark named {', '.join(unknown)} (have: {', '.join(names)})", file=sys.stderr)
        return 2
    failed = []
    for name in wanted or names:
        module = importlib.import_module(f"benchmarks.{name}")
        if not callable(getattr(module, "main", None)):
            continue
        print(f"== benchmarks.{name}", flush=True)
        if module.main(options) != 0:
            failed.append(name)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
