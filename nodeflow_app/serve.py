"""`make run`: serve the production build on one port, building the front end only when its sources changed.

`reflex run --env prod` deletes and rebuilds the front end on every start (~20 s here). This runs the
same two steps Reflex does, with a cache in between:

1. The build key: a hash of everything the compiled front end is made from (the app's and the nodes'
   Python, assets/, reflex.lock/, rxconfig.py), the Reflex version and the port (the bundle holds
   the backend URL). The same key beside the build in `.web/build/`: skip step 2.
2. `reflex export --frontend-only --no-zip --env prod` (compile + Vite build), then the key is written.
3. Reflex's production backend (Granian, no reload) serves the API, the websocket and the built
   pages on the one port, exactly as `reflex run --env prod` does after its build.

Usage: python -m nodeflow_app.serve [--port 3000] [--host 0.0.0.0] [--rebuild]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

from nodeflow_app.settings import APP_ROOT

# What the compiled front end is made from. Any Python of the app counts (a state var's default or a
# component lives anywhere in it); tests, docs, data and benchmarks do not.
SOURCE_DIRS = ("nodeflow_app", "nodes", "assets", "reflex.lock")
SOURCE_FILES = ("rxconfig.py",)
SKIP_SUFFIXES = (".pyc",)
# Config overrides that end up in the bundle (URLs it calls, where it is mounted, how it connects).
FRONTEND_ENV = ("REFLEX_API_URL", "REFLEX_DEPLOY_URL", "REFLEX_FRONTEND_PATH", "REFLEX_TRANSPORT")
# Inside build/, which every Reflex build deletes first: a build made by anything else (`reflex run
# --env prod`, the e2e server) drops the key with it, so it is never mistaken for ours.
KEY_NAME = "build/nodeflow-build.key"


def web_dir() -> Path:
    """Reflex's front-end folder: `.web`, or REFLEX_WEB_WORKDIR (relative to the app root)."""
    return APP_ROOT / os.environ.get("REFLEX_WEB_WORKDIR", ".web")


def _source_files(root: Path) -> list[Path]:
    files = [root / name for name in SOURCE_FILES if (root / name).is_file()]
    for folder in SOURCE_DIRS:
        files += [p for p in (root / folder).rglob("*")
                  if p.is_file() and "__pycache__" not in p.parts and not p.name.endswith(SKIP_SUFFIXES)]
    return sorted(files)


def build_key(root: Path, port: int) -> str:
    """The hash of the front end's sources, the Reflex version, the port and the config overrides in the bundle."""
    settings = [f"reflex {metadata.version('reflex')}", f"port {port}",
                *(f"{name}={os.environ.get(name, '')}" for name in FRONTEND_ENV)]
    digest = hashlib.sha256("\n".join(settings).encode() + b"\0")
    for path in _source_files(root):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def build_is_current(key: str, web: Path) -> bool:
    """A build is in `web` and it was made from the sources the key describes."""
    key_file = web / KEY_NAME
    return (web / "build" / "client" / "index.html").is_file() and key_file.is_file() \
        and key_file.read_text().strip() == key


def _port_env(port: int) -> dict[str, str]:
    """Front end and backend on one port; the bundle's backend URL names it (the browser keeps its own host)
    unless REFLEX_API_URL says otherwise (behind a proxy)."""
    return {"REFLEX_FRONTEND_PORT": str(port), "REFLEX_BACKEND_PORT": str(port),
            "REFLEX_API_URL": os.environ.get("REFLEX_API_URL") or f"http://localhost:{port}"}


def build_frontend(port: int) -> None:
    """Compile the app and build the production front end into .web/build/client (Reflex's own export)."""
    command = [sys.executable, "-m", "reflex", "export", "--frontend-only", "--no-zip", "--env", "prod"]
    env = {**os.environ, **_port_env(port)}
    completed = subprocess.run(command, cwd=APP_ROOT, env=env, stdin=subprocess.DEVNULL, check=False)
    if completed.returncode != 0:
        raise SystemExit(f"Building the front end failed (exit {completed.returncode}); see the output above.")


def serve(host: str, port: int) -> None:
    """Reflex's production backend with the built front end mounted on the same port; never reloads."""
    os.environ.update(_port_env(port))
    from reflex_base import constants
    from reflex_base.config import get_config
    from reflex_base.environment import environment
    from reflex.utils import exec as reflex_exec

    environment.REFLEX_ENV_MODE.set(constants.Env.PROD)
    environment.REFLEX_SKIP_COMPILE.set(True)  # the export compiled it; the backend only imports the app
    get_config()._set_persistent(frontend_port=port, backend_port=port)
    print(f"NodeFlow running at http://localhost:{port}/", flush=True)
    reflex_exec.run_backend_prod(host, port, get_config().loglevel.subprocess_level(),
                                 mount_frontend_compiled_app=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nodeflow_app.serve", description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=3000)
    parser.add_argument("--host", default="0.0.0.0")
    parser.add_argument("--rebuild", action="store_true", help="build the front end even if it looks current")
    args = parser.parse_args(argv)
    os.chdir(APP_ROOT)
    key, web = build_key(APP_ROOT, args.port), web_dir()
    if args.rebuild or not build_is_current(key, web):
        started = time.monotonic()
        print("Building the front end (it changed since the last build) ...", flush=True)
        (web / KEY_NAME).unlink(missing_ok=True)  # a failed build must not leave an old key behind
        build_frontend(args.port)
        (web / KEY_NAME).write_text(key + "\n")
        print(f"Front end built in {time.monotonic() - started:.1f} s.", flush=True)
    else:
        print("Front end unchanged since the last build: serving it as is.", flush=True)
    serve(args.host, args.port)
    return 0


if __name__ == "__main__":
    sys.exit(main())
