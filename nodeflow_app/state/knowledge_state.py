"""The Knowledge page's state: the workspace's collections, the chosen one's documents and chunks, uploads, search.

Uploaded files are kept in `<data>/uploads/<workspace>/<collection>/` (so the workspace's graphs can load them
again) and indexed by a
background event that reports each file as it goes. Every store call is wrapped so a failure is a toast
or an inline message, never a crashed handler.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import tempfile
from pathlib import Path, PurePath
from typing import Any, Callable

import reflex as rx

from nodeflow_app.state.page_threads import off_loop
from nodeflow_app.contract import NodeError
from nodeflow_app.files import INCOMING, QUOTA_ENV, Reservation, quota_bytes
from nodeflow_app.knowledge.collections import check_name
from nodeflow_app.knowledge.indexing import index_file, search
from nodeflow_app.knowledge.readers import guess_format
from nodeflow_app.knowledge.sources import MAX_BYTES, uploads_dir
from nodeflow_app.knowledge.workspace import DEFAULT_WORKSPACE, workspace_store
from nodeflow_app.state.access import current
from nodeflow_app.state.access import requires

log = logging.getLogger(__name__)

UPLOAD_ID = "knowledge-upload"
MAX_UPLOAD_FILES = 100  # per drop
MAX_NAME_BYTES = 255  # a file name on Linux and macOS file systems
# A search box's question: any viewer may search, and the whole query is embedded and searched.
MAX_QUERY_CHARS = 2_000
# (workspace, collection) being indexed by this process; read and changed on the event loop only.
_indexing: set[tuple[str, str]] = set()


def _folder(workspace: str, collection: str) -> Path:
    """The folder `upload` keeps `collection`'s files in, resolved: inside the workspace's uploads folder, or a
    NodeError (a name that is no collection's, a folder that is a link elsewhere)."""
    root = uploads_dir(workspace).resolve()
    folder = (root / check_name(collection)).resolve()
    if folder.parent != root:
        raise NodeError(f"the uploads folder of collection {collection!r} leaves the workspace's uploads")
    return folder


def _name_problem(name: str) -> str | None:
    """Why the file system cannot take `name` as a file's name (None when it can)."""
    if "\0" in name:
        return "its name holds a NUL character"
    try:
        size = len(name.encode())
    except UnicodeEncodeError:
        return "its name is not valid text"
    return f"its name is longer than {MAX_NAME_BYTES} bytes" if size > MAX_NAME_BYTES else None


def _uploaded(workspace: str, collection: str, name: Any) -> Path:
    """A file `upload` kept for `collection`: a plain file name of a known format, inside its folder."""
    folder = _folder(workspace, collection)
    if (not isinstance(name, str) or PurePath(name).name != name or guess_format(name) is None
            or _name_problem(name)):
        raise NodeError(f"{name!r} is not a file uploaded to this collection")
    path = (folder / name).resolve()
    if path.parent != folder:
        raise NodeError(f"{name!r} is not a file uploaded to this collection")
    return path


@dataclasses.dataclass
class CollectionRow:
    name: str
    embedding: str
    documents: int
    chunks: int


@dataclasses.dataclass
class DocumentRow:
    source: str
    title: str
    chunks: int


@dataclasses.dataclass
class ChunkRow:
    text: str
    where: str  # "page 2 · chunk 3"
    score: str = ""
    source: str = ""


def _where(metadata: dict[str, Any]) -> str:
    parts = [f"page {metadata['page']}" if metadata.get("page") else "", f"chunk {metadata.get('chunk', 0)}",
             metadata.get("heading") or ""]
    return " · ".join(p for p in parts if p)


async def _call(action: str, call: Callable[[], Any]) -> Any:
    """A store call, in a thread (LanceDB reads and writes files; the first one of a process imports it, ~1.8 s:
    on the event loop, every other page and run waited); a NodeError is the message itself, anything else is
    logged and explained."""
    try:
        return await off_loop(call)
    except NodeError as error:
        raise _Failed(str(error)) from None
    except Exception as error:  # noqa: BLE001 - a handler answers with a message, never crashes
        log.exception("knowledge: could not %s", action)
        raise _Failed(f"Could not {action}: {error}") from None


class _Failed(Exception):
    pass


class KnowledgeState(rx.State):
    collections: list[CollectionRow] = []
    selected: str = ""
    documents: list[DocumentRow] = []
    loaded: bool = False
    load_error: str = ""  # the first load failed: the collections' place says why, with a Retry

    create_open: bool = False
    create_error: str = ""

    chunks_open: bool = False
    chunks_source: str = ""
    chunks: list[ChunkRow] = []

    upload_progress: int = 0  # percent of the bytes sent
    indexing: list[str] = []  # "name: status" per file of the current upload
    busy: bool = False
    # What the last upload saved, for `index_uploads` (on the server: a browser naming the files sent a file
    # again as often as it listed it, each time read whole and indexed again).
    _index_collection: str = ""
    _index_names: list[str] = []

    query: str = ""
    results: list[ChunkRow] = []
    searched: bool = False

    delete_open: bool = False
    delete_source: str = ""  # empty: the whole collection

    def _workspace(self) -> str:
        # The caller's workspace (checked by the access middleware before this handler ran).
        return current().workspace_id or DEFAULT_WORKSPACE

    async def _refreshed(self, event: Any = None, selected: str | None = None) -> Any:
        """Load the listing; `selected` (else the current one) is chosen only if the listing finds it: a name that
        never listed must not stay selected, as `upload` writes into the selected collection's folder."""
        try:
            self.collections, self.selected, self.documents = await _call(
                "load the collections", functools.partial(
                    _listing, self._workspace(), self.selected if selected is None else selected))
        except _Failed as failed:
            if not self.loaded:  # nothing listed yet: the list's place says it (components/loading.py)
                message = str(failed)
                self.load_error = message if message.startswith("Could not") else \
                    f"Could not load the collections: {message}"
                return None
            return rx.toast.error(str(failed))
        self.loaded, self.load_error = True, ""
        return event

    @rx.event
    @requires("view")
    async def load(self) -> Any:
        return await self._refreshed()

    @rx.event
    @requires("view")
    async def select(self, name: str) -> Any:
        self.results, self.searched, self.query = [], False, ""
        return await self._refreshed(selected=name)

    # -- collections ---------------------------------------------------------------------------------

    @rx.event
    @requires("view")
    def set_create_open(self, is_open: bool) -> None:
        self.create_open, self.create_error = is_open, ""

    @rx.event
    @requires("edit")
    async def create_collection(self, form: dict[str, Any]) -> Any:
        name, model = str(form.get("name", "")).strip(), str(form.get("embedding", "")).strip() or None
        try:
            check_name(name)
            if model:
                from nodeflow_app.knowledge.embedding import check_ref

                check_ref(model)
            workspace = self._workspace()
            await _call("create the collection", lambda: workspace_store(workspace).create(name, model))
        except (_Failed, NodeError) as error:
            self.create_error = str(error)
            return None
        self.create_open, self.selected = False, name
        return await self._refreshed(rx.toast.success(f"Created collection “{name}”"))

    @rx.event
    @requires("edit")
    def ask_delete(self, source: str = "") -> None:
        self.delete_source, self.delete_open = source, True

    @rx.event
    @requires("view")
    def set_delete_open(self, is_open: bool) -> None:
        self.delete_open = is_open

    @rx.event
    @requires("edit")
    async def confirm_delete(self) -> Any:
        self.delete_open = False
        workspace, name, source = self._workspace(), self.selected, self.delete_source
        try:
            if source:
                await _call("delete the document", lambda: workspace_store(workspace).delete_source(name, source))
            else:
                await _call("delete the collection", lambda: workspace_store(workspace).delete(name))
        except _Failed as failed:
            return await self._refreshed(rx.toast.error(str(failed)))
        return await self._refreshed(rx.toast.success(f"Deleted “{source or name}”"))

    # -- documents ------------------------------------------------------------------------------------

    @rx.event
    @requires("view")
    async def open_document(self, source: str) -> Any:
        workspace, selected = self._workspace(), self.selected
        try:
            found = await _call("read the chunks", lambda: workspace_store(workspace).chunks(selected, source))
        except _Failed as failed:
            return rx.toast.error(str(failed))
        self.chunks_source, self.chunks_open = source, True
        self.chunks = [ChunkRow(c["text"], _where(c["metadata"])) for c in found]
        return None

    @rx.event
    @requires("view")
    def set_chunks_open(self, is_open: bool) -> None:
        self.chunks_open = is_open

    @rx.event
    @requires("edit")
    def set_upload_progress(self, progress: dict[str, Any]) -> None:
        self.upload_progress = round(float(progress.get("progress") or 0) * 100)

    @rx.event(background=True)
    @requires("edit")
    async def upload(self, chunks: rx.UploadChunkIterator) -> Any:
        """Keep each file under uploads/<collection>/ as it streams in, then index them.

        Streamed, not buffered: Reflex reads a buffered upload whole onto the disk before any access check, so
        anyone could fill it. A file past MAX_BYTES, or past MAX_UPLOAD_FILES, is dropped as it arrives."""
        async with self:
            collection, workspace = self.selected, self._workspace()
        if not collection:
            return rx.toast.error("Create a collection first.")
        try:
            if not await off_loop(_has_collection, workspace, collection):
                return rx.toast.error(f"No collection {collection!r} in this workspace.")
            saved, refused = await save_upload(chunks, workspace, collection)
        except NodeError as error:
            return rx.toast.error(str(error))
        async with self:
            self.indexing = [f"{name}: waiting" for name in saved] + refused
            self.upload_progress = 100
            self._index_collection, self._index_names = collection, saved
        return KnowledgeState.index_uploads if saved else None

    @rx.event(background=True)
    @requires("edit")
    async def index_uploads(self) -> Any:
        """Index the files the last upload saved, once (claimed here: a second call finds none)."""
        async with self:
            workspace, collection, names = self._workspace(), self._index_collection, self._index_names
            self._index_collection, self._index_names = "", []
        if not names:
            return None
        store = await off_loop(workspace_store, workspace)
        if not await off_loop(_has_collection, workspace, collection):  # this event may act in another workspace
            return rx.toast.error(f"No collection {collection!r} in this workspace.")
        if (workspace, collection) in _indexing:  # another tab's upload, or a second drop: each file would be read
            async with self:  # into memory twice, the same chunks written twice
                self.indexing = [f"{names[i]}: not indexed" if i < len(names) else line
                                 for i, line in enumerate(self.indexing)]
            return rx.toast.error(f"“{collection}” is being indexed already: drop these files again once it is done.")
        _indexing.add((workspace, collection))  # no await since the check: no other event ran between
        try:
            async with self:
                self.busy = True
            for position, name in enumerate(names):
                source = f"{collection}/{name}"
                try:
                    raw = await off_loop(_uploaded(workspace, collection, name).read_bytes)
                    result = await index_file(store, collection, raw, source)
                    status = f"{name}: {result['written']} chunk{'' if result['written'] == 1 else 's'}"
                except NodeError as error:
                    status = f"{name}: {error}"
                except Exception as error:  # noqa: BLE001 - one bad file must not stop the others
                    log.exception("knowledge: indexing %s failed", source)
                    status = f"{name}: failed ({error})"
                async with self:
                    self.indexing = [status if i == position else line for i, line in enumerate(self.indexing)]
        finally:
            _indexing.discard((workspace, collection))
        async with self:
            self.busy = False
            return await self._refreshed()

    # -- search ---------------------------------------------------------------------------------------

    @rx.event
    @requires("view")
    def set_query(self, value: str) -> None:
        self.query = str(value)[:MAX_QUERY_CHARS]

    @rx.event
    @requires("view")
    async def run_search(self, form: dict[str, Any] | None = None) -> Any:
        query = str((form if isinstance(form, dict) else {}).get("query", self.query)).strip()
        if len(query) > MAX_QUERY_CHARS:
            return rx.toast.error(f"A search is at most {MAX_QUERY_CHARS:,} characters; this one has {len(query):,}: "
                                  "shorten it.")
        self.query = query
        if not query or not self.selected:
            self.results, self.searched = [], False
            return None
        try:
            store = await off_loop(workspace_store, self._workspace())
            found = await search(store, self.selected, query, top_k=8)
        except NodeError as error:
            return rx.toast.error(str(error))
        self.results = [ChunkRow(c["text"], _where(c["metadata"]), f"{c['score']:.3f}" if c["score"] else "",
                                 c["metadata"].get("source", "")) for c in found]
        self.searched = True
        return None


def _has_collection(workspace: str, name: Any) -> bool:
    return isinstance(name, str) and name in workspace_store(workspace).names()


def _listing(workspace: str, selected: str) -> tuple[list[CollectionRow], str, list[DocumentRow]]:
    """(the workspace's collections, the selected one (the first when it is gone), its documents); blocking."""
    store = workspace_store(workspace)
    infos = [store.info(name) for name in store.names()]
    collections = [CollectionRow(i.name, i.embedding or "full text only", i.documents, i.chunks) for i in infos]
    names = [c.name for c in collections]
    if selected not in names:
        selected = names[0] if names else ""
    documents = [DocumentRow(d["source"], d["title"] or "", d["chunks"]) for d in store.documents(selected)] \
        if selected else []
    return collections, selected, documents


async def save_upload(chunks: Any, workspace: str, collection: str) -> tuple[list[str], list[str]]:
    """(names saved, "name: why" refused) of a streamed upload written into the collection's uploads folder: a
    file of an unknown format or a name no file can have, one past MAX_BYTES, files past MAX_UPLOAD_FILES and what
    would pass the workspace's uploads quota are refused. The quota is taken chunk by chunk together with the other
    uploads going on (files.Reservation: counted once per upload, uploads at the same moment passed it together).
    Each file is written beside its place and moved there whole: a refused or broken-off file leaves the one of
    that name as it was."""
    folder = _folder(workspace, collection)  # never outside the workspace's uploads, whatever the caller checked
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    saved: list[str] = []
    refused: dict[str, str] = {}
    name, handle, size = "", None, 0

    with Reservation(folder.parent) as room:
        def close(keep: bool) -> None:
            if handle is None:
                return
            handle.close()
            if keep:
                room.keep(handle.name, folder / name)
                saved.append(name)
            else:
                Path(handle.name).unlink(missing_ok=True)
                room.give_back(size)

        try:
            async for chunk in chunks:
                current_name = PurePath(chunk.filename or "upload").name
                if current_name != name:  # the next file
                    close(keep=True)
                    name, handle, size = current_name, None, 0
                    if problem := _name_problem(name):
                        refused[name] = f"{ascii(name[:60])}: {problem}"
                    elif guess_format(name) is None:
                        refused[name] = f"{name}: unknown format"
                    elif len(saved) + 1 > MAX_UPLOAD_FILES:
                        refused[name] = f"{name}: more than {MAX_UPLOAD_FILES} files at once"
                    else:
                        handle = tempfile.NamedTemporaryFile(dir=folder, prefix=INCOMING, delete=False)
                if handle is None:
                    continue  # refused: read on, keep nothing
                if size + len(chunk.data) > MAX_BYTES:
                    why = f"larger than {MAX_BYTES // 1_048_576} MB"
                else:
                    try:
                        room.take(len(chunk.data), name)
                        why = ""
                    except NodeError:
                        why = (f"the workspace's uploads would pass their quota ({quota_bytes() / 1024 ** 3:g} GB, "
                               f"{QUOTA_ENV})")
                if why:
                    close(keep=False)
                    handle, refused[name] = None, f"{name}: {why}"
                    continue
                handle.write(chunk.data)
                size += len(chunk.data)
            close(keep=True)
        except BaseException:
            close(keep=False)  # the upload broke off: no half file stays
            raise
    return saved, list(refused.values())
