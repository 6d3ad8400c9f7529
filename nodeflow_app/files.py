"""Files nodes produce or consume, stored once by content per workspace in `<data>/files/<workspace>/<sha256>` and
passed by reference.

A reference is `{file_id, name, content_type, size}`: graph data, run records and the browser carry that,
never the bytes. The same content is stored once per workspace whatever its name. A reference opens only in the
workspace that stored it: a file id read in another workspace's run records (by a viewer, or someone who left)
opens nothing elsewhere. Runs without a workspace (the CLI before accounts) use "default". The folders are
private (0700, files 0600).

The quota is counted as the bytes come: each write reserves room for each chunk under one lock, together with
the other writes going on, so writes at the same moment cannot pass it together (`Reservation`; the Knowledge
page's uploads count their own folder, `uploads/<workspace>/`, the same way). That count is per process: with
several server processes, each counts only its own writes in progress (the files they have stored count for all).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
import stat
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, AsyncIterator

from nodeflow_app.contract import NodeError
from nodeflow_app.settings import data_dir

FILES_FOLDER = "files"
DEFAULT_WORKSPACE = "default"
# What one workspace may keep in stored files (one run could otherwise fill the disk every workspace shares).
QUOTA_ENV = "NODEFLOW_FILES_QUOTA_GB"
DEFAULT_QUOTA_GB = 10.0
INCOMING = ".incoming-"  # a file being written; renamed to its content's digest once whole
# A partial file as tempfile names it (8 characters after the prefix): an upload's own name has an extension.
_PARTIAL = re.compile(r"\.incoming-[a-z0-9_]{8}")
_FILE_ID = re.compile(r"^[0-9a-f]{64}$")
_WORKSPACE = re.compile(r"[A-Za-z0-9_-]{1,64}")


def workspace_of(services: Any) -> str:
    """The workspace whose files a run uses: its services' `workspace_id`, else "default"."""
    return str((services or {}).get("workspace_id") or DEFAULT_WORKSPACE)


def files_dir(workspace: str = DEFAULT_WORKSPACE, *, create: bool = True) -> Path:
    """The workspace's folder of stored files."""
    if not _WORKSPACE.fullmatch(workspace):
        raise NodeError(f"no files folder for workspace {workspace[:40]!r}")
    folder = data_dir() / FILES_FOLDER / workspace
    if create:
        folder.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        folder.mkdir(mode=0o700, exist_ok=True)
    return folder


async def store_stream(chunks: AsyncIterator[bytes], name: str, content_type: str, max_bytes: int,
                       workspace: str = DEFAULT_WORKSPACE) -> dict[str, Any]:
    """Write `chunks` to the workspace's store (refusing more than `max_bytes`) and return the file's reference."""
    folder = files_dir(workspace)
    digest, size = hashlib.sha256(), 0
    with Reservation(folder) as room:
        fd, temp = tempfile.mkstemp(dir=folder, prefix=INCOMING)
        try:
            with os.fdopen(fd, "wb") as file:
                async for chunk in chunks:
                    size += len(chunk)
                    if size > max_bytes:
                        raise NodeError(f"the file {name!r} is larger than {max_bytes // (1024 * 1024)} MB")
                    room.take(len(chunk), name)
                    digest.update(chunk)
                    file.write(chunk)
            file_id = digest.hexdigest()
            room.keep(temp, folder / file_id)  # same content, same name: storing it again changes nothing
        finally:
            if os.path.exists(temp):
                os.unlink(temp)
    return {"file_id": file_id, "name": name, "content_type": content_type, "size": size}


def store_bytes(content: bytes, name: str, content_type: str, workspace: str = DEFAULT_WORKSPACE) -> dict[str, Any]:
    """Store `content` in the workspace's store and return its reference (for small files already in memory)."""
    file_id = hashlib.sha256(content).hexdigest()
    path = files_dir(workspace) / file_id
    try:
        os.utime(path)  # stored again just now: the sweep of unreferenced files leaves it for a while
    except FileNotFoundError:
        with Reservation(path.parent) as room:
            room.take(len(content), name)
            fd, temp = tempfile.mkstemp(dir=path.parent, prefix=INCOMING)
            try:
                with os.fdopen(fd, "wb") as file:
                    file.write(content)
                room.keep(temp, path)
            finally:
                if os.path.exists(temp):
                    os.unlink(temp)
    return {"file_id": file_id, "name": name, "content_type": content_type, "size": len(content)}


@dataclass
class _Room:
    """A workspace folder's count while files are written to it (in this process)."""
    stored: int  # what its stored files held when the last write began, and the files stored since
    writing: int = 0  # the bytes the writes going on have taken so far
    writers: int = 0


_rooms: dict[Path, _Room] = {}
_rooms_lock = threading.Lock()


class Reservation:
    """One write's share of its workspace's quota, taken chunk by chunk (see the module's docstring)."""

    def __init__(self, folder: Path):
        self._folder, self._taken = folder, 0

    def __enter__(self) -> Reservation:
        with _rooms_lock:
            room = _rooms.setdefault(self._folder, _Room(0))
            # Counted again at each start: files deleted meanwhile, or stored by another process. A partial file
            # is left out: this process counts its own in `writing`.
            room.stored = folder_bytes(self._folder, partial=False)
            room.writers += 1
        return self

    def take(self, count: int, name: str) -> None:
        """Room for `count` more bytes, or a NodeError when the quota would pass."""
        with _rooms_lock:
            room = _rooms[self._folder]
            if room.stored + room.writing + count > quota_bytes():
                raise NodeError(_over_quota(name))
            room.writing += count
            self._taken += count

    def give_back(self, count: int) -> None:
        """Room taken for bytes that are not kept after all (a file refused halfway, its partial file deleted)."""
        with _rooms_lock:
            _rooms[self._folder].writing -= count
            self._taken -= count

    def keep(self, temp: str, path: Path) -> None:
        """Put the written file in its place: its bytes now count as stored, less those of the file it replaces
        (the same content stored again adds nothing)."""
        with _rooms_lock:
            room = _rooms[self._folder]
            try:
                replaced = path.lstat().st_size
            except FileNotFoundError:
                replaced = 0
            room.stored += self._taken - replaced
            os.replace(temp, path)
            room.writing -= self._taken
            self._taken = 0

    def __exit__(self, *_exception: Any) -> None:
        with _rooms_lock:
            room = _rooms[self._folder]
            room.writing -= self._taken
            room.writers -= 1
            if not room.writers:
                del _rooms[self._folder]


def quota_bytes() -> int:
    """NODEFLOW_FILES_QUOTA_GB (10 by default) in bytes; a value that is no positive number is a clear error."""
    raw = os.environ.get(QUOTA_ENV, "").strip()
    try:
        quota = float(raw) if raw else DEFAULT_QUOTA_GB
    except ValueError:
        quota = -1.0
    if quota <= 0:
        raise NodeError(f"{QUOTA_ENV} must be a positive number of gigabytes, got {raw!r}")
    return int(quota * 1024 ** 3)


def folder_bytes(folder: Path, *, partial: bool = True) -> int:
    """The size of the files under `folder` (symbolic links not followed; 0 for a folder that is not there);
    without the files being written if not `partial`."""
    total = 0
    for root, _folders, names in os.walk(folder):
        for name in names:
            path = os.path.join(root, name)
            if not os.path.islink(path) and (partial or not _PARTIAL.fullmatch(name)):
                with contextlib.suppress(FileNotFoundError):  # a partial file renamed or deleted meanwhile
                    total += os.lstat(path).st_size
    return total


def _over_quota(name: str) -> str:
    return (f"storing the file {name!r} would pass this workspace's quota of stored files "
            f"({quota_bytes() / 1024 ** 3:g} GB, {QUOTA_ENV}); files no run refers to any more are deleted "
            f"within the hour, or now with `nodeflow housekeep` (runs are kept for NODEFLOW_RUNS_MAX_AGE_DAYS)")


def file_path(reference: Any, where: str = "the file", workspace: str = DEFAULT_WORKSPACE) -> Path:
    """The workspace's stored file a reference (or a bare file id) points at; a NodeError when it is not one."""
    file_id = reference.get("file_id") if isinstance(reference, dict) else reference
    if not isinstance(file_id, str) or not _FILE_ID.fullmatch(file_id):
        raise NodeError(f"{where} must be a file reference {{file_id, name, content_type, size}}, got "
                        f"{str(reference)[:80]!r}")
    path = files_dir(workspace, create=False) / file_id
    if not path.is_file():
        raise NodeError(f"{where}: no stored file {file_id} in this workspace")
    return path


def old_stored_files(last_written_before: float, workspaces: set[str]) -> list[Path]:
    """The stored files of `workspaces` (with "default", also those an older version kept at the top of the
    folder) and interrupted writes, last written before the time: what the sweep may delete."""
    top = data_dir() / FILES_FOLDER
    folders = [top / w for w in sorted(workspaces) if _WORKSPACE.fullmatch(w)]
    folders += [top] if DEFAULT_WORKSPACE in workspaces else []
    folders = [f for f in folders if f.is_dir() and not f.is_symlink()]
    return [path for folder in folders for path in folder.iterdir()
            if _sweepable(path.name) and _written_before(path, last_written_before)]


def delete_unreferenced(paths: list[Path], referenced: set[str], last_written_before: float) -> tuple[int, int]:
    """Delete the files among `paths` no record refers to and still not written again since; (files, bytes)."""
    count = size = 0
    for path in paths:
        if path.name not in referenced:
            removed = _remove_unless_rewritten(path, last_written_before)
            count, size = count + (removed is not None), size + (removed or 0)
    return count, size


def _remove_unless_rewritten(path: Path, last_written_before: float) -> int | None:
    """Delete `path` if it was last written before the time; its size, or None when it stays. It is first moved
    aside and checked there: the same content stored again at that moment (a rename over it) is never lost."""
    aside = path.with_name(f"{INCOMING}{secrets.token_hex(4)}")
    try:
        os.rename(path, aside)
    except FileNotFoundError:  # another process swept it first
        return None
    if _written_before(aside, last_written_before):
        size = aside.lstat().st_size
        aside.unlink()
        return size
    os.replace(aside, path)  # written again meanwhile: the same bytes, put back
    return None


def delete_interrupted_writes(folder: Path, last_written_before: float) -> tuple[int, int]:
    """Delete the partial files a killed process left anywhere under `folder`; (files, bytes)."""
    partials = [Path(root) / name for root, _folders, names in os.walk(folder) for name in names
                if _PARTIAL.fullmatch(name)]
    return delete_unreferenced([p for p in partials if _written_before(p, last_written_before)], set(),
                               last_written_before)


def _sweepable(name: str) -> bool:
    return bool(_FILE_ID.fullmatch(name) or _PARTIAL.fullmatch(name))


def _written_before(path: Path, moment: float) -> bool:
    try:
        info = path.lstat()
    except FileNotFoundError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_mtime < moment
