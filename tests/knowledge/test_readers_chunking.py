"""nodeflow_app/knowledge readers (real PDF, DOCX, HTML made here) and the chunker's sizes, overlap and Markdown mode."""

from __future__ import annotations

import json

import time

import pytest

from nodeflow_app.contract import NodeError
from nodeflow_app.knowledge.chunking import chunk_documents, split_text
from nodeflow_app.knowledge import readers
from nodeflow_app.knowledge.readers import guess_format, read_document
from tests.knowledge import files


def test_pdf_gives_a_document_per_page_with_its_number_and_title():
    docs = read_document(files.pdf(["Refunds take 14 days.", "Shipping is free."], title="Policies"), "p.pdf", "pdf")
    assert [d["text"].strip() for d in docs] == ["Refunds take 14 days.", "Shipping is free."]
    assert [d["metadata"] for d in docs] == [{"source": "p.pdf", "page": 1, "title": "Policies"},
                                            {"source": "p.pdf", "page": 2, "title": "Policies"}]


def test_docx_paragraphs_and_title():
    [doc] = read_document(files.docx(["First paragraph.", "", "Second one."], title="Guide"), "g.docx", "docx")
    assert doc["text"] == "First paragraph.\n\nSecond one."
    assert doc["metadata"] == {"source": "g.docx", "title": "Guide"}


def test_a_docx_that_unpacks_too_far_is_refused_before_it_is_unpacked():
    import io
    import zipfile

    from nodeflow_app.knowledge import readers

    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("word/document.xml", bytes(readers.MAX_DOCX_UNPACKED + 1))
    assert len(bomb.getvalue()) < 200_000
    with pytest.raises(NodeError, match=r"bomb.docx: unpacks to 100 MB; a .docx may unpack to at most 100 MB"):
        read_document(bomb.getvalue(), "bomb.docx", "docx")


def test_a_file_gives_at_most_so_many_characters():
    read_document(b"a" * readers.MAX_CHARS, "big.txt", "text")
    with pytest.raises(NodeError, match=r"^big.txt: more than 20,000,000 characters of text; a file may give"):
        read_document(b"a" * (readers.MAX_CHARS + 1), "big.txt", "text")


def test_a_small_pdf_whose_pages_share_one_stream_is_stopped_early():
    """Pages may share one compressed content stream: 21 KB gave 80 million characters in 21 s. The content each
    page makes pypdf parse counts, once per page."""
    bomb = files.pdf_sharing(b"q Q\n" * 500_000, pages=30)  # 2 MB of content on each page, 7 KB of file
    assert len(bomb) < 10_000
    started = time.perf_counter()
    with pytest.raises(NodeError, match=r"^bomb.pdf: more than 50 MB of page content by page 27; a PDF may"):
        read_document(bomb, "bomb.pdf", "pdf")
    assert time.perf_counter() - started < 5


def test_a_pdf_with_too_much_page_content_is_refused_before_any_text_is_extracted(monkeypatch):
    """pypdf takes ~5 s per MB of text operators: 2 MB of them shared by 30 pages were refused at page 27, after
    210 s. The content of every page is added up first (decoding is fast); here with a limit of 1 MB."""
    monkeypatch.setattr(readers, "MAX_PDF_CONTENT", 1_048_576)
    shown = b"BT /F1 12 Tf\n" + b"(hello) Tj\n" * 20_000 + b"ET\n"  # 220 KB: about a second to extract
    assert len(read_document(files.pdf_sharing(shown, pages=2), "p.pdf", "pdf")) == 2
    started = time.perf_counter()
    with pytest.raises(NodeError, match=r"^bomb.pdf: more than 1 MB of page content by page 5; a PDF may"):
        read_document(files.pdf_sharing(shown, pages=6), "bomb.pdf", "pdf")
    assert time.perf_counter() - started < 1


def test_a_pdf_has_at_most_so_many_pages():
    page = b"BT /F1 12 Tf 72 720 Td (x) Tj ET"
    assert len(read_document(files.pdf_sharing(page, readers.MAX_PAGES), "p.pdf", "pdf")) == readers.MAX_PAGES
    with pytest.raises(NodeError, match=r"^p.pdf: 5,001 pages; a PDF may have at most 5,000$"):
        read_document(files.pdf_sharing(page, readers.MAX_PAGES + 1), "p.pdf", "pdf")


def test_csv_rows_and_json_items_are_limited():
    """A 5 MB CSV of tiny rows was 2.5 million documents and 2 GB of memory."""
    assert len(read_document(b"a\n" + b"1\n" * readers.MAX_RECORDS, "t.csv", "csv")) == readers.MAX_RECORDS
    with pytest.raises(NodeError, match=r"^t.csv: more than 100,000 rows; a CSV file may have at most that"):
        read_document(b"a\n" + b"1\n" * (readers.MAX_RECORDS + 1), "t.csv", "csv")
    with pytest.raises(NodeError, match=r"^t.json: a list of 100,001 items; a JSON file may have at most 100,000$"):
        read_document(b"[" + b"1," * readers.MAX_RECORDS + b"1]", "t.json", "json")


def test_a_json_file_longer_than_a_file_may_give_is_refused_before_it_is_parsed(monkeypatch):
    """JSON is parsed whole, at up to 25 times its size, before any limit applied: a 45 MB list of {} took 1.3 GB
    and 45 s to be refused. A file of more characters than a file may give is refused first."""
    monkeypatch.setattr(readers, "MAX_CHARS", 1_000)
    assert len(read_document(b"[" + b" " * 990 + b'"x"]', "t.json", "json")) == 1
    with pytest.raises(NodeError, match=r"^t.json: 1,005 characters of JSON; a JSON file may have at most 1,000 "):
        read_document(b"[" + b" " * 1_000 + b'"x"]', "t.json", "json")


def test_json_written_back_indented_stops_at_the_limit():
    """Indenting makes more text than the file held: 0.9 MB of {} nested 95 deep is 58 million characters, all
    written (80 MB, seconds) before the limit applied; the writing stops once it passes it."""
    import tracemalloc

    depth = 95
    deep = b"[" * depth + b"{}," * 300_000 + b"{}" + b"]" * depth
    tracemalloc.start()
    try:
        with pytest.raises(NodeError, match=r"^deep.json: more than 20,000,000 characters of text; a file may give"):
            read_document(deep, "deep.json", "json")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 50 * 2 ** 20, f"{peak // 2 ** 20} MB at the peak"


def test_a_short_csv_row_leaves_its_missing_cells_out():
    rows = read_document(b"name,price,note\ntea,3\n\ncake,5,fresh,extra\n", "menu.csv", "csv")
    assert [(r["text"], r["metadata"]["row"]) for r in rows] == [("name: tea\nprice: 3", 1),
                                                                 ("name: cake\nprice: 5\nnote: fresh", 2)]


@pytest.mark.parametrize("fmt, raw", [("html", b"<p>a</p>" * 250_001),
                                      ("docx", files.docx_with_body(b"<w:p/>" * 500_001))])
def test_markup_with_too_many_tags_is_refused_before_it_is_parsed(fmt, raw):
    """Each tag is an object of the parse tree: 2 MB of HTML took 300 MB, 60 KB of .docx 958 MB."""
    started = time.perf_counter()
    with pytest.raises(NodeError, match=rf"^f.{fmt}: [0-9,]+ markup tags; a file may have at most 500,000$"):
        read_document(raw, f"f.{fmt}", fmt)
    assert time.perf_counter() - started < 2


def test_html_keeps_the_main_text_only():
    [doc] = read_document(files.HTML, "https://shop.example/shipping", "html")
    assert doc["text"] == "Shipping policy\nOrders over 50 euros ship free.\nDelivery takes 3 days."
    assert doc["metadata"]["title"] == "Shipping"


def test_csv_rows_and_json_items_become_documents():
    rows = read_document(b"name,price\ntea,3\ncake,5\n", "menu.csv", "csv")
    assert [r["text"] for r in rows] == ["name: tea\nprice: 3", "name: cake\nprice: 5"]
    assert rows[1]["metadata"] == {"source": "menu.csv", "row": 2}
    items = read_document(json.dumps(["plain", {"q": "why"}]).encode(), "faq.json", "json")
    assert items[0]["text"] == "plain" and json.loads(items[1]["text"]) == {"q": "why"}


@pytest.mark.parametrize("raw, fmt, message", [
    (b"%PDF-1.4 broken", "pdf", "p.x: cannot read it as pdf"),
    (b"not a zip", "docx", "p.x: cannot read it as docx"),
    (b"{oops", "json", "p.x: invalid JSON at line 1 column 2"),
    (b"\xff\xfe\x00bad", "text", "p.x: not UTF-8 text"),
    (b"x", "xls", "p.x: unknown format 'xls'"),
])
def test_a_broken_file_is_a_clear_error_naming_it(raw, fmt, message):
    with pytest.raises(NodeError, match=message):
        read_document(raw, "p.x", fmt)


def test_format_from_suffix_or_content_type():
    assert guess_format("a/B.PDF") == "pdf" and guess_format("x.md") == "markdown"
    assert guess_format("https://x.org/page?id=1", "text/html; charset=utf-8") == "html"
    assert guess_format("blob") is None


def test_chunks_respect_size_and_overlap_and_cut_at_words():
    text = " ".join(f"word{i}" for i in range(300))
    pieces = split_text(text, 100, 30)
    assert all(len(p) <= 100 for p in pieces) and len(pieces) > 20
    for before, after in zip(pieces, pieces[1:]):
        assert after.split()[0] in before.split()  # each chunk starts inside the previous one (overlap)
        assert not after.startswith(" ") and after.split()[0].startswith("word")
    assert " ".join(pieces).split()[-1] == "word299"


def test_paragraphs_stay_whole_when_they_fit():
    text = "First paragraph here.\n\nSecond paragraph, a bit longer.\n\nThird."
    assert split_text(text, 40, 0) == ["First paragraph here.", "Second paragraph, a bit longer.\n\nThird."]


def test_markdown_mode_cuts_at_headings_and_keeps_the_path():
    doc = {"text": "Intro\n# Install\nRun it.\n## Linux\nUse apt.\n# Use\nClick.", "metadata": {"source": "r.md"}}
    chunks = chunk_documents([doc], 500, 0, markdown=True)
    assert [(c["text"], c["metadata"].get("heading")) for c in chunks] == [
        ("Intro", None), ("# Install\nRun it.", "Install"), ("## Linux\nUse apt.", "Install > Linux"),
        ("# Use\nClick.", "Use")]
    assert [c["metadata"]["chunk"] for c in chunks] == [0, 1, 2, 3]
    assert all(c["metadata"]["source"] == "r.md" for c in chunks)


def test_a_hash_line_inside_a_code_block_is_not_a_heading():
    text = "# Setup\nRun:\n```bash\n# install the tools\nmake\n```\nThen go on.\n# Use\nClick."
    chunks = chunk_documents([{"text": text, "metadata": {}}], 500, 0, markdown=True)
    assert [(c["text"], c["metadata"]["heading"]) for c in chunks] == [
        ("# Setup\nRun:\n```bash\n# install the tools\nmake\n```\nThen go on.", "Setup"), ("# Use\nClick.", "Use")]


def test_closing_hashes_are_not_part_of_a_heading_and_a_bare_hash_line_is_none():
    text = "## Install ##\nRun it.\n#\nnot a heading\n###\tC# #  \nCode."
    chunks = chunk_documents([{"text": text, "metadata": {}}], 500, 0, markdown=True)
    assert [(c["text"], c["metadata"]["heading"]) for c in chunks] == [
        ("## Install ##\nRun it.\n#\nnot a heading", "Install"), ("###\tC# #  \nCode.", "Install > C#")]


def test_a_heading_line_full_of_spaces_takes_no_time():
    """The heading pattern's quantifiers over the same spaces backtracked: a 1.5 KB .md file took 5.8 s, holding
    the GIL (every page and run waited)."""
    text = "# a" + " " * 1500 + "x\nBody.\n## b" + " #" * 1500 + "x\n"
    started = time.perf_counter()
    chunks = chunk_documents([{"text": text, "metadata": {}}], 5000, 0, markdown=True)
    assert time.perf_counter() - started < 0.5
    assert [c["metadata"]["heading"] for c in chunks] == ["a" + " " * 1500 + "x", "a" + " " * 1500 + "x > b"
                                                           + " #" * 1500 + "x"]


def test_the_time_to_chunk_does_not_grow_with_the_chunk_size():
    """The overlap was dropped with list.pop(0), each a copy of the chunk's words: 8x the chunk size took 8x the
    time on the same text (a 5 MB transcript at 100,000 / 50,000 stalled every run for 2.4 s)."""
    text = " ".join(["ab"] * 400_000)

    def seconds(size: int) -> float:
        best = float("inf")
        for _ in range(3):
            started = time.perf_counter()
            assert len(split_text(text, size, size // 2)) > 1
            best = min(best, time.perf_counter() - started)
        return best

    small, large = seconds(10_000), seconds(80_000)
    assert large < 3 * small, f"8x the chunk size took {large / small:.1f}x the time"


def test_chunking_a_text_of_short_words_takes_little_more_memory_than_its_chunks():
    """All the atoms of a text were listed before they were merged: 2 MB of one-letter words took 80 MB."""
    import tracemalloc

    text = "a " * 200_000
    tracemalloc.start()
    try:
        chunks = split_text(text, 1000, 200)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(chunks) == 500
    assert peak < 2_000_000, f"{peak / 1e6:.1f} MB for 0.4 MB of text"


@pytest.mark.parametrize("size, overlap, message", [(0, 0, "chunk size must be at least 1"),
                                                    (100, 100, "overlap must be at least 0 and less than")])
def test_bad_sizes_are_refused(size, overlap, message):
    with pytest.raises(NodeError, match=message):
        chunk_documents([{"text": "x", "metadata": {}}], size, overlap)


def test_chunking_stops_at_so_many_chunks(monkeypatch):
    """Small chunks with a large overlap give about a chunk per word: 1 million characters at size 50, overlap 45
    made 333,000 chunks (170 MB), 5 million 845 MB. The chunker stops as soon as it passes the limit."""
    from nodeflow_app.knowledge import chunking

    monkeypatch.setattr(chunking, "MAX_CHUNKS", 100)
    assert len(chunk_documents([{"text": "ab " * 115, "metadata": {}}], 50, 45)) == 100
    started = time.perf_counter()
    with pytest.raises(NodeError, match=r"^more than 100 chunks or 100,000,000 characters of chunks; raise the chunk "
                                        r"size or lower the overlap, or chunk fewer documents at once$"):
        chunk_documents([{"text": "ab " * 1_000_000, "metadata": {}}], 50, 45)
    assert time.perf_counter() - started < 1  # not every chunk made first (seconds)


def test_chunking_stops_at_so_many_characters_of_chunks(monkeypatch):
    """The overlap repeats text: at size 1000, overlap 990, 5 million characters gave 555 million of chunks."""
    from nodeflow_app.knowledge import chunking

    monkeypatch.setattr(chunking, "MAX_CHUNK_CHARS", 10_000)
    with pytest.raises(NodeError, match=r"^more than 500,000 chunks or 10,000 characters of chunks"):
        chunk_documents([{"text": "ab " * 2_000, "metadata": {}}], 1000, 990)
    assert len(chunk_documents([{"text": "ab " * 2_000, "metadata": {}}], 1000, 0)) == 7  # 6,000 characters
