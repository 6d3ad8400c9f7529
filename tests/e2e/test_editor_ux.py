"""The editor's rough edges a newcomer hits (issue 11, point 5), in Chromium at 1440x900.

    Manual --> Shape (Edit Fields) --> Ask (LLM Completion, openai-compatible: the fake server)
"""

from __future__ import annotations

import json
import re
import uuid

import pytest
from playwright.sync_api import expect

from nodeflow_app.store.graphs import GraphStore

from .server import Server, signed_in_context
from .team import make_team
from .test_editor import (CANVAS, EXAMPLES, click_pane, expect_counts, node, open_editor, position, select, seq,
                          wait_loaded, wait_seq)


def flow(edge_id: str, source: str, target: str) -> dict:
    return {"id": edge_id, "source": source, "sourceHandle": "output", "target": target, "targetHandle": "input",
            "data": {"channel": "flow"}}


def pipeline() -> dict:
    return {
        "nodes": [
            {"id": "manual", "type": "manual-trigger", "name": "Manual", "position": {"x": 0, "y": 0},
             "data": {"payload": {"user": {"name": "Ada"}, "topic": "tea"}}},
            {"id": "shape", "type": "edit-fields", "name": "Shape", "position": {"x": 300, "y": 0},
             "data": {"fields": [{"name": "status", "value": "ok"}]}},
            {"id": "ask", "type": "llm-completion", "name": "Ask", "position": {"x": 600, "y": 0},
             "data": {"model": "openai-compatible:fake-model", "prompt": "Hi"}},
        ],
        "edges": [flow("e1", "manual", "shape"), flow("e2", "shape", "ask")],
    }


@pytest.fixture
def store(nodeflow_server: Server):
    graphs = GraphStore(f"sqlite:///{nodeflow_server.data_dir / 'nodeflow.db'}")
    yield graphs
    graphs.engine.dispose()


def test_the_graph_name_is_edited_in_the_header(page, nodeflow_server: Server, store: GraphStore) -> None:
    graph_id = store.create(f"Name {uuid.uuid4().hex[:6]}").id
    open_editor(page, nodeflow_server, graph_id)
    name = page.get_by_test_id("graph-name")
    name.fill("Support desk")
    name.press("Enter")
    for _ in range(50):
        if store.get(graph_id).name == "Support desk":
            break
        page.wait_for_timeout(100)
    assert store.get(graph_id).name == "Support desk"
    expect(page).to_have_title("Support desk · NodeFlow")  # the browser's tab says which graph it holds
    page.reload()
    expect(page.get_by_test_id("graph-name")).to_have_value("Support desk")
    # An empty name is refused with the store's reason; the field shows the name the graph still has.
    name = page.get_by_test_id("graph-name")
    name.fill("   ")
    name.press("Enter")
    expect(page.locator("[data-sonner-toast]").filter(has_text="a graph needs a name")).to_have_count(1)
    expect(page.get_by_test_id("graph-name")).to_have_value("Support desk")


def test_palette_search_hides_categories_without_a_match(page, nodeflow_server: Server, store: GraphStore) -> None:
    open_editor(page, nodeflow_server, store.create(f"Search {uuid.uuid4().hex[:6]}").id)
    search = page.get_by_test_id("palette-search")
    search.fill("approval")
    expect(page.get_by_test_id("palette-node-approval")).to_be_visible()
    expect(page.get_by_test_id("palette-group-flow")).to_be_visible()
    for category in ("ai", "trigger", "data", "tools", "utility"):
        expect(page.get_by_test_id(f"palette-group-{category}")).to_be_hidden()
    search.fill("zzz-nothing")
    expect(page.get_by_test_id("palette-no-match")).to_be_visible()
    expect(page.get_by_test_id("palette-group-flow")).to_be_hidden()
    search.fill("")
    expect(page.get_by_test_id("palette-group-ai")).to_be_visible()
    expect(page.get_by_test_id("palette-no-match")).to_be_hidden()


def test_typing_moves_the_slider_and_letters_get_a_message(page, nodeflow_server: Server, store: GraphStore) -> None:
    open_editor(page, nodeflow_server, store.create(f"Numbers {uuid.uuid4().hex[:6]}", pipeline()).id)
    select(page, "Ask", "llm-completion")
    temperature = page.get_by_test_id("field-temperature")
    thumb = page.get_by_test_id("slider-temperature").locator("[role=slider]")  # hidden from screen readers
    temperature.fill("1.5")  # typed, not yet committed: the slider follows
    expect(thumb).to_have_attribute("aria-valuenow", "1.5")
    edits = seq(page)
    temperature.press("Enter")
    wait_seq(page, edits + 1)
    expect(thumb).to_have_attribute("aria-valuenow", "1.5")

    temperature = page.get_by_test_id("field-temperature")
    temperature.fill("warm")
    temperature.press("Enter")
    expect(page.get_by_test_id("error-temperature")).to_have_text("Temperature: 'warm' is not a number")
    expect(page.get_by_test_id("field-temperature")).to_have_value("warm")  # kept, not vanished
    page.get_by_test_id("validate").click()
    expect(page.get_by_test_id("issue")).to_contain_text("'Ask' temperature: expected float, got str 'warm'")


def test_invalid_json_survives_a_reload_and_blocks_runs_until_fixed(page, nodeflow_server: Server,
                                                                    store: GraphStore) -> None:
    graph_id = store.create(f"JSON {uuid.uuid4().hex[:6]}", pipeline()).id
    open_editor(page, nodeflow_server, graph_id)
    select(page, "Manual", "manual-trigger")
    typed = '{"topic": "tea",\n "user": {"name": "Ada"}'
    payload = page.get_by_test_id("field-payload")
    payload.fill(typed)
    edits = seq(page)
    payload.blur()  # leaving the field stores it, kept as typed
    wait_seq(page, edits + 1)
    error = "Test payload: invalid JSON at line 2, column 25: Expecting ',' delimiter"
    expect(page.get_by_test_id("error-payload")).to_have_text(error)

    page.reload()  # the text and its error are still there
    wait_loaded(page)
    select(page, "Manual", "manual-trigger")
    expect(page.get_by_test_id("field-payload")).to_have_value(typed)
    expect(page.get_by_test_id("error-payload")).to_have_text(error)
    page.get_by_test_id("validate").click()
    refused = "'Manual' payload: not valid JSON (the text typed in the editor is kept until it is fixed there)"
    expect(page.get_by_test_id("issue")).to_contain_text(refused)
    page.keyboard.press("Escape")
    page.get_by_test_id("run-to-here").click()
    expect(page.locator("[data-sonner-toast]").filter(has_text="node 'Manual' parameter 'payload': not valid JSON")
           ).to_have_count(1)

    payload = page.get_by_test_id("field-payload")
    payload.fill(typed + "}")
    edits = seq(page)
    payload.blur()
    wait_seq(page, edits + 1)
    expect(page.get_by_test_id("error-payload")).to_have_count(0)
    page.reload()  # saves what was not saved yet
    wait_loaded(page)
    select(page, "Manual", "manual-trigger")
    fixed = {"topic": "tea", "user": {"name": "Ada"}}
    expect(page.get_by_test_id("field-payload")).to_have_value(json.dumps(fixed, indent=2))
    expect(page.get_by_test_id("error-payload")).to_have_count(0)
    assert store.get(graph_id).graph["nodes"][0]["data"]["payload"] == fixed


def test_a_card_shows_a_kept_invalid_json_value_as_such(page, nodeflow_server: Server, store: GraphStore) -> None:
    """A json parameter shown on the card (HTTP Request's file) summarised the kept text's envelope as a key list."""
    graph = {"nodes": [{"id": "get", "type": "http-request", "name": "Get", "position": {"x": 0, "y": 0},
                        "data": {"url": "https://example.com", "body_type": "multipart",  # the file's row shows
                                 "file": {"$invalid_json": '{"name": "a.txt",\n'}}}],
             "edges": []}
    open_editor(page, nodeflow_server, store.create(f"Kept {uuid.uuid4().hex[:6]}", graph).id)
    expect(page.get_by_test_id("inline-Get-file")).to_have_text('invalid JSON: {"name": "a.txt",')


def test_upstream_chips_and_last_output_fields_insert_at_the_cursor(page, nodeflow_server: Server,
                                                                    store: GraphStore, fake_llm) -> None:
    open_editor(page, nodeflow_server, store.create(f"Fields {uuid.uuid4().hex[:6]}", pipeline()).id)
    page.get_by_test_id("rerun").click()  # a run gives the upstream nodes an output to offer
    expect(page.get_by_test_id("status-Ask")).to_have_text("completed", timeout=15_000)

    select(page, "Ask", "llm-completion")
    page.get_by_test_id("expr-prompt").click()
    # The switch remounts the form with the stored value: text typed before it comes back would be replaced.
    expect(page.get_by_test_id("expr-prompt")).to_have_attribute("aria-pressed", "true")
    prompt = page.get_by_test_id("field-prompt")
    prompt.fill("Hello  ok")
    prompt.evaluate("e => e.setSelectionRange(6, 6)")  # the cursor between the two spaces
    page.get_by_test_id("expression-hint").get_by_test_id("upstream-name").filter(has_text="Manual").click()
    expect(prompt).to_have_value("Hello {{ $('Manual').item.json }} ok")
    expect(page.get_by_test_id("expression-inserted")).to_have_text("Inserted {{ $('Manual').item.json }}")

    fields = page.get_by_test_id("upstream-fields")
    expect(fields).to_contain_text("user.name")
    prompt.evaluate("e => e.setSelectionRange(e.value.length, e.value.length)")
    fields.get_by_test_id("upstream-field").filter(has_text="user.name").first.click()
    expect(prompt).to_have_value("Hello {{ $('Manual').item.json }} ok{{ $('Shape').item.json.user.name }}")
    edits = seq(page)
    prompt.press("Tab")  # leaving the field stores it
    wait_seq(page, edits + 1)

    # With no text field focused, a chip copies its expression and says so.
    page.get_by_test_id("inspector-type").click()
    page.get_by_test_id("expression-hint").get_by_test_id("upstream-name").filter(has_text="Shape").click()
    expect(page.get_by_test_id("expression-inserted")).to_contain_text("Copied {{ $('Shape').item.json }}")


def test_a_chat_start_test_run_asks_for_the_message(page, nodeflow_server: Server, store: GraphStore,
                                                    fake_llm) -> None:
    graph = {"nodes": [{"id": "chat", "type": "chat-start", "name": "Chat Start", "position": {"x": 0, "y": 0},
                        "data": {}},
                       {"id": "llm", "type": "llm-completion", "name": "Reply", "position": {"x": 300, "y": 0},
                        "data": {"model": "openai-compatible:fake-model"}}],
             "edges": [flow("e1", "chat", "llm")]}
    open_editor(page, nodeflow_server, store.create(f"Test message {uuid.uuid4().hex[:6]}", graph).id)
    page.get_by_test_id("test-message").click()
    box = page.get_by_test_id("test-message-input")
    box.fill("Is the shop open on Sunday?")
    page.get_by_test_id("test-message-run").click()
    expect(page.get_by_test_id("status-Reply")).to_have_text("completed", timeout=15_000)
    sent = fake_llm.requests[-1]["messages"][-1]["content"]
    assert "Is the shop open on Sunday?" in str(sent)


def test_a_run_status_leaves_the_node_its_name(page, nodeflow_server: Server, store: GraphStore) -> None:
    """The status is an icon on the header (its word in the tooltip and for screen readers): the word took the
    room of the node's name, which showed as "Shop an…" once a run had passed."""
    graph = {"nodes": [{"id": "chat", "type": "chat-start", "name": "Chat Start", "position": {"x": 0, "y": 0},
                        "data": {}},
                       {"id": "reply", "type": "prompt-template", "name": "Shop answer", "position": {"x": 300, "y": 0},
                        "data": {}}],
             "edges": [flow("e1", "chat", "reply")]}
    open_editor(page, nodeflow_server, store.create(f"Status {uuid.uuid4().hex[:6]}", graph).id)
    page.get_by_test_id("test-message").click()
    page.get_by_test_id("test-message-input").fill("Open on Sunday?")
    page.get_by_test_id("test-message-run").click()
    status = page.get_by_test_id("status-Shop answer")
    expect(status).to_have_text("completed", timeout=15_000)
    assert status.get_attribute("title") == "completed"
    page.get_by_test_id("node-Shop answer").locator(".nf-header").click()  # selected: "Run to here" shows too
    title = page.get_by_test_id("node-Shop answer").locator(".nf-title")
    assert title.evaluate("e => e.scrollWidth <= e.clientWidth"), "the node's name is cut off"


def test_panels_fold_the_chat_leaves_half_the_width_and_clicked_nodes_do_not_stack(
        page, nodeflow_server: Server, store: GraphStore) -> None:
    open_editor(page, nodeflow_server, store.create(f"Layout {uuid.uuid4().hex[:6]}", pipeline()).id)
    canvas = page.get_by_test_id("canvas")

    # Nodes added by clicks each take a free spot.
    for count in range(4):
        edits = seq(page)
        page.get_by_test_id("palette-node-edit-fields").click()
        wait_seq(page, edits + 1)
    names = ["Edit Fields", "Edit Fields 2", "Edit Fields 3", "Edit Fields 4"]
    boxes = [node(page, name).bounding_box() for name in names]
    for index, first in enumerate(boxes):
        for second in boxes[index + 1:]:
            apart = (first["x"] + first["width"] <= second["x"] or second["x"] + second["width"] <= first["x"]
                     or first["y"] + first["height"] <= second["y"] or second["y"] + second["height"] <= first["y"])
            assert apart, (first, second)
    assert len({position(page, name) for name in names}) == 4

    # With the chat open (a node selected) the palette and the inspector fold by themselves: the canvas
    # keeps at least half of the 1440 px. Closing the chat gives the room back.
    select(page, "Ask", "llm-completion")
    page.get_by_test_id("toggle-chat").click()
    expect(page.get_by_test_id("chat-panel")).to_be_visible()
    expect(page.get_by_test_id("palette-unfold")).to_be_visible()
    expect(page.get_by_test_id("inspector-unfold")).to_be_visible()
    assert canvas.bounding_box()["width"] >= 720
    page.get_by_test_id("chat-close").click()
    expect(page.get_by_test_id("chat-panel")).to_have_count(0)
    expect(page.get_by_test_id("inspector-form-llm-completion")).to_be_visible()

    # Folded and unfolded by hand.
    page.get_by_test_id("palette-fold").click()
    expect(page.get_by_test_id("palette")).to_have_count(0)
    page.get_by_test_id("palette-unfold").click()
    expect(page.get_by_test_id("palette")).to_be_visible()
    page.get_by_test_id("inspector-fold").click()
    expect(page.get_by_test_id("inspector")).to_have_count(0)
    page.get_by_test_id("inspector-unfold").click()
    expect(page.get_by_test_id("inspector-form-llm-completion")).to_be_visible()


def inside(box: dict, area: dict) -> bool:
    return (area["x"] <= box["x"] and box["x"] + box["width"] <= area["x"] + area["width"]
            and area["y"] <= box["y"] and box["y"] + box["height"] <= area["y"] + area["height"])


def overlap(a: dict, b: dict) -> bool:
    return not (a["x"] + a["width"] <= b["x"] or b["x"] + b["width"] <= a["x"]
                or a["y"] + a["height"] <= b["y"] or b["y"] + b["height"] <= a["y"])


def test_clicked_palette_nodes_land_in_the_visible_canvas_beside_the_selection(
        page, nodeflow_server: Server, store: GraphStore) -> None:
    open_editor(page, nodeflow_server, store.create(f"Placing {uuid.uuid4().hex[:6]}", pipeline()).id)
    # The graph fills the view's width: right of Ask, the rightmost node, is under the inspector.
    select(page, "Ask", "llm-completion")
    canvas = page.get_by_test_id("canvas").bounding_box()
    inspector = page.get_by_test_id("inspector").bounding_box()
    covers = [page.locator(f".react-flow__{panel}").bounding_box() for panel in ("minimap", "controls")]
    placed = [node(page, name) for name in ("Manual", "Shape", "Ask")]
    for index, (node_type, testid) in enumerate([
            ("edit-fields", "node-Edit Fields"), ("wait", "node-Wait"), ("edit-fields", "node-Edit Fields 2"),
            ("conditional", "node-Conditional"), ("llm-completion", "node-LLM Completion"),
            ("for-each", "frame-For Each"), ("wait", "node-Wait 2")]):
        if index == 3:
            click_pane(page)  # nothing selected: beside the last node, still in view
        edits = seq(page)
        page.get_by_test_id(f"palette-node-{node_type}").click()
        wait_seq(page, edits + 1)
        added = page.get_by_test_id(testid)
        expect(added).to_be_visible()
        box = added.bounding_box()
        assert inside(box, canvas), (testid, box, canvas)
        assert box["x"] + box["width"] <= inspector["x"], (testid, box, inspector)
        for cover in covers:
            assert not overlap(box, cover), (testid, box, cover)
        for other in placed:
            assert not overlap(box, other.bounding_box()), (testid, other)
        placed.append(added)


def test_deleting_a_node_that_expressions_read_names_them_in_a_toast(
        page, nodeflow_server: Server, store: GraphStore) -> None:
    graph = pipeline()
    graph["nodes"][2]["data"]["prompt"] = "Status: {{ $('Shape').item.json.status }}"
    open_editor(page, nodeflow_server, store.create(f"Deleting {uuid.uuid4().hex[:6]}", graph).id)
    warning = "Deleted 'Shape', which expressions in 'Ask' still read: change them, or undo (Ctrl+Z)"

    # The Delete key: Shape goes, and the toast says Ask's prompt still reads it.
    select(page, "Shape", "edit-fields")
    edits = seq(page)
    page.keyboard.press("Delete")
    wait_seq(page, edits + 1)
    expect(page.locator("[data-sonner-toast]").filter(has_text=warning)).to_have_count(1)
    expect(node(page, "Shape")).to_have_count(0)

    # Undo brings it back; a node no expression reads goes without a word (the toolbar's delete).
    page.get_by_test_id("undo").click()
    expect(node(page, "Shape")).to_have_count(1)
    select(page, "Manual", "manual-trigger")
    edits = seq(page)
    page.get_by_test_id("delete-node").click()
    wait_seq(page, edits + 1)
    expect(node(page, "Manual")).to_have_count(0)
    select(page, "Shape", "edit-fields")
    page.get_by_test_id("delete-node").click()
    expect(page.locator("[data-sonner-toast]").filter(has_text=warning)).to_have_count(2)
    expect(page.locator("[data-sonner-toast]").filter(has_text="Deleted 'Manual'")).to_have_count(0)


# Every control of the toolbar the window shows (hidden ones, e.g. a word dropped in a narrow window, are 0 wide),
# and whether anything scrolls sideways.
TOOLBAR_LAYOUT = """() => {
  const bar = document.querySelector('[data-testid="editor-toolbar"]');
  const controls = [...bar.querySelectorAll('button, input, a, label, .rt-Badge')].map((e) => {
    const r = e.getBoundingClientRect();
    return {name: e.dataset.testid || e.getAttribute('aria-label') || e.textContent, left: r.left, right: r.right,
            width: r.width};
  }).filter((c) => c.width > 0);
  const page = document.documentElement;
  return {controls, pageScroll: page.scrollWidth - page.clientWidth, barScroll: bar.scrollWidth - bar.clientWidth,
          status: document.querySelector('[data-testid="save-status"]').textContent};
}"""


def _all_reachable(layout: dict, width: int) -> None:
    assert layout["pageScroll"] <= 0 and layout["barScroll"] <= 0, layout
    outside = [c for c in layout["controls"] if c["left"] < 0 or c["right"] > width]
    assert not outside, (width, outside)


def test_the_toolbar_fits_from_1024_px_and_holds_still(browser, nodeflow_server: Server) -> None:
    """At 1024 px the toolbar was 1434 px wide (History to Chat off screen; clicking Chat scrolled the page
    sideways); at 1440 px "Unsaved changes" cut Chat to "Ch" and moved the buttons ~35 px at every edit. Here
    at its widest: a long name, the graph live, a Chat Start's test button, unsaved changes."""
    team = make_team(nodeflow_server, ["viewer"])
    graph = json.loads((EXAMPLES / "webhook.json").read_text())
    graph["nodes"].append({"id": "chat", "type": "chat-start", "name": "Chat Start", "position": {"x": 0, "y": 300},
                           "data": {}})
    name = "Refund triage for the EU shops"
    graph_id = team.graph(name, graph)
    # 1440 again at the end: with the first pass's edit saved but not live, the toolbar's widest.
    for index, (width, height) in enumerate(((1440, 900), (1280, 800), (1024, 768), (1440, 900))):
        context = team.context(browser, team.owner, viewport={"width": width, "height": height})
        page = context.new_page()
        open_editor(page, nodeflow_server, graph_id)
        expect(page).to_have_title(f"{name} · NodeFlow")
        if page.get_by_test_id("graph-active-label").count() == 0:
            expect(page.get_by_text("Active", exact=True)).to_be_visible()  # the switch's word, while off
            page.get_by_test_id("graph-active").click()
        # After the first pass, its edit is saved but not live: the badge says so, with "Make vN live" beside it.
        first = index == 0
        expect(page.get_by_test_id("graph-active-label")).to_have_text(
            re.compile(r"^Live · v1$") if first else re.compile(r"^Live · v1 \(v\d+ saved\)$"))
        expect(page.get_by_test_id("make-latest-live")).to_have_count(0 if first else 1)
        expect(page.get_by_test_id("save-status")).to_have_text(re.compile(r"^Saved"))
        chat = page.get_by_test_id("toggle-chat").bounding_box()
        _all_reachable(page.evaluate(TOOLBAR_LAYOUT), width)

        # An edit: measured while the badge says so (the autosave follows within a second).
        page.evaluate(f"{CANVAS}.send('onMove', {{moves: [{{id: 'chat', position: {{x: {width}, y: 300}}}}]}})")
        unsaved = page.wait_for_function(
            f"() => {{ const l = ({TOOLBAR_LAYOUT})(); return l.status === 'Unsaved changes' && l; }}",
            polling=20).json_value()
        _all_reachable(unsaved, width)
        assert [c for c in unsaved["controls"] if c["name"] == "toggle-chat"][0]["left"] == chat["x"]

        # Icon-only buttons say what they are; a graph that never ran has nothing to re-run.
        page.get_by_test_id("test-message").hover()
        expect(page.get_by_role("tooltip")).to_contain_text("Test run with a message")
        expect(page.get_by_role("button", name="Run", exact=True)).to_be_visible()

        page.get_by_test_id("toggle-chat").click()  # opening the chat scrolled the page sideways
        expect(page.get_by_test_id("chat-panel")).to_be_visible()
        _all_reachable(page.evaluate(TOOLBAR_LAYOUT), width)
        context.close()

        viewer_context = team.context(browser, team.members[0], viewport={"width": width, "height": height})
        viewer = viewer_context.new_page()
        open_editor(viewer, nodeflow_server, graph_id)
        expect(viewer.get_by_test_id("view-only")).to_be_visible()
        expect(viewer.get_by_test_id("graph-active-label")).to_contain_text("saved)")  # told, but not offered
        expect(viewer.get_by_test_id("make-latest-live")).to_have_count(0)
        _all_reachable(viewer.evaluate(TOOLBAR_LAYOUT), width)
        viewer_context.close()


def test_the_run_button_says_run_until_the_graph_has_run(page, nodeflow_server: Server, store: GraphStore,
                                                          fake_llm) -> None:
    """It said "Re-run" on a graph that had never run."""
    graph_id = store.create(f"First run {uuid.uuid4().hex[:6]}", pipeline()).id
    open_editor(page, nodeflow_server, graph_id)
    run = page.get_by_test_id("rerun")
    expect(run).to_have_text("Run")
    run.click()
    expect(page.get_by_test_id("status-Ask")).to_have_text("completed", timeout=15_000)
    expect(run).to_have_text("Re-run")
    other = page.context.new_page()  # a new tab (a state of its own) finds the run in the store
    open_editor(other, nodeflow_server, graph_id)
    expect(other.get_by_test_id("rerun")).to_have_text("Re-run")


def test_a_narrow_window_starts_with_the_palette_folded_and_no_minimap(browser, nodeflow_server: Server,
                                                                        store: GraphStore) -> None:
    """At 1024 px the open palette and the minimap left the canvas ~380 px, half of it under the minimap."""
    graph_id = store.create(f"Narrow {uuid.uuid4().hex[:6]}", pipeline()).id
    context = signed_in_context(browser, nodeflow_server, viewport={"width": 1024, "height": 768})
    page = context.new_page()
    open_editor(page, nodeflow_server, graph_id)
    expect(page.get_by_test_id("palette-unfold")).to_be_visible()
    expect(page.get_by_test_id("palette")).to_be_hidden()
    expect(page.locator(".react-flow__minimap")).to_be_hidden()
    assert page.get_by_test_id("canvas").bounding_box()["width"] >= 600
    page.get_by_test_id("palette-unfold").click()  # unfolded by hand, it stays
    expect(page.get_by_test_id("palette")).to_be_visible()
    page.set_viewport_size({"width": 1440, "height": 900})  # wide enough for both
    expect(page.locator(".react-flow__minimap")).to_be_visible()
    context.close()


def focused(page) -> str | None:
    return page.evaluate("document.activeElement?.dataset?.testid ?? null")


def test_typed_text_is_saved_while_typing_one_burst_is_one_undo_step_and_a_reload_keeps_it(
        page, nodeflow_server: Server, store: GraphStore) -> None:
    """n8n saves parameters as they are typed: a field was saved only when left, so a reload or a closed tab
    lost what was typed in it, without a word."""
    graph_id = store.create(f"Typing {uuid.uuid4().hex[:6]}", pipeline()).id
    open_editor(page, nodeflow_server, graph_id)
    select(page, "Ask", "llm-completion")
    prompt = page.get_by_test_id("field-prompt")
    prompt.click()
    prompt.press("Control+a")
    edits = seq(page)
    page.keyboard.type("Summarize")
    wait_seq(page, edits + 1)  # saved a moment after the last keystroke; the field is not left
    page.keyboard.type(" the topic")
    wait_seq(page, edits + 2)
    assert focused(page) == "field-prompt"
    expect(prompt).to_have_value("Summarize the topic")

    # The burst is one undo step, not one per save.
    page.get_by_test_id("undo").click()
    expect(page.get_by_test_id("field-prompt")).to_have_value("Hi")
    page.get_by_test_id("redo").click()
    expect(page.get_by_test_id("field-prompt")).to_have_value("Summarize the topic")

    # Typed, then reloaded without leaving the field: the room has the text, so the page leaves without asking.
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.type), dialog.accept()))
    prompt = page.get_by_test_id("field-prompt")
    prompt.click()
    prompt.press("Control+End")
    edits = seq(page)
    page.keyboard.type(" briefly")
    wait_seq(page, edits + 1)
    page.reload()
    wait_loaded(page)
    assert dialogs == []
    select(page, "Ask", "llm-completion")
    expect(page.get_by_test_id("field-prompt")).to_have_value("Summarize the topic briefly")
    assert store.get(graph_id).graph["nodes"][2]["data"]["prompt"] == "Summarize the topic briefly"


def test_a_row_cell_is_saved_while_typed_in_and_keeps_its_focus(page, nodeflow_server: Server,
                                                                store: GraphStore) -> None:
    """Row cells remounted whenever their text changed: saved while typing, each save would have taken the focus."""
    graph_id = store.create(f"Rows {uuid.uuid4().hex[:6]}", pipeline()).id
    open_editor(page, nodeflow_server, graph_id)
    select(page, "Shape", "edit-fields")
    cell = page.get_by_test_id("row-fields-value")
    cell.click()
    cell.press("Control+a")
    edits = seq(page)
    page.keyboard.type("fine")
    wait_seq(page, edits + 1)
    page.keyboard.type(" and dandy")
    wait_seq(page, edits + 2)
    assert focused(page) == "row-fields-value"
    expect(cell).to_have_value("fine and dandy")
    # A row added or removed remounts the cells with their texts (the rows after a removed one move up).
    page.get_by_test_id("add-fields").click()
    wait_seq(page, edits + 3)
    page.get_by_test_id("row-fields-name").nth(1).fill("second")
    page.get_by_test_id("row-fields-name").nth(1).press("Enter")
    wait_seq(page, edits + 4)
    page.get_by_test_id("remove-fields").first.click()
    wait_seq(page, edits + 5)
    expect(page.get_by_test_id("row-fields-name")).to_have_count(1)
    expect(page.get_by_test_id("row-fields-name")).to_have_value("second")
    expect(page.get_by_test_id("row-fields-value")).to_have_value("")


def test_a_save_typed_before_another_node_was_selected_stays_with_its_node(page, nodeflow_server: Server,
                                                                            store: GraphStore) -> None:
    """A save is sent a moment after the last keystroke: by then the inspector may show another node, with a
    field of the same name."""
    graph = pipeline()
    graph["nodes"].append({"id": "ask2", "type": "llm-completion", "name": "Ask 2", "position": {"x": 600, "y": 220},
                           "data": {"model": "openai-compatible:fake-model", "prompt": "Other"}})
    graph_id = store.create(f"Two asks {uuid.uuid4().hex[:6]}", graph).id
    open_editor(page, nodeflow_server, graph_id)
    select(page, "Ask", "llm-completion")
    prompt = page.get_by_test_id("field-prompt")
    prompt.click()
    prompt.press("Control+a")
    page.keyboard.type("Mine")
    select(page, "Ask 2", "llm-completion")  # at once, before the save typed above is sent
    page.wait_for_timeout(1500)
    select(page, "Ask", "llm-completion")
    expect(page.get_by_test_id("field-prompt")).to_have_value("Mine")
    select(page, "Ask 2", "llm-completion")
    expect(page.get_by_test_id("field-prompt")).to_have_value("Other")


def test_leaving_with_text_the_room_lacks_asks_first_and_sends_it(page, nodeflow_server: Server,
                                                                  store: GraphStore) -> None:
    graph_id = store.create(f"Leaving {uuid.uuid4().hex[:6]}", pipeline()).id
    open_editor(page, nodeflow_server, graph_id)
    select(page, "Manual", "manual-trigger")
    payload = page.get_by_test_id("field-payload")
    payload.click()
    payload.press("Control+a")
    edits = seq(page)
    page.keyboard.type('{"topic": "coffee"')  # JSON half-way: not saved while typed, and no error flashes
    page.wait_for_timeout(1500)
    assert seq(page) == edits
    expect(page.get_by_test_id("error-payload")).to_have_count(0)

    # Leaving now: the browser asks (the answer here: stay), and the field is left on the way, which sends it.
    dialogs: list[str] = []

    def stay(dialog) -> None:
        dialogs.append(dialog.type)
        dialog.dismiss()
    page.on("dialog", stay)
    page.close(run_before_unload=True)
    wait_seq(page, edits + 1)
    assert dialogs == ["beforeunload"]
    error = "Test payload: invalid JSON at line 1, column 19: Expecting ',' delimiter"
    expect(page.get_by_test_id("error-payload")).to_have_text(error)

    # Finished while typing: valid JSON is saved without leaving the field, written as the server writes it.
    payload.click()
    payload.press("Control+End")
    page.keyboard.type("}")
    wait_seq(page, edits + 2)
    expect(page.get_by_test_id("error-payload")).to_have_count(0)
    assert focused(page) == "field-payload"
    page.reload()  # the room has it: no question
    wait_loaded(page)
    assert dialogs == ["beforeunload"]
    # Saved by the tab's autosave or the reload's load, which may still be under way when the graph shows.
    expect(page.get_by_test_id("save-status")).to_contain_text("Saved")
    assert store.get(graph_id).graph["nodes"][0]["data"]["payload"] == {"topic": "coffee"}


def test_someone_elses_edit_of_another_field_leaves_the_one_being_typed_in(page, nodeflow_server: Server,
                                                                          store: GraphStore) -> None:
    """Another tab's edit of the node remounted the whole form here, taking the focus and what was typed."""
    graph_id = store.create(f"Two tabs {uuid.uuid4().hex[:6]}", pipeline()).id
    open_editor(page, nodeflow_server, graph_id)
    other = page.context.new_page()
    open_editor(other, nodeflow_server, graph_id)
    select(page, "Ask", "llm-completion")
    select(other, "Ask", "llm-completion")
    prompt = page.get_by_test_id("field-prompt")
    prompt.click()
    prompt.press("Control+a")
    edits = seq(page)
    page.keyboard.type("Tell me")
    wait_seq(page, edits + 1)
    expect(other.get_by_test_id("field-prompt")).to_have_value("Tell me")

    other.get_by_test_id("field-system_prompt").click()
    other.keyboard.type("Be brief")
    wait_seq(page, edits + 2)
    expect(page.get_by_test_id("field-system_prompt")).to_have_value("Be brief")
    assert focused(page) == "field-prompt"
    page.keyboard.type(" a joke")
    wait_seq(other, edits + 3)
    for tab in (page, other):
        expect(tab.get_by_test_id("field-prompt")).to_have_value("Tell me a joke")
        expect(tab.get_by_test_id("field-system_prompt")).to_have_value("Be brief")
    assert focused(other) == "field-system_prompt"
    other.close()


def test_paste_lands_at_the_pointer_on_free_canvas_and_never_on_a_node(page, nodeflow_server: Server,
                                                                        store: GraphStore) -> None:
    """Ctrl+V right after Ctrl+C put the copy's corner under the pointer, which was still on the node just
    clicked: the copy lay half over its original, and a second paste exactly on the first."""
    open_editor(page, nodeflow_server, store.create(f"Paste {uuid.uuid4().hex[:6]}", pipeline()).id)
    names = ["Manual", "Shape", "Ask"]

    def paste(name: str) -> dict:
        """Paste; the copy covers no other node (all measured now: a paste off screen pans the view)."""
        edits = seq(page)
        page.keyboard.press("Control+v")
        wait_seq(page, edits + 1)
        box = node(page, name).bounding_box()
        for other in names:
            assert not overlap(box, node(page, other).bounding_box()), (name, other)
        names.append(name)
        return box

    select(page, "Shape", "edit-fields")  # the pointer stays on Shape's header
    page.keyboard.press("Control+c")
    paste("Shape 2")
    paste("Shape 3")

    # On free canvas: the copy's top left at the pointer (as n8n does); a second paste there goes beside it.
    pane = page.locator(".react-flow__pane").bounding_box()
    at = (pane["x"] + 120, pane["y"] + pane["height"] - 260)
    page.mouse.move(*at)
    first = paste("Shape 4")
    assert abs(first["x"] - at[0]) <= 2 and abs(first["y"] - at[1]) <= 2, (first, at)
    paste("Shape 5")

    # The pointer off the canvas (on the palette): beside the copied node.
    page.get_by_test_id("palette-search").hover()
    paste("Shape 6")
    (x, y), (shape_x, shape_y) = position(page, "Shape 6"), position(page, "Shape")
    assert abs(x - shape_x) <= 400 and abs(y - shape_y) <= 400, ((x, y), (shape_x, shape_y))


def test_the_minimap_gives_way_when_the_runs_panel_makes_the_canvas_short(page, nodeflow_server: Server,
                                                                         store: GraphStore) -> None:
    """With the Runs panel open the canvas was ~500 px high and the 150 px minimap covered nodes."""
    open_editor(page, nodeflow_server, store.create(f"Minimap {uuid.uuid4().hex[:6]}", pipeline()).id)
    minimap = page.locator(".react-flow__minimap")
    expect(minimap).to_be_visible()
    page.get_by_test_id("toggle-runs").click()
    expect(page.get_by_test_id("run-panel")).to_be_visible()
    expect(minimap).to_be_hidden()
    page.get_by_test_id("toggle-runs").click()
    expect(page.get_by_test_id("run-panel")).to_have_count(0)
    expect(minimap).to_be_visible()


def test_the_minimap_can_be_hidden_by_hand_and_stays_hidden(page, nodeflow_server: Server, store: GraphStore) -> None:
    """The minimap only gave way on a small canvas: someone who wanted the room on a big one had no way to hide it."""
    open_editor(page, nodeflow_server, store.create(f"Minimap by hand {uuid.uuid4().hex[:6]}", pipeline()).id)
    minimap, toggle = page.locator(".react-flow__minimap"), page.get_by_test_id("toggle-minimap")
    expect(minimap).to_be_visible()
    expect(toggle).to_have_attribute("aria-label", "Hide the minimap")
    toggle.click()
    expect(minimap).to_have_count(0)
    expect(toggle).to_have_attribute("aria-pressed", "false")
    other = page.context.new_page()  # the choice holds for the next page (and every graph) in this browser
    open_editor(other, nodeflow_server, store.create(f"Minimap kept {uuid.uuid4().hex[:6]}", pipeline()).id)
    expect(other.get_by_test_id("toggle-minimap")).to_have_attribute("aria-label", "Show the minimap")
    expect(other.locator(".react-flow__minimap")).to_have_count(0)
    other.get_by_test_id("toggle-minimap").click()
    expect(other.locator(".react-flow__minimap")).to_be_visible()
    other.close()


def test_at_1024_px_chat_and_history_take_turns_and_the_compare_banner_clears_the_run_chip(
        browser, nodeflow_server: Server, store: GraphStore) -> None:
    """With Chat, History and Runs open at 1024 px the canvas was ~150 px wide, and History's compare banner
    lay over the chip naming the run shown (e.g. "Latest answer")."""
    graph = pipeline()
    graph["nodes"], graph["edges"] = graph["nodes"][:2], graph["edges"][:1]  # Manual --> Shape: runs offline
    graph_id = store.create(f"Narrow panels {uuid.uuid4().hex[:6]}", graph).id
    graph["nodes"][1]["data"]["fields"][0]["value"] = "changed"
    store.save(graph_id, graph)
    context = signed_in_context(browser, nodeflow_server, viewport={"width": 1024, "height": 768})
    page = context.new_page()
    open_editor(page, nodeflow_server, graph_id)
    page.get_by_test_id("rerun").click()
    chip = page.get_by_test_id("run-view-chip")
    expect(chip).to_be_visible()

    canvas = page.get_by_test_id("canvas")
    page.get_by_test_id("toggle-chat").click()
    expect(page.get_by_test_id("chat-panel")).to_be_visible()
    page.get_by_test_id("toggle-history").click()
    expect(page.get_by_test_id("history-panel")).to_be_visible()
    page.get_by_test_id("toggle-runs").click()
    expect(page.get_by_test_id("run-panel")).to_be_visible()
    expect(page.get_by_test_id("history-entry")).to_have_count(2)
    assert canvas.bounding_box()["width"] >= 1024 / 2, canvas.bounding_box()
    node(page, "Shape").locator(".nf-header").click()  # the inspector stays folded beside History
    expect(page.get_by_test_id("inspector-unfold")).to_be_visible()
    assert canvas.bounding_box()["width"] >= 1024 / 2, canvas.bounding_box()

    page.get_by_test_id("history-pick").nth(0).click()
    page.get_by_test_id("history-pick").nth(1).click()
    page.get_by_test_id("history-compare").click()
    banner = page.get_by_test_id("history-banner")
    expect(banner).to_contain_text("Differences v1 → v2")
    assert inside(banner.bounding_box(), canvas.bounding_box()), (banner.bounding_box(), canvas.bounding_box())
    assert not overlap(banner.bounding_box(), chip.bounding_box()), (banner.bounding_box(), chip.bounding_box())

    # The chat and History share the right side: one at a time.
    page.get_by_test_id("toggle-chat").click()
    expect(page.get_by_test_id("chat-panel")).to_be_visible()
    expect(page.get_by_test_id("history-panel")).to_have_count(0)
    assert canvas.bounding_box()["width"] >= 1024 / 2, canvas.bounding_box()
    assert not overlap(banner.bounding_box(), chip.bounding_box()), (banner.bounding_box(), chip.bounding_box())
    context.close()


def click_edge(page, edge_id: str) -> None:
    """Click a wire halfway along (Playwright sees a flat wire as a 0 px high, invisible element)."""
    box = page.locator(f'.react-flow__edge[data-id="{edge_id}"] path').first.evaluate(
        "e => { const r = e.getBoundingClientRect(); return {x: r.x + r.width / 2, y: r.y + r.height / 2}; }")
    page.mouse.click(box["x"], box["y"])


def test_the_toolbar_deletes_selected_wires_too(page, nodeflow_server: Server, store: GraphStore) -> None:
    """The trash button stayed disabled with only a wire selected, though the Delete key removed it."""
    open_editor(page, nodeflow_server, store.create(f"Wires {uuid.uuid4().hex[:6]}", pipeline()).id)
    trash = page.get_by_test_id("delete-node")
    expect(trash).to_be_disabled()
    click_edge(page, "e1")
    expect(trash).to_be_enabled()
    edits = seq(page)
    trash.click()
    wait_seq(page, edits + 1)
    expect_counts(page, 3, 1)
    expect(trash).to_be_disabled()

    # A node and a wire (Ctrl+click adds to the selection): both go.
    select(page, "Manual", "manual-trigger")
    page.keyboard.down("Control")
    click_edge(page, "e2")
    page.keyboard.up("Control")
    edits = seq(page)
    trash.click()
    wait_seq(page, edits + 1)
    expect_counts(page, 2, 0)
    expect(node(page, "Manual")).to_have_count(0)
