"""Split documents into chunks of at most `size` characters, `overlap` characters shared between neighbours.

Recursive splitting (as Langflow and LangChain do it): try paragraph breaks, then lines, sentences, words,
and cut characters only as a last resort, so chunks end at natural boundaries. The Markdown mode first cuts
at headings and records the heading path. Agno's RecursiveChunking breaks only at newlines and full stops
and collapses whitespace (Markdown loses its structure), and its MarkdownChunking needs `unstructured`:
this module is small enough to own.
"""

from __future__ import annotations

import bisect
import re
from collections import deque
from typing import Any, Iterable, Iterator

from nodeflow_app.contract import NodeError
from nodeflow_app.knowledge.readers import MAX_LOAD_CHARS

# What one call makes (a Text Chunker run, an upload's indexing). Small chunks with a large overlap give about a
# chunk per word: 1 million characters at size 50, overlap 45 made 333,000 chunks (170 MB), 5 million 845 MB.
MAX_CHUNKS = 500_000  # each ~0.5 KB besides its text
MAX_CHUNK_CHARS = 2 * MAX_LOAD_CHARS  # their text together: the overlap repeats text (size 1000, overlap 990: 10x)
SEPARATORS = ("\n\n", "\n", ". ", " ", "")
# One line each, no two quantifiers over the same characters: `\s+(.+?)\s*#*\s*$` backtracked quadratically
# on a heading line of spaces (1.5 KB took seconds, holding the GIL); the closing #s are stripped in Python.
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.*)$", re.MULTILINE)
_FENCE = re.compile(r"^ {0,3}(?:```|~~~)", re.MULTILINE)  # a code block's first or last line


def chunk_documents(documents: list[dict[str, Any]], size: int, overlap: int,
                    markdown: bool = False) -> list[dict[str, Any]]:
    """Chunks `{text, metadata}`: each keeps its document's metadata plus `chunk` (index in the document); an
    error as soon as they pass MAX_CHUNKS or MAX_CHUNK_CHARS."""
    if size < 1:
        raise NodeError(f"chunk size must be at least 1 character (got {size})")
    if not 0 <= overlap < size:
        raise NodeError(f"overlap must be at least 0 and less than the chunk size {size} (got {overlap})")
    chunks, chars = [], 0
    for document in documents:
        sections = _markdown_sections(document["text"]) if markdown else [("", document["text"])]
        index = 0
        for heading, text in sections:
            for piece in _pieces(text, size, overlap):
                chars += len(piece)
                if len(chunks) >= MAX_CHUNKS or chars > MAX_CHUNK_CHARS:
                    raise NodeError(f"more than {MAX_CHUNKS:,} chunks or {MAX_CHUNK_CHARS:,} characters of chunks; "
                                    "raise the chunk size or lower the overlap, or chunk fewer documents at once")
                metadata = {**document.get("metadata", {}), "chunk": index}
                if heading:
                    metadata["heading"] = heading
                chunks.append({"text": piece, "metadata": metadata})
                index += 1
    return chunks


def split_text(text: str, size: int, overlap: int) -> list[str]:
    """Pieces of `text`, each at most `size` characters, consecutive ones sharing up to `overlap`."""
    return list(_pieces(text, size, overlap))


def _pieces(text: str, size: int, overlap: int) -> Iterator[str]:
    """split_text's pieces one at a time, so that a caller can stop before they are all made."""
    return _merge(_split(text, size, SEPARATORS), size, overlap)


def _split(text: str, size: int, separators: tuple[str, ...]) -> Iterator[str]:
    """Atoms no longer than `size`, cut at the coarsest separator that works; separators stay attached. One at a
    time: a list of them all took 40 times the text's memory for a text of short words."""
    if len(text) <= size:
        if text:
            yield text
        return
    separator, rest = separators[0], separators[1:]
    if separator == "":
        yield from (text[i:i + size] for i in range(0, len(text), size))
        return
    start = 0
    while start < len(text):
        end = text.find(separator, start)
        end = len(text) if end == -1 else end + len(separator)
        part, start = text[start:end], end
        if len(part) > size:
            yield from _split(part, size, rest)
        else:
            yield part


def _merge(atoms: Iterable[str], size: int, overlap: int) -> Iterator[str]:
    """Greedily pack atoms into chunks (blank ones left out); each new chunk starts with the previous one's last
    atoms (<= overlap)."""
    current: deque[str] = deque()  # dropped from the left: a list's pop(0) made a large chunk quadratic
    length = 0
    for atom in atoms:
        if current and length + len(atom) > size:
            if chunk := "".join(current).strip():
                yield chunk
            while current and (length > overlap or length + len(atom) > size):
                length -= len(current.popleft())
        current.append(atom)
        length += len(atom)
    if current and (chunk := "".join(current).strip()):
        yield chunk


def _markdown_sections(text: str) -> list[tuple[str, str]]:
    """(heading path, section text incl. its heading line) per heading; text before the first heading first.
    A `#` line inside a code block is code (a shell comment), not a heading."""
    sections: list[tuple[str, str]] = []
    path: list[tuple[int, str]] = []
    fences = [fence.start() for fence in _FENCE.finditer(text)]  # opening, closing, opening, ...
    matches = [(m, title) for m in _HEADING.finditer(text)
               if bisect.bisect_right(fences, m.start()) % 2 == 0 and (title := _title(m.group(2)))]
    if not matches or matches[0][0].start() > 0:
        sections.append(("", text[:matches[0][0].start()] if matches else text))
    for i, (match, title) in enumerate(matches):
        level = len(match.group(1))
        path = [(lvl, name) for lvl, name in path if lvl < level] + [(level, title)]
        end = matches[i + 1][0].start() if i + 1 < len(matches) else len(text)
        sections.append((" > ".join(name for _, name in path), text[match.start():end]))
    return [(heading, body) for heading, body in sections if body.strip()]


def _title(line: str) -> str:
    """A heading's text without its closing #s (`## Install ##`)."""
    return line.rstrip().rstrip("#").rstrip()
