"""Turn bytes of a known format into documents `{text, metadata}`: text, Markdown, HTML, PDF, DOCX, CSV, JSON.

PDF and DOCX go through pypdf and python-docx, the libraries Agno's PDFReader and DocxReader wrap; we call
them directly because Agno's readers log a broken file and return no documents, and a user needs an error
that names the file.

What a file may give is limited whatever its size (a 21 KB PDF whose pages share one compressed stream gave 80
million characters, a 5 MB CSV of tiny rows 2.5 million documents and 2 GB of memory): past a limit the file
is refused with an error naming it and the limit (docs/knowledge.md lists them).
"""

from __future__ import annotations

import csv
import io
import json
import zipfile
from pathlib import PurePath
from typing import Any, Iterable, Iterator

from nodeflow_app.contract import NodeError

FORMATS = ("text", "markdown", "html", "pdf", "docx", "csv", "json")
MAX_CHARS = 20_000_000  # characters of text from one file
MAX_RECORDS = 100_000  # rows of a CSV, items of a JSON list: each is a document (with its chunks ~1 KB of memory)
MAX_PAGES = 5_000  # pages of a PDF
# What one Document Loader run gives, all the files of its folder together (a folder of thousands of files went
# into one list), and so what a Text Chunker takes at once.
MAX_LOAD_CHARS = 50_000_000
MAX_LOAD_DOCUMENTS = 200_000
# Page content pypdf parses for the text of one PDF (a 2 MB stream of text operators takes it ~3 s); pages that
# share a stream count it each time.
MAX_PDF_CONTENT = 50 * 1024 * 1024
# Markup tags ('<') of an HTML page or of a .docx's XML parts: each becomes an object of the parse tree (up to
# ~0.6 KB in BeautifulSoup, ~0.35 KB in python-docx's lxml).
MAX_TAGS = 500_000
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
        return _within_limit(reader(raw, source), source)
    except NodeError:
        raise
    except Exception as error:  # a library's own parse error: say which file and format
        raise NodeError(f"{source}: cannot read it as {fmt}: {error}") from error


def _within_limit(documents: Iterable[dict[str, Any]], source: str) -> list[dict[str, Any]]:
    """The documents that hold text; an error as soon as they pass MAX_CHARS (readers give them one by one)."""
    kept, chars = [], 0
    for each in documents:
        chars += len(each["text"])
        if chars > MAX_CHARS:
            raise _too_long(source)
        if each["text"].strip():
            kept.append(each)
    return kept


def _too_long(source: str) -> NodeError:
    return NodeError(f"{source}: more than {MAX_CHARS:,} characters of text; a file may give at most that (split it)")


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

    _check_tags(raw.count(b"<"), source)
    soup = BeautifulSoup(_decode(raw, source), "html.parser")
    title = soup.title.get_text(strip=True) if soup.title else None
    for tag in soup(["script", "style", "noscript", "nav", "header", "footer", "aside", "form", "template"]):
        tag.decompose()
    main = soup.find("main") or soup.find("article") or soup.body or soup
    lines = (line.strip() for line in main.get_text("\n").splitlines())
    return [document("\n".join(line for line in lines if line), source, title=title)]


def _pdf(raw: bytes, source: str) -> Iterator[dict[str, Any]]:
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(raw))
    if len(reader.pages) > MAX_PAGES:
        raise NodeError(f"{source}: {len(reader.pages):,} pages; a PDF may have at most {MAX_PAGES:,}")
    _check_content(reader.pages, source)
    title = (reader.metadata.title if reader.metadata else None) or None
    for number, page in enumerate(reader.pages, start=1):
        yield document(page.extract_text() or "", source, page=number, title=title)


def _check_content(pages: Any, source: str) -> None:
    """The page content of the whole PDF, added up before any page's text is extracted: pypdf takes ~5 s per MB
    of text operators, so a PDF refused on the page that passed MAX_PDF_CONTENT had taken minutes by then (2 MB
    shared by 30 pages: 210 s). Decoding alone is fast."""
    content = 0
    for number, page in enumerate(pages, start=1):
        stream = page.get_contents()  # decoded once per stream object, so a shared one costs nothing here
        content += len(stream.get_data()) if stream is not None else 0
        if content > MAX_PDF_CONTENT:
            raise NodeError(f"{source}: more than {MAX_PDF_CONTENT // 1_048_576} MB of page content by page "
                            f"{number}; a PDF may have at most that (pages sharing content count it each time)")


# A .docx is a zip that python-docx unpacks whole into memory: a few hundred KB of zeros unpack to gigabytes.
# zipfile never yields more than a member's declared size, so the declared sizes bound what is unpacked.
MAX_DOCX_UNPACKED = 100 * 1024 * 1024


def _docx(raw: bytes, source: str) -> list[dict[str, Any]]:
    import docx

    try:
        archive = zipfile.ZipFile(io.BytesIO(raw))
    except zipfile.BadZipFile:
        archive = None  # python-docx says what is wrong with it
    if archive is not None:
        unpacked = sum(member.file_size for member in archive.infolist())
        if unpacked > MAX_DOCX_UNPACKED:
            raise NodeError(f"{source}: unpacks to {unpacked // (1024 * 1024)} MB; a .docx may unpack to at most "
                            f"{MAX_DOCX_UNPACKED // (1024 * 1024)} MB")
        _check_tags(_xml_tags(archive), source)
    parsed = docx.Document(io.BytesIO(raw))
    title = parsed.core_properties.title or None
    return [document("\n\n".join(p.text for p in parsed.paragraphs if p.text.strip()), source, title=title)]


def _xml_tags(archive: zipfile.ZipFile) -> int:
    """The '<' of the XML parts python-docx parses (read in pieces: their size is bounded above, not their tags)."""
    tags = 0
    for member in archive.infolist():
        if member.filename.endswith((".xml", ".rels")):
            with archive.open(member) as part:
                while piece := part.read(1_048_576):
                    tags += piece.count(b"<")
    return tags


def _check_tags(tags: int, source: str) -> None:
    if tags > MAX_TAGS:
        raise NodeError(f"{source}: {tags:,} markup tags; a file may have at most {MAX_TAGS:,}")


def _csv(raw: bytes, source: str) -> Iterator[dict[str, Any]]:
    """One document per row, as `column: value` lines, so a chunk keeps the meaning of each cell (a short row's
    missing cells are left out, a long row's extra ones too)."""
    rows = csv.reader(io.StringIO(_decode(raw, source)))
    header = next(rows, [])
    index = 0
    for row in rows:
        if not row:
            continue  # a blank line
        index += 1
        if index > MAX_RECORDS:
            raise NodeError(f"{source}: more than {MAX_RECORDS:,} rows; a CSV file may have at most that (split it)")
        yield document("\n".join(f"{k}: {v}" for k, v in zip(header, row)), source, row=index)


def _json(raw: bytes, source: str) -> Iterator[dict[str, Any]]:
    """A list gives one document per item; anything else is one document; strings stay as they are. The file is
    parsed whole, at up to 25 times its size (a 45 MB list of {} took 1.3 GB), so one longer than the text a file
    may give is refused first: its text comes out about as long as the JSON (values are written back indented)."""
    text = _decode(raw, source)
    if len(text) > MAX_CHARS:
        raise NodeError(f"{source}: {len(text):,} characters of JSON; a JSON file may have at most {MAX_CHARS:,} "
                        "(split it)")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise NodeError(f"{source}: invalid JSON at line {error.lineno} column {error.colno}: {error.msg}") from None
    items = value if isinstance(value, list) else [value]
    if len(items) > MAX_RECORDS:
        raise NodeError(f"{source}: a list of {len(items):,} items; a JSON file may have at most {MAX_RECORDS:,}")
    for index, item in enumerate(items):
        yield document(item if isinstance(item, str) else _indented(item, source), source,
                       item=index if isinstance(value, list) else None)


_INDENTED = json.JSONEncoder(ensure_ascii=False, indent=2)


def _indented(item: Any, source: str) -> str:
    """An item as indented JSON (lines the chunker can cut at), stopped once it passes MAX_CHARS: indenting makes
    more text than the file held (a 19 MB list of {} was 44 million characters, written whole in 18 s)."""
    pieces, length = [], 0
    for piece in _INDENTED.iterencode(item):
        length += len(piece)
        if length > MAX_CHARS:
            raise _too_long(source)
        pieces.append(piece)
    return "".join(pieces)


_READERS = {"text": _text, "markdown": _markdown, "html": _html, "pdf": _pdf, "docx": _docx, "csv": _csv,
            "json": _json}
