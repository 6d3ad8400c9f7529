"""Where documents come from: the workspace's uploaded files, and URLs through the SSRF guard.

Each workspace has its own uploads folder, `<data>/uploads/<workspace>/` (the Knowledge page keeps a
collection's files in `<collection>/` inside it). A graph may name files only inside its run's workspace
folder: a path that leaves it (`..`, a symlink, an absolute path elsewhere) is refused, so a graph cannot
read the server or another workspace's documents.
"""

from __future__ import annotations

import logging
import re
import threading
from pathlib import Path

from nodeflow_app.contract import NodeError
from nodeflow_app.knowledge.collections import check_name
from nodeflow_app.knowledge.readers import guess_format
from nodeflow_app.settings import data_dir

log = logging.getLogger(__name__)

MAX_BYTES = 50 * 1024 * 1024
MAX_FILES = 10_000
FETCH_TIMEOUT_S = 30.0
MAX_REDIRECTS = 5
DEFAULT_WORKSPACE = "default"
WORKSPACE_ID = re.compile(r"[0-9a-f]{16}")  # nodeflow_app/store/accounts.py's workspace ids
UPLOADS_FOLDER = "uploads"


def uploads_dir(workspace: str = DEFAULT_WORKSPACE, *, create: bool = True) -> Path:
    """The workspace's uploads folder (created when `create`)."""
    root = data_dir() / UPLOADS_FOLDER
    _adopt_shared_uploads(root)
    folder = root / check_name(workspace)
    if create:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    return folder


def upload_path(relative: str, workspace: str = DEFAULT_WORKSPACE) -> Path:
    """`relative` resolved inside the workspace's uploads folder, or a clear error."""
    root = uploads_dir(workspace, create=False).resolve()
    path = (root / relative.strip().lstrip("/")).resolve()
    if path != root and root not in path.parents:
        raise NodeError(f"path {relative!r} leaves the workspace's uploads folder: files must be under {root}")
    try:
        exists = path.exists()
    except OSError as error:  # a name the system refuses (too long, say): its message would quote the whole path
        raise NodeError(f"path {_shortened(relative)} cannot name a file: {error.strerror}") from None
    if not exists:
        raise NodeError(f"no file or folder {relative!r} in the workspace's uploads folder ({root})")
    return path


def _shortened(text: str) -> str:
    return repr(text if len(text) <= 80 else text[:79] + "…")


# Uploads used to be kept per collection for every workspace at once (`uploads/<collection>/`). Each such
# folder moves, once, into the workspace that has a collection of that name (into "default", where runs before
# accounts kept their knowledge, when none has); with several candidates it stays and the log says so.
_adopted: set[Path] = set()
_adopt_lock = threading.Lock()


def _adopt_shared_uploads(root: Path) -> None:
    with _adopt_lock:
        if root in _adopted or not root.is_dir():
            _adopted.add(root)
            return
        _adopted.add(root)
        knowledge = root.parent / "knowledge"
        workspaces = {p.name for p in knowledge.iterdir() if p.is_dir()} if knowledge.is_dir() else set()
        for folder in sorted(root.iterdir()):
            name = folder.name
            if (not folder.is_dir() or folder.is_symlink() or name == DEFAULT_WORKSPACE or name in workspaces
                    or WORKSPACE_ID.fullmatch(name)):
                continue  # a workspace's own folder
            owners = sorted(w for w in workspaces if (knowledge / w / f"{name}.json").exists())
            if len(owners) > 1:
                log.warning("uploads/%s: collections named %r exist in workspaces %s; move the folder into the "
                            "right uploads/<workspace>/ by hand", name, name, ", ".join(owners))
                continue
            target = root / (owners[0] if owners else DEFAULT_WORKSPACE) / name
            if target.exists():
                log.warning("uploads/%s: %s already exists; move the folder by hand", name, target)
                continue
            target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            folder.rename(target)
            log.info("uploads/%s moved to %s (uploads are kept per workspace)", name, target)


def files_in(folder: Path) -> list[Path]:
    """Readable files of a folder (recursively, sorted), those of a known format only; a link to a file elsewhere
    is not one of them (a folder's files stay inside it, as `upload_path` keeps a path inside the uploads)."""
    inside = folder.resolve()
    files = sorted(p for p in folder.rglob("*")
                   if p.is_file() and guess_format(p.name) and inside in p.resolve().parents)
    if len(files) > MAX_FILES:
        raise NodeError(f"{folder} holds {len(files)} files; at most {MAX_FILES} are read at once")
    return files


def read_file(path: Path) -> bytes:
    size = path.stat().st_size
    if size > MAX_BYTES:
        raise NodeError(f"{path.name} is {size // 1_048_576} MB; the limit is {MAX_BYTES // 1_048_576} MB")
    return path.read_bytes()


async def fetch(url: str) -> tuple[bytes, str, str]:
    """(body, content type, final URL) of a GET; every hop passes the SSRF guard; stops at MAX_BYTES."""
    import httpx

    from nodeflow_app.net.guard import check_url, guarded_client  # the one SSRF guard (docs/security.md)

    # The client checks each address again when it connects (a name that resolves differently the second time).
    async with guarded_client(timeout=httpx.Timeout(FETCH_TIMEOUT_S, connect=5.0), follow_redirects=False,
                              headers={"User-Agent": "NodeFlow-document-loader/1"}) as client:
        for _ in range(MAX_REDIRECTS + 1):
            try:
                await check_url(url)
            except ValueError as error:
                raise NodeError(str(error)) from None
            try:
                async with client.stream("GET", url) as response:
                    if response.is_redirect and "location" in response.headers:
                        url = str(response.url.join(response.headers["location"]))
                        continue
                    if response.status_code >= 400:
                        raise NodeError(f"GET {url}: HTTP {response.status_code} {response.reason_phrase}")
                    body = bytearray()
                    async for part in response.aiter_bytes():
                        body += part
                        if len(body) > MAX_BYTES:
                            raise NodeError(f"GET {url}: larger than {MAX_BYTES // 1_048_576} MB")
                    return bytes(body), response.headers.get("content-type", ""), url
            except httpx.HTTPError as error:
                raise NodeError(f"GET {url} failed: {error or type(error).__name__}") from None
    raise NodeError(f"GET {url}: more than {MAX_REDIRECTS} redirects")
