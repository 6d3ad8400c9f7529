"""Files nodes produce or consume, stored once by content in `<data>/files/<sha256>` and passed by reference.

A reference is `{file_id, name, content_type, size}`: graph data, run records and the browser carry that,
never the bytes. The same content is stored once whatever its name. The folder is private (0700, files 0600).
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from pathlib import Path
from typing import Any, AsyncIterator

from nodeflow_app.contract import NodeError
from nodeflow_app.settings import data_dir

FILES_FOLDER = "files"
_FILE_ID = re.compile(r"^[0-9a-f]{64}$")


def files_dir() -> Path:
    folder = data_dir() / FILES_FOLDER
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    return folder


async def store_stream(chunks: AsyncIterator[bytes], name: str, content_type: str, max_bytes: int) -> dict[str, Any]:
    """Write `chunks` to the store (refusing more than `max_bytes`) and return the file's reference."""
    folder = files_dir()
    digest, size = hashlib.sha256(), 0
    fd, temp = tempfile.mkstemp(dir=folder, prefix=".incoming-")
    try:
        with os.fdopen(fd, "wb") as file:
            async for chunk in chunks:
                size += len(chunk)
                if size > max_bytes:
                    raise NodeError(f"the file {name!r} is larger than {max_bytes // (1024 * 1024)} MB")
                digest.update(chunk)
                file.write(chunk)
        file_id = digest.hexdigest()
        os.replace(temp, folder / file_id)  # same content, same name: storing it again changes nothing
    finally:
        if os.path.exists(temp):
            os.unlink(temp)
    return {"file_id": file_id, "name": name, "content_type": content_type, "size": size}


def store_bytes(content: bytes, name: str, content_type: str) -> dict[str, Any]:
    """Store `content` and return its reference (for small files already in memory)."""
    file_id = hashlib.sha256(content).hexdigest()
    path = files_dir() / file_id
    if not path.exists():
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".incoming-")
        with os.fdopen(fd, "wb") as file:
            file.write(content)
        os.replace(temp, path)
    return {"file_id": file_id, "name": name, "content_type": content_type, "size": len(content)}


def file_path(reference: Any, where: str = "the file") -> Path:
    """The stored file a reference (or a bare file id) points at; a NodeError when it is not one."""
    file_id = reference.get("file_id") if isinstance(reference, dict) else reference
    if not isinstance(file_id, str) or not _FILE_ID.match(file_id):
        raise NodeError(f"{where} must be a file reference {{file_id, name, content_type, size}}, got "
                        f"{str(reference)[:80]!r}")
    path = data_dir() / FILES_FOLDER / file_id
    if not path.is_file():
        raise NodeError(f"{where}: no stored file {file_id}")
    return path
