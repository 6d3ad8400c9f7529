"""New graph in Chromium: the template picker, a double click that makes one graph and opens it, a blank graph's
Chat Start and the canvas hint, a template opened with its nodes.

The README's picture of the picker, docs/screenshot-templates.png, is taken here (1440x900).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from nodeflow_app.store.graphs import GraphStore
from nodeflow_app.templates import load_templates

from .server import Server

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOT = ROOT / "docs" / "screenshot-templates.png"
EDITOR_URL = re.compile(r"/graph/([A-Za-z0-9-]+)$")
CANVAS = "window.__nodeflowCanvas"


@pytest.fixture
def store(nodeflow_server: Server):
    graphs = GraphStore(f"sqlite:///{nodeflow_server.data_dir / 'nodeflow.db'}")
    yield graphs
    graphs.engine.dispose()


def open_picker(page, server: Server) -> None:
    page.goto(server.url + "/")
    page.get_by_test_id("graph-count").wait_for()
    page.get_by_test_id("new-graph").click()
    page.get_by_test_id("template-picker").wait_for()


def opened_graph_id(page) -> str:
    page.wait_for_url(EDITOR_URL)
    page.wait_for_function(f"{CANVAS} && {CANVAS}.rev() > 0")
    return EDITOR_URL.search(page.url).group(1)


def test_the_picker_lists_blank_first_then_every_template_with_its_description(page, nodeflow_server):
    open_picker(page, nodeflow_server)
    templates = load_templates()
    cards = page.locator('[data-testid^="template-"][aria-label^="New graph: "]')
    expect(cards).to_have_count(len(templates))
    assert cards.nth(0).get_attribute("data-testid") == "template-blank"
    for template in templates:
        card = page.get_by_test_id(f"template-{template.id}")
        expect(card).to_contain_text(template.name)
        expect(card).to_contain_text(template.description)
    page.mouse.move(0, 0)
    page.screenshot(path=str(SCREENSHOT))
    page.get_by_test_id("template-cancel").click()
    expect(page.get_by_test_id("template-picker")).to_have_count(0)


def test_double_clicks_make_one_blank_graph_and_open_it(page, nodeflow_server, store):
    before = {g.id for g in store.list()}
    page.goto(nodeflow_server.url + "/")
    page.get_by_test_id("graph-count").wait_for()
    page.get_by_test_id("new-graph").dblclick()
    page.get_by_test_id("template-blank").dblclick()
    graph_id = opened_graph_id(page)
    page.wait_for_timeout(1000)  # a second graph, if one were made, would be stored by now
    assert {g.id for g in store.list()} - before == {graph_id}

    # A blank graph is a Chat Start, and the canvas says how to add the next node.
    page.wait_for_function(f"{CANVAS}.nodeCount() === 1")
    expect(page.get_by_test_id("node-Chat Start")).to_be_visible()
    expect(page.get_by_test_id("canvas-hint")).to_contain_text("Click a node in the palette")
    page.get_by_test_id("palette-node-prompt-template").click()
    page.wait_for_function(f"{CANVAS}.nodeCount() === 2")
    expect(page.get_by_test_id("canvas-hint")).to_have_count(0)


def test_a_template_opens_with_its_nodes_and_name(page, nodeflow_server, store):
    template = next(t for t in load_templates() if t.id == "research_summarize")
    open_picker(page, nodeflow_server)
    page.get_by_test_id("template-research_summarize").click()
    graph_id = opened_graph_id(page)
    page.wait_for_function(f"{CANVAS}.nodeCount() === {template.node_count}")
    for node in template.graph["nodes"]:
        expect(page.get_by_test_id(f"node-{node['name']}")).to_be_visible()
    expect(page.get_by_test_id("canvas-hint")).to_have_count(0)
    stored = store.get(graph_id)
    assert stored.name.startswith(template.name) and len(stored.graph["nodes"]) == template.node_count


def test_a_graph_saved_as_a_template_starts_new_graphs_of_the_workspace(page, nodeflow_server, store):
    """Save as template… in a row's menu; New graph lists it under the workspace's templates; a graph made from
    it has its nodes; deleting it takes it off the picker."""
    source = store.create("Desk for templates", load_templates()[1].new_graph())  # joins the owner's workspace
    page.goto(nodeflow_server.url + "/")
    page.get_by_test_id("graph-menu-Desk for templates").click()
    page.get_by_test_id("graph-save-template").click()
    page.get_by_test_id("template-name").fill("Team desk")
    page.get_by_test_id("template-description").fill("Our desk, ready to wire.")
    page.get_by_test_id("template-save").click()
    expect(page.get_by_text("Saved as the template “Team desk”")).to_be_visible()

    open_picker(page, nodeflow_server)
    card = page.get_by_test_id("workspace-templates").get_by_role("button", name="New graph: Team desk")
    expect(card).to_contain_text("Our desk, ready to wire.")
    card.click()
    graph_id = opened_graph_id(page)
    made, original = store.get(graph_id), store.get(source.id)
    assert made.name == "Team desk" and graph_id != source.id
    assert [n["type"] for n in made.graph["nodes"]] == [n["type"] for n in original.graph["nodes"]]

    open_picker(page, nodeflow_server)
    page.get_by_test_id("template-delete-Team desk").click()
    expect(page.get_by_test_id("workspace-templates")).to_have_count(0)
