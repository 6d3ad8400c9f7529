"""The History panel in Chromium: versions listed (an autosave burst as one entry), a version named, opened
read-only, two versions compared on the canvas, the Runs panel's version label, and a restore (confirmed
in a dialog; cancelled, nothing changes).

    Manual --> Shape --> Check --true--> Extra      then: a Wait added, Check's inline value edited, Extra deleted

docs/screenshot-history.png (the README's picture of History) is taken here, showing a comparison.
"""

from __future__ import annotations

import uuid

import pytest
from playwright.sync_api import expect

from nodeflow_app.store.graphs import GraphStore

from .server import Server
from .test_editor import ROOT, node, open_editor


def flow(edge_id: str, source: str, target: str, handle: str = "output") -> dict:
    return {"id": edge_id, "source": source, "sourceHandle": handle, "target": target, "targetHandle": "input",
            "data": {"channel": "flow"}}


def graph() -> dict:
    return {
        "nodes": [
            {"id": "manual", "type": "manual-trigger", "name": "Manual", "position": {"x": 0, "y": 0},
             "data": {"payload": {"status": "ok"}}},
            {"id": "shape", "type": "edit-fields", "name": "Shape", "position": {"x": 300, "y": 0},
             "data": {"fields": [{"name": "checked", "value": "yes"}]}},
            {"id": "check", "type": "conditional", "name": "Check", "position": {"x": 600, "y": 0},
             "data": {"field": "status", "operator": "equals", "value": "ok"}},
            {"id": "extra", "type": "edit-fields", "name": "Extra", "position": {"x": 900, "y": 0},
             "data": {"fields": [{"name": "extra", "value": "1"}]}},
        ],
        "edges": [flow("e1", "manual", "shape"), flow("e2", "shape", "check"), flow("e3", "check", "extra", "true")],
    }


@pytest.fixture
def store(nodeflow_server: Server):
    graphs = GraphStore(f"sqlite:///{nodeflow_server.data_dir / 'nodeflow.db'}")
    yield graphs
    graphs.engine.dispose()


def entry(page, version: int):
    return page.locator(f'[data-testid="history-entry"][data-version="{version}"]')


def saved(page, version: int) -> None:
    expect(page.get_by_test_id("save-status")).to_have_text(f"Saved · v{version}")


def set_check_value(page, value: str) -> None:
    field = page.get_by_test_id("inline-Check-value")
    field.fill(value)
    field.press("Enter")


def marked(page, name: str, status: str):
    """The node drawn with a diff mark (the class is on React Flow's wrapper of the node)."""
    return page.locator(f'.react-flow__node.nf-diff-{status} [data-testid="node-{name}"]')


def test_history_lists_names_opens_compares_and_restores_versions(page, nodeflow_server: Server,
                                                                   store: GraphStore) -> None:
    graph_id = store.create(f"History {uuid.uuid4().hex[:6]}", graph()).id
    open_editor(page, nodeflow_server, graph_id)

    # A test run of version 1, so History can count it and the Runs panel can link to it.
    page.get_by_test_id("rerun").click()
    expect(page.get_by_test_id("status-Check")).to_have_text("completed")

    # Four edits, each autosaved (a burst), then a save by hand.
    page.get_by_test_id("palette-node-wait").click()
    saved(page, 2)
    set_check_value(page, "okay")
    saved(page, 3)
    node(page, "Extra").locator(".nf-header").click()
    page.get_by_test_id("delete-node").click()
    saved(page, 4)
    set_check_value(page, "fine")
    saved(page, 5)
    page.get_by_test_id("save-graph").click()
    saved(page, 6)

    page.get_by_test_id("toggle-history").click()
    titles = page.get_by_test_id("history-title")
    expect(titles).to_have_text(["v6", "v2–v5", "v1"])
    expect(entry(page, 5).get_by_test_id("history-note")).to_have_text("4 autosaves · Admin")  # the signed-in owner saved them
    expect(entry(page, 1).get_by_test_id("history-runs")).to_have_text("1 run")

    # Name version 1.
    entry(page, 1).get_by_test_id("history-name").click()
    page.get_by_test_id("history-name-input").fill("first draft")
    page.get_by_test_id("history-name-save").click()
    expect(entry(page, 1).get_by_test_id("history-label")).to_have_text("first draft")
    assert store.versions(graph_id)[-1].label == "first draft"

    # Version 1 read-only: its nodes and values, no editing (the canvas and the server refuse).
    entry(page, 1).get_by_test_id("history-open").click()
    expect(page.get_by_test_id("history-banner")).to_contain_text("Viewing version 1 — read-only")
    expect(page.get_by_test_id("node-Wait")).to_have_count(0)
    expect(node(page, "Extra")).to_have_count(1)
    expect(page.get_by_test_id("inline-Check-value")).to_have_value("ok")
    expect(page.get_by_test_id("inline-Check-value")).to_be_disabled()
    page.get_by_test_id("palette-node-wait").click()
    expect(page.locator("[data-sonner-toast]").filter(has_text="A stored version is shown")).to_have_count(1)
    page.get_by_test_id("history-back").click()
    expect(page.get_by_test_id("history-banner")).to_have_count(0)
    expect(page.get_by_test_id("node-Wait")).to_have_count(1)
    expect(page.get_by_test_id("inline-Check-value")).to_have_value("fine")
    expect(node(page, "Extra")).to_have_count(0)
    assert store.get(graph_id).version == 6  # the refused edit made no version

    # Restore asks first, naming the version; Cancel keeps the graph as it is.
    entry(page, 1).get_by_test_id("history-restore").click()
    dialog = page.get_by_role("alertdialog")
    expect(dialog).to_contain_text("Restore version 1?")
    expect(dialog).to_contain_text("Version 1 becomes the newest version")
    page.get_by_test_id("history-restore-cancel").click()
    expect(dialog).to_have_count(0)
    expect(page.get_by_test_id("node-Wait")).to_have_count(1)
    expect(page.get_by_test_id("inline-Check-value")).to_have_value("fine")
    expect(titles.first).to_have_text("v6")
    assert store.get(graph_id).version == 6

    # Compare versions 1 and 6: Wait added (green), Extra and its wire removed (red ghosts), Check changed
    # with its value listed; Shape is unchanged (the defaults the editor filled in are no change).
    entry(page, 1).get_by_test_id("history-pick").click()
    entry(page, 6).get_by_test_id("history-pick").click()
    page.get_by_test_id("history-compare").click()
    expect(page.get_by_test_id("history-banner")).to_contain_text("Differences v1 → v6")
    expect(marked(page, "Wait", "added")).to_have_count(1)
    expect(marked(page, "Extra", "removed")).to_have_count(1)
    expect(marked(page, "Check", "changed")).to_have_count(1)
    expect(page.locator(".react-flow__node.nf-diff-changed")).to_have_count(1)
    expect(page.locator(".react-flow__edge.nf-diff-removed")).to_have_count(1)
    expect(page.locator('[data-testid="diff-change"][data-name="Check"]')).to_have_text('value: "ok" -> "fine"')
    expect(page.locator('[data-testid="diff-node"][data-name="Wait"]')).to_contain_text("added")
    expect(page.get_by_test_id("diff-note")).to_have_text(["Edges: 1 removed"])  # socket types filled in: no change
    expect(page.locator("[data-sonner-toast]")).to_have_count(0, timeout=15_000)  # a picture without old toasts
    page.screenshot(path=str(ROOT / "docs" / "screenshot-history.png"))
    page.get_by_test_id("history-back").click()

    # The Runs panel's version label opens the version the run used.
    page.get_by_test_id("toggle-runs").click()
    page.get_by_test_id("run-row").first.click()
    page.get_by_test_id("run-version").click()
    expect(page.get_by_test_id("history-banner")).to_contain_text("Viewing version 1")
    page.get_by_test_id("toggle-runs").click()

    # Restore version 1 from the banner, confirmed: a new version 7 on top, the editor on it.
    page.get_by_test_id("history-banner-restore").click()
    expect(page.get_by_role("alertdialog")).to_contain_text("Restore version 1?")
    page.get_by_test_id("history-restore-confirm").click()
    expect(page.get_by_role("alertdialog")).to_have_count(0)
    expect(page.locator("[data-sonner-toast]").filter(has_text="Version 1 restored as version 7")).to_have_count(1)
    expect(page.get_by_test_id("history-banner")).to_have_count(0)
    saved(page, 7)
    expect(page.get_by_test_id("node-Wait")).to_have_count(0)
    expect(node(page, "Extra")).to_have_count(1)
    expect(page.get_by_test_id("inline-Check-value")).to_have_value("ok")
    expect(titles.first).to_have_text("v7")
    expect(entry(page, 7).get_by_test_id("history-note")).to_have_text("restored from v1 · Admin")
    stored = store.get(graph_id)
    assert stored.version == 7 and [n["id"] for n in stored.graph["nodes"]] == ["manual", "shape", "check", "extra"]

    # The restored graph is edited like any other.
    set_check_value(page, "again")
    saved(page, 8)
