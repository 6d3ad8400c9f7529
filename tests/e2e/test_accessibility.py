"""Every form control has a name a screen reader can say: a label tied to it, `aria-label` or `aria-labelledby`.

A placeholder does not count (it is an example, and gone once typed in: the inspector's Template field was named
"Summarise {text} in {language}.", a retry count "1"). Checked in Chromium on the pages people fill in: sign-in, the
graph list, the workspace page, settings, knowledge, and the editor's inspector for a node of every type (its list
rows added, its run settings open).
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from nodeflow_app.store.graphs import GraphStore
from nodes._registry import default_registry

from .server import Server, owner_graph, signed_in_context

pytestmark = pytest.mark.e2e

# The visible controls of `root` that have no name, as "tag[data-testid] placeholder" strings.
UNNAMED = """(root) => [...(root || document).querySelectorAll(
    'input:not([type=hidden]):not([type=file]), textarea, select, [role=combobox], [role=switch], [role=slider], '
    + '[role=checkbox]')]
  .filter((e) => e.getClientRects().length > 0 && !e.closest('[aria-hidden=true]'))  // Radix's form-only <select>
  .filter((e) => !((e.labels && e.labels.length) || e.getAttribute('aria-label') || e.getAttribute('aria-labelledby')
                   || (e.getAttribute('role') === 'checkbox' && e.closest('label'))))
  .map((e) => `${e.tagName.toLowerCase()}[${e.dataset.testid || (e.closest('[data-testid]') || {dataset: {}})
                 .dataset.testid}] ${e.placeholder || ''}`.trim())"""


def unnamed(page, root: str | None = None) -> list[str]:
    return page.evaluate(UNNAMED, page.query_selector(root) if root else None)


def test_the_sign_in_page_ties_its_labels_to_their_inputs(browser, nodeflow_server: Server) -> None:
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.goto(nodeflow_server.url + "/")
    page.get_by_test_id("auth-submit").wait_for()
    assert unnamed(page) == []
    page.get_by_text("Email", exact=True).click()  # a click on a label focuses its input
    expect(page.get_by_label("Email")).to_be_focused()
    page.get_by_label("Password").fill("not the password")
    context.close()


@pytest.mark.parametrize("path, ready", [("/", "graph-search"), ("/workspace", "workspace-title"),
                                         ("/workspace/credentials", "connection-save"), ("/knowledge", "new-collection")])
def test_page_controls_have_names(page, nodeflow_server: Server, path: str, ready: str) -> None:
    """(The list page with a graph in it: its row has an Active switch.)"""
    owner_graph(nodeflow_server, "Named controls")
    page.goto(nodeflow_server.url + path)
    page.get_by_test_id(ready).first.wait_for()
    page.wait_for_load_state("networkidle")
    assert unnamed(page) == []


def every_node_type() -> dict:
    """One node of each type, eight to a row, with default settings."""
    nodes = [{"id": f"n{i}", "type": d.id, "name": d.name, "position": {"x": (i % 8) * 260, "y": (i // 8) * 160},
              "data": {}} for i, d in enumerate(default_registry().definitions())]
    return {"nodes": nodes, "edges": []}


def test_the_inspector_names_every_control_of_every_node_type(page, nodeflow_server: Server) -> None:
    graph_id, graph = owner_graph(nodeflow_server, "Every node type"), every_node_type()
    graphs = GraphStore(nodeflow_server.db_url)
    try:
        graphs.save(graph_id, graph)
    finally:
        graphs.engine.dispose()
    page.goto(f"{nodeflow_server.url}/graph/{graph_id}")
    page.wait_for_function("window.__nodeflowCanvas && window.__nodeflowCanvas.rev() > 0")
    problems = {}
    for node in graph["nodes"]:
        page.locator(f".react-flow__node[data-id={node['id']}] .nf-header").click()
        form = page.locator(f"[data-testid=inspector-form-{node['type']}]")
        form.wait_for()
        for add in form.locator("[data-testid^=add-]").all():
            add.click()
        page.get_by_test_id("inspector-settings-toggle").click()
        page.wait_for_load_state("networkidle")
        if missing := unnamed(page, "[data-testid=inspector]"):
            problems[node["type"]] = missing
    assert problems == {}
