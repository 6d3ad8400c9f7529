"""Turn bytes of a known format into documents `{text, metadata}`: text, Markdown, HTML, PDF, DOCX, CSV, JSON.

PDF and DOCX go through pypdf and python-docx, the libraries Agno's PDFReader and DocxReader wrap; we call
them directly because Agno's readers log a broken file and return no documents, and a user needs an error
that names the file.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import PurePath
from typing import Any

from nodeflow_app.contract import NodeError

FORMATS = ("text", "markdown", "html", "pdf", "docx", "csv", "json")
_SUFFIXES = {
    ".txt": "text", ".text": "text", ".log": "text", ".md": "markdown", ".markdown": "markdown",
    ".html": "html", ".htm": "html", ".pdf": "pdf", ".docx": "docx", ".csv": "csv", ".json": "json",
}
_CONTENT_TYPES = {
    "text/plain": "text", "text/markdown": "markdown", "text/html": "html", "application/pdf": "pdf",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "text/csv": "csv", "application/json": "json",
}


def guess_format(name: str = "", content_type: str = "") -> str | None:
    """The format of a file from its name's suffix, else its content type; None when neither says."""
    by_suffix = _SUFFIXES.get(PurePath(name.split("?")[0]).suffix.lower())
    return by_suffix or _CONTENT_TYPES.get(content_type.split(";")[0].strip().lower())


def read_document(raw: bytes, source: str, fmt: str) -> list[dict[str, Any]]:
    """Documents of one file; `source` names it in every document's metadata and in errors."""
    reader = _READERS.get(fmt)
    if reader is None:
        raise NodeError(f"{source}: unknown format {fmt!r} (known: {', '.join(FORMATS)})")
    try:
        documents = reader(raw, source)
    except NodeError:
        raise
    except Exception as error:  # a library's own parse error: say which file and format
        raise NodeError(f"{source}: cannot read it as {fmt}: {error}") from error
    return [d for d in documents if d["text"].strip()]


def document(text: str, source: str, **metadata: Any) -> dict[str, Any]:
    return {"text": text, "metadata": {"source": source, **{k: v for k, v in metadata.items() if v is not None}}}


def _decode(raw: bytes, source: str) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise NodeError(f"{source}: not UTF-8 text (convert it, or pick its real format)") from None


def _text(raw: bytes, source: str) -> list[dict[str, Any]]:
    return [document(_decode(raw, source), source)]


def _markdown(raw: bytes, source: str) -> list[dict[str, Any]]:
    text = _decode(raw, source)
    title = next((line.lstrip("#").strip() for line in text.splitlines() if line.startswith("# ")), None)
    return [document(text, source, title=title)]


def _html(raw: bytes, source: str) -> list[dict[str, Any]]:
    """The page's main text: <main> or <article> when there is one, without scripts, styles and navigation."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(_decode(raw, source), "html.parser")
    title = soup.title.get_text(strip=True) if soup.title else None
    for tag in soup(["script", "style", "noscript", "nav", "header", "footer", "aside", "form", "template"]):
        tag.decompose()
    main = soup.find("main") or soup.find("article") or soup.body or soup
    lines = (line.strip() for line in main.get_text("\n").splitlines())
    return [document("\n".join(line for line in lines if line), source, title=title)]


def _pdf(raw: bytes, source: str) -> list[dict[str, Any]]:
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(raw))
    title = (reader.metadata.title if reader.metadata else None) or None
    return [document(page.extract_text() or "", source, page=number, title=title)
            for number, page in enumerate(reader.pages, start=1)]


# A .docx is a zip that python-docx unpacks whole into memory: a few hundred KB of zeros unpack to gigabytes.
# zipfile never yields more than a member's declared size, so the declared sizes bound what is unpacked.
MAX_DOCX_UNPACKED = 100 * 1024 * 1024


def _docx(raw: bytes, source: str) -> list[dict[str, Any]]:
    import zipfile

    import docx

    try:
        unpacked = sum(member.file_size for member in zipfile.ZipFile(io.BytesIO(raw)).infolist())
    except zipfile.BadZipFile:
        unpacked = 0  # python-docx says what is wrong with it
    if unpacked > MAX_DOCX_UNPACKED:
        raise NodeError(f"{source}: unpacks to {unpacked // (1024 * 1024)} MB; a .docx may unpack to at most "
                        f"{MAX_DOCX_UNPACKED // (1024 * 1024)} MB")
    parsed = docx.Document(io.BytesIO(raw))
    title = parsed.core_properties.title or None
    return [document("\n\n".join(p.text for p in parsed.paragraphs if p.text.strip()), source, title=title)]


def _csv(raw: bytes, source: str) -> list[dict[str, Any]]:
    """One document per row, as `column: value` lines, so a chunk keeps the meaning of each cell."""
    rows = csv.DictReader(io.StringIO(_decode(raw, source)))
    return [document("\n".join(f"{k}: {v}" for k, v in row.items() if k is not None), source, row=index)
            for index, row in enumerate(rows, start=1)]


def _json(raw: bytes, source: str) -> list[dict[str, Any]]:
    """A list gives one document per item; anything else is one document; strings stay as they are."""
    try:
        value = json.loads(_decode(raw, source))
    except json.JSONDecodeError as error:
        raise NodeError(f"{source}: invalid JSON at line {error.lineno} column {error.colno}: {error.msg}") from None
    items = value if isinstance(value, list) else [value]
    return [document(item if isinstance(item, str) else json.dumps(item, ensure_ascii=False, indent=2), source,
                     item=index if isinstance(value, list) else None)
            for index, item in enumerate(items)]


_READERS = {"text": _text, "markdown": _markdown, "html": _html, "pdf": _pdf, "docx": _docx, "csv": _csv,
            "json": _json}
