"""Where documents come from: files under the data folder's `uploads/`, and URLs through the SSRF guard.

A graph may name files only inside `<data>/uploads/` (the Knowledge page stores uploads there): a path
that leaves it (`..`, a symlink, an absolute path elsewhere) is refused, so a graph cannot read the server.
"""

from __future__ import annotations

from pathlib import Path

from nodeflow_app.contract import NodeError
from nodeflow_app.knowledge.readers import guess_format
from nodeflow_app.settings import data_dir

MAX_BYTES = 50 * 1024 * 1024
MAX_FILES = 10_000
FETCH_TIMEOUT_S = 30.0
MAX_REDIRECTS = 5


def uploads_dir() -> Path:
    folder = data_dir() / "uploads"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    return folder


def upload_path(relative: str) -> Path:
    """`relative` resolved inside the uploads folder, or a clear error."""
    root = uploads_dir().resolve()
    path = (root / relative.strip().lstrip("/")).resolve()
    if path != root and root not in path.parents:
        raise NodeError(f"path {relative!r} leaves the uploads folder: files must be under {root}")
    if not path.exists():
        raise NodeError(f"no file or folder {relative!r} in the uploads folder ({root})")
    return path


def files_in(folder: Path) -> list[Path]:
    """Readable files of a folder (recursively, sorted), those of a known format only."""
    files = sorted(p for p in folder.rglob("*") if p.is_file() and guess_format(p.name))
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
