"""The Knowledge page in Chromium: make a collection, upload a real PDF, see its chunks and search it; then an
Agent with a Knowledge node answers in the chat and its tool card shows the chunk it used, with the source."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from nodeflow_app.store.graphs import GraphStore
from tests.knowledge import files
from tests.llm.fake_openai import text, tool_call
from tests.llm.graphs import MODEL, graph

from .server import ROOT, Server
from .test_chat import expect_answer_status, last_answer, open_chat_panel, send

EMBED = "openai-compatible:fake-embed"


@pytest.fixture
def store(nodeflow_server: Server):
    graphs = GraphStore(f"sqlite:///{nodeflow_server.data_dir / 'nodeflow.db'}")
    yield graphs
    graphs.engine.dispose()


def test_upload_search_and_an_agent_grounded_in_the_file(page, nodeflow_server, store, fake_llm, tmp_path):
    page.goto(f"{nodeflow_server.url}/knowledge")
    page.get_by_test_id("new-collection").click()
    page.get_by_test_id("collection-name").fill("handbook")
    page.get_by_test_id("collection-embedding").fill(EMBED)
    page.get_by_test_id("collection-create").click()
    expect(page.get_by_test_id("collection-title")).to_have_text("handbook")

    pdf = tmp_path / "refunds.pdf"
    pdf.write_bytes(files.pdf(["Refunds are paid within 14 days of the return.", "Store credit lasts a year."],
                              title="Refund policy"))
    page.get_by_test_id("knowledge-upload").locator("input[type=file]").set_input_files(str(pdf))
    expect(page.get_by_test_id("indexing-status")).to_have_text("refunds.pdf: 2 chunks", timeout=20_000)
    expect(page.get_by_test_id("collection-handbook")).to_contain_text("1 document · 2 chunks")
    expect(page.get_by_test_id("upload-progress")).to_be_visible()

    page.get_by_test_id("document-handbook/refunds.pdf").click()
    chunks = page.get_by_test_id("document-chunks").get_by_test_id("chunk")
    expect(chunks).to_have_count(2)
    expect(chunks.first).to_contain_text("page 1")
    expect(chunks.first).to_contain_text("Refunds are paid within 14 days")
    page.keyboard.press("Escape")
    expect(page.get_by_test_id("document-chunks")).to_be_hidden()  # the dialog's focus trap is gone

    page.get_by_test_id("knowledge-query").fill("how long do refunds take")
    expect(page.get_by_test_id("knowledge-query")).to_have_value("how long do refunds take")
    page.get_by_test_id("knowledge-search").click()
    results = page.get_by_test_id("search-results").get_by_test_id("chunk")
    expect(results.first).to_contain_text("Refunds are paid within 14 days", timeout=15_000)
    page.screenshot(path=str(ROOT / "docs" / "screenshot-knowledge.png"))

    raw = graph([("chat", "chat-start", {}), ("agent", "agent", {"model": MODEL}),
                 ("kb", "knowledge", {"collection": "handbook", "description": "refund policy"})],
                ["chat.output -> agent.input", "kb.tools => agent.tools"])
    for node, (x, y) in zip(raw["nodes"], ((0, 80), (320, 80), (0, 300))):
        node["position"] = {"x": x, "y": y}
    stored = store.create("Handbook agent", raw)
    fake_llm.script(tool_call("search_handbook", {"query": "refund delay"}),
                    text(["Refunds ", "are paid ", "within 14 days."]))
    open_chat_panel(page, nodeflow_server, stored.id)
    send(page, "How long do refunds take?")
    expect_answer_status(page, "complete")
    answer = last_answer(page)
    tool = answer.get_by_test_id("block-tool")
    expect(tool).to_contain_text("search_handbook")
    tool.click()  # open the card: the retrieved passages with their source
    expect(tool).to_contain_text("handbook/refunds.pdf")
    expect(tool).to_contain_text("Refunds are paid within 14 days of the return.")
    expect(answer.get_by_test_id("block-text")).to_contain_text("Refunds are paid within 14 days.")


def test_a_bad_collection_name_is_explained(page, nodeflow_server):
    page.goto(f"{nodeflow_server.url}/knowledge")
    page.get_by_test_id("new-collection").click()
    page.get_by_test_id("collection-name").fill("../etc")
    page.get_by_test_id("collection-create").click()
    expect(page.get_by_test_id("collection-error")).to_contain_text("collection name '../etc'")


def test_one_chunk_is_counted_in_the_singular(page, nodeflow_server, tmp_path):
    page.goto(f"{nodeflow_server.url}/knowledge")
    page.get_by_test_id("new-collection").click()
    page.get_by_test_id("collection-name").fill("opening-hours")  # no embedding model: full text only
    page.get_by_test_id("collection-create").click()
    expect(page.get_by_test_id("collection-title")).to_have_text("opening-hours")
    note = tmp_path / "hours.txt"
    note.write_text("The shop opens at nine.")
    page.get_by_test_id("knowledge-upload").locator("input[type=file]").set_input_files(str(note))
    expect(page.get_by_test_id("indexing-status")).to_have_text("hours.txt: 1 chunk", timeout=20_000)
    expect(page.get_by_test_id("collection-opening-hours")).to_contain_text("1 document · 1 chunk")
