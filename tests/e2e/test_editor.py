"""The graph editor in Chromium, driven like a person would: palette, wires, inspector, keyboard, reload, files.

Protocol: docs/editor.md. Every committed edit comes back from Python as one patch, so tests wait
for `window.__nodeflowCanvas.lastSeq()` to move instead of sleeping; refused edits answer with a
sonner toast (`[data-sonner-toast]`) and no patch. `lastSeq` moves when the canvas accepts a patch,
a render before the DOM shows it: what the page shows is then checked with waiting assertions.

The README's pictures, docs/screenshot-editor-empty.png and docs/screenshot-editor.png, are taken
here (1440x900); a run with an unchanged UI writes the same bytes.
"""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path

import pytest
from playwright.sync_api import expect

from nodeflow_app.runtime.graph import normalize
from nodeflow_app.store.graphs import GraphStore
from nodes._registry import default_registry

from .server import Server

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "tests" / "fixtures" / "graphs" / "examples"
CANVAS = "window.__nodeflowCanvas"
EDITOR_URL = re.compile(r"/graph/([A-Za-z0-9-]+)$")
HAS_ISSUE = re.compile(r"\bnf-has-issue\b")


# Helpers -----------------------------------------------------------------------------------------

@pytest.fixture
def store(nodeflow_server: Server):
    """The server's graph store, opened from the test process (SQLite: both may use the file)."""
    graphs = GraphStore(f"sqlite:///{nodeflow_server.data_dir / 'nodeflow.db'}")
    yield graphs
    graphs.engine.dispose()


def open_editor(page, server: Server, graph_id: str) -> None:
    page.goto(f"{server.url}/graph/{graph_id}")
    wait_loaded(page)


def wait_loaded(page) -> None:
    """The canvas is mounted and has the graph of the page's current load."""
    page.wait_for_function(f"{CANVAS} && {CANVAS}.rev() > 0")


def seq(page) -> int:
    return page.evaluate(f"{CANVAS}.lastSeq()")


def wait_seq(page, value: int) -> None:
    page.wait_for_function(f"{CANVAS}.lastSeq() === {value}")


def expect_counts(page, nodes: int, edges: int) -> None:
    """The canvas holds `nodes` nodes and `edges` edges, and draws that many edges."""
    page.wait_for_function(f"{CANVAS}.nodeCount() === {nodes} && {CANVAS}.edgeCount() === {edges}")
    expect(page.locator(".react-flow__edge")).to_have_count(edges)


def node(page, name: str):
    return page.get_by_test_id(f"node-{name}")


def node_id(page, name: str) -> str:
    return node(page, name).evaluate("e => e.closest('.react-flow__node').dataset.id")


def position(page, name: str) -> tuple[float, float]:
    """A node's flow position, from React Flow's transform of its wrapper."""
    transform = node(page, name).evaluate("e => e.closest('.react-flow__node').style.transform")
    x, y = re.fullmatch(r"translate\(([-\d.]+)px, ?([-\d.]+)px\)", transform).groups()
    return float(x), float(y)


def expect_position(page, name: str, xy: tuple[float, float], tolerance: float = 1.0) -> None:
    page.wait_for_function("""([name, x, y, tolerance]) => {
        const flowNode = document.querySelector(`[data-testid="node-${name}"]`)?.closest('.react-flow__node');
        const m = flowNode?.style.transform.match(/translate\\(([-\\d.]+)px, ?([-\\d.]+)px\\)/);
        return !!m && Math.abs(Number(m[1]) - x) <= tolerance && Math.abs(Number(m[2]) - y) <= tolerance;
    }""", arg=[name, xy[0], xy[1], tolerance])


def handle(page, owner_id: str, handle_id: str):
    return page.locator(f'.react-flow__handle[data-nodeid="{owner_id}"][data-handleid="{handle_id}"]')


def center(locator) -> tuple[float, float]:
    box = locator.bounding_box()
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def drag(page, start: tuple[float, float], end: tuple[float, float], steps: int = 12) -> None:
    page.mouse.move(*start)
    page.mouse.down()
    page.mouse.move(*end, steps=steps)
    page.mouse.up()


def wire(page, source, target) -> None:
    """Drag a wire from one handle to another with the mouse."""
    drag(page, center(source), center(target))


def select(page, name: str, form: str) -> None:
    """Click a node's header; the inspector then shows that node's form."""
    node(page, name).locator(".nf-header").click()
    page.get_by_test_id(f"inspector-form-{form}").wait_for()
    page.wait_for_function(
        "n => document.querySelector('[data-testid=\"inspector-name\"]')?.value === n", arg=name)


def click_pane(page) -> None:
    """Click empty canvas (clears the selection; keyboard shortcuts then reach the canvas)."""
    page.locator(".react-flow__pane").click(position={"x": 420, "y": 640})


def toast(page, text: str):
    found = page.locator("[data-sonner-toast]").filter(has_text=text)
    found.first.wait_for()
    return found


def choose(page, trigger_testid: str, option: str) -> None:
    """Pick an option of a Radix select (the inspector's selects)."""
    page.get_by_test_id(trigger_testid).click()
    page.get_by_role("option", name=option, exact=True).click()


def screenshot(page, name: str) -> None:
    page.screenshot(path=str(ROOT / "docs" / name))


# Tests -------------------------------------------------------------------------------------------

def test_build_wire_edit_undo_reload_and_paste(page, nodeflow_server: Server, store: GraphStore) -> None:
    graph_id = store.create("Untitled graph").id  # tests find their graphs by id
    open_editor(page, nodeflow_server, graph_id)
    page.get_by_test_id("inspector-empty").wait_for()
    expect_counts(page, 0, 0)
    assert page.get_by_test_id("save-status").inner_text().startswith("Saved")
    screenshot(page, "screenshot-editor-empty.png")

    # 1. Chat Start by a click on its palette entry (it lands in the visible area, selected).
    start = seq(page)
    page.get_by_test_id("palette-node-chat-start").click()
    wait_seq(page, start + 1)
    node(page, "Chat Start").wait_for()
    page.get_by_test_id("inspector-form-chat-start").wait_for()
    chat = node_id(page, "Chat Start")

    # A move is one edit; Ctrl+Z puts the node back, Ctrl+Shift+Z moves it again.
    before = position(page, "Chat Start")
    header = center(node(page, "Chat Start").locator(".nf-header"))
    drag(page, header, (header[0] - 340, header[1]))
    wait_seq(page, start + 2)
    moved = position(page, "Chat Start")
    # React Flow starts the drag once the pointer has moved past its threshold: the first step is not applied.
    assert before[0] - 345 < moved[0] < before[0] - 300 and moved[1] == pytest.approx(before[1], abs=1)
    page.keyboard.press("Control+z")
    wait_seq(page, start + 3)
    expect_position(page, "Chat Start", before)
    page.keyboard.press("Control+Shift+z")
    wait_seq(page, start + 4)
    expect_position(page, "Chat Start", moved)

    # Prompt Template and Conditional by dragging their palette entries onto the canvas (HTML5
    # drag and drop: Playwright's drag_to sends real dragstart/dragover/drop events in Chromium).
    pane = page.locator(".react-flow__pane")
    page.get_by_test_id("palette-node-prompt-template").drag_to(pane, target_position={"x": 290, "y": 200})
    wait_seq(page, start + 5)
    page.get_by_test_id("palette-node-conditional").drag_to(pane, target_position={"x": 560, "y": 200})
    wait_seq(page, start + 6)
    expect_position(page, "Prompt Template", (290, 200))  # dropped where released
    expect_position(page, "Conditional", (560, 200))
    prompt, cond = node_id(page, "Prompt Template"), node_id(page, "Conditional")
    expect_counts(page, 3, 0)

    # Wires by mouse: Chat Start -> Prompt Template -> Conditional.
    wire(page, handle(page, chat, "output"), handle(page, prompt, "input"))
    wait_seq(page, start + 7)
    wire(page, handle(page, prompt, "output"), handle(page, cond, "input"))
    wait_seq(page, start + 8)
    expect_counts(page, 3, 2)

    # 3. The inspector: a text area, a select, a bounded number with its message, run settings.
    edits = start + 8
    select(page, "Prompt Template", "prompt-template")
    template = page.get_by_test_id("field-template")
    template.fill("Is this about age? {message}")
    template.press("Tab")  # leaving the field commits it
    edits += 1
    wait_seq(page, edits)

    # Names are unique: a taken name is refused with a message, a free one renames the node.
    name = page.get_by_test_id("inspector-name")
    name.fill("Chat Start")
    name.press("Enter")
    assert "already named 'Chat Start'" in page.get_by_test_id("inspector-name-error").inner_text()
    assert seq(page) == edits
    name.fill("Question")
    name.press("Enter")
    edits += 1
    wait_seq(page, edits)
    node(page, "Question").wait_for()
    page.get_by_test_id("inspector-name-error").wait_for(state="detached")
    expect(node(page, "Prompt Template")).to_have_count(0)

    select(page, "Conditional", "conditional")
    choose(page, "field-operator", "contains")
    edits += 1
    wait_seq(page, edits)

    page.get_by_test_id("inspector-settings-toggle").click()
    attempts = page.get_by_test_id("setting-max_attempts")
    attempts.fill("lots")  # letters reach the server (a number input would drop them): a message says why
    attempts.press("Enter")
    expect(page.get_by_test_id("error-setting-max_attempts")).to_have_text("Max attempts: 'lots' is not a number")
    assert seq(page) == edits
    attempts.fill("50")
    attempts.press("Enter")
    # expect waits for the server's answer (reading the text at once could still see the previous message)
    error = page.get_by_test_id("error-setting-max_attempts")
    expect(error).to_contain_text("enter a whole number from 1 to 20")
    assert seq(page) == edits  # refused: no edit
    attempts.fill("3")
    attempts.press("Enter")
    edits += 1
    wait_seq(page, edits)
    error.wait_for(state="detached")

    # Error mode "Route to error output" gives the node an error handle.
    assert handle(page, cond, "error").count() == 0
    choose(page, "setting-error_mode", "Route to error output")
    edits += 1
    wait_seq(page, edits)
    handle(page, cond, "error").wait_for()

    # Inline on the canvas: the Conditional's value, committed with Enter (the inspector follows).
    inline = page.get_by_test_id("inline-Conditional-value")
    inline.fill("adult")
    inline.press("Enter")
    edits += 1
    wait_seq(page, edits)
    page.wait_for_function(
        "() => document.querySelector('[data-testid=\"field-value\"]')?.value === 'adult'")

    # 2. Refused wires: nothing changes, a toast says why (after the inspector edits: the toasts
    # sit over the inspector's lower part for a few seconds).
    wire(page, handle(page, chat, "output"), handle(page, cond, "value"))
    toast(page, "a data output cannot connect to a string input")
    wire(page, handle(page, cond, "true"), handle(page, prompt, "input"))
    assert "loop" in toast(page, "would make a loop").first.inner_text()
    assert seq(page) == edits
    expect_counts(page, 3, 2)

    # 4. Undo and redo with the toolbar buttons, then with the keyboard.
    page.get_by_test_id("undo").click()
    edits += 1
    wait_seq(page, edits)
    expect(inline).to_have_value("")
    page.get_by_test_id("redo").click()
    edits += 1
    wait_seq(page, edits)
    expect(inline).to_have_value("adult")

    click_pane(page)
    page.get_by_test_id("inspector-empty").wait_for()
    page.keyboard.press("Control+z")  # the value again
    edits += 1
    wait_seq(page, edits)
    page.keyboard.press("Control+z")  # the error output
    edits += 1
    wait_seq(page, edits)
    expect(handle(page, cond, "error")).to_have_count(0)
    expect(inline).to_have_value("")
    for _ in range(2):  # one at a time: two patches in one render would be coalesced (and resynced)
        page.keyboard.press("Control+Shift+z")
        edits += 1
        wait_seq(page, edits)
    handle(page, cond, "error").wait_for()
    expect(inline).to_have_value("adult")
    expect(page.get_by_test_id("redo")).to_be_disabled()

    # Let autosave run (a second after the last edit), then edit once more and reload at once:
    # the reload must not lose the edit that autosave has not stored yet.
    page.get_by_test_id("save-status").filter(has_text=re.compile(r"^Saved")).wait_for()
    select(page, "Conditional", "conditional")
    name.fill("Is adult")
    name.press("Enter")
    edits += 1
    wait_seq(page, edits)
    expect(page.get_by_test_id("save-status")).to_have_text("Unsaved changes")

    # 5. Reload: everything is as it was, and saved.
    page.reload()
    wait_loaded(page)
    node(page, "Is adult").wait_for()
    expect_counts(page, 3, 2)
    expect(page.get_by_test_id("save-status")).to_have_text(re.compile(r"^Saved · v\d+$"))
    expect(page.get_by_test_id("inline-Is adult-value")).to_have_value("adult")
    handle(page, cond, "error").wait_for()
    expect_position(page, "Chat Start", moved)
    expect_position(page, "Question", (290, 200))
    select(page, "Question", "prompt-template")
    expect(page.get_by_test_id("field-template")).to_have_value("Is this about age? {message}")
    select(page, "Is adult", "conditional")
    expect(page.get_by_test_id("field-operator")).to_have_text("contains")
    page.get_by_test_id("inspector-settings-toggle").click()
    expect(page.get_by_test_id("setting-max_attempts")).to_have_value("3")

    stored = store.get(graph_id).graph  # and the database has it all
    by_name = {n["name"]: n for n in stored["nodes"]}
    assert set(by_name) == {"Chat Start", "Question", "Is adult"}
    assert by_name["Is adult"]["data"]["value"] == "adult"
    assert by_name["Is adult"]["data"]["operator"] == "contains"
    assert by_name["Is adult"]["settings"]["error_mode"] == "error_output"
    assert by_name["Is adult"]["settings"]["retry"]["max_attempts"] == 3
    assert by_name["Question"]["data"]["template"] == "Is this about age? {message}"
    assert {(e["source"], e["sourceHandle"], e["target"], e["targetHandle"]) for e in stored["edges"]} == {
        (chat, "output", prompt, "input"), (prompt, "output", cond, "input")}

    # 6. Copy and paste a node: the copy gets a fresh id and the next free name. Real shortcuts, no
    # clipboard permission: headless Chromium fires copy and paste events for Ctrl+C / Ctrl+V, and
    # the text the canvas puts on the clipboard in `copy` comes back in `paste`.
    select(page, "Question", "prompt-template")
    page.locator(".react-flow__pane").hover(position={"x": 300, "y": 450})  # paste lands at the pointer
    page.keyboard.press("Control+c")
    page.keyboard.press("Control+v")
    node(page, "Question 2").wait_for()
    expect_counts(page, 4, 2)
    assert node_id(page, "Question 2") not in (chat, prompt, cond)
    expect(page.get_by_test_id("inspector-name")).to_have_value("Question 2")  # the copy is selected
    expect(page.get_by_test_id("field-template")).to_have_value("Is this about age? {message}")


def test_import_export_round_trip_validate_and_screenshot(page, nodeflow_server: Server,
                                                          store: GraphStore) -> None:
    fixture = json.loads((EXAMPLES / "agent_pipeline.json").read_text())
    blank_id = store.create(f"Editor import {uuid.uuid4().hex[:6]}").id
    open_editor(page, nodeflow_server, blank_id)

    # 7. Import (the toolbar's menu) makes a new graph from the file and opens it.
    page.get_by_test_id("editor-menu").click()
    with page.expect_file_chooser() as chooser:
        page.get_by_test_id("import-graph").click()
    chooser.value.set_files(str(EXAMPLES / "agent_pipeline.json"))
    page.wait_for_url(lambda url: EDITOR_URL.search(url) is not None and not url.endswith(blank_id))
    node(page, "Summarize").wait_for()
    page.wait_for_function(f"{CANVAS}.nodeCount() === 5 && {CANVAS}.edgeCount() === 4")
    expect(page.get_by_test_id("graph-name")).to_have_value(fixture["name"])
    imported_id = EDITOR_URL.search(page.url).group(1)

    # Export downloads the graph as the editor holds it: the fixture, normalized, under the new id.
    page.get_by_test_id("editor-menu").click()
    with page.expect_download() as download:
        page.get_by_test_id("export-graph").click()
    assert download.value.suggested_filename == "research-then-summarize.json"
    exported = json.loads(Path(download.value.path()).read_text())
    expected, issues = normalize(fixture, default_registry())
    assert issues == []
    expected = expected.model_dump(mode="json")
    assert exported["id"] == imported_id
    # The viewport is where the canvas looks (it fitted the graph on opening and told Python, which
    # keeps the viewport with the graph so palette clicks land in view); everything else is the fixture's.
    assert {**exported, "id": None, "viewport": None} == {**expected, "id": None, "viewport": None}
    shown = page.locator(".react-flow__viewport").evaluate("e => e.style.transform")
    x, y, zoom = map(float, re.fullmatch(r"translate\(([-\d.]+)px, ?([-\d.]+)px\) scale\(([\d.]+)\)", shown).groups())
    assert exported["viewport"] == pytest.approx({"x": x, "y": y, "zoom": zoom}, abs=0.01)
    assert [(n["id"], n["position"]) for n in exported["nodes"]] == [
        (n["id"], {"x": float(n["position"]["x"]), "y": float(n["position"]["y"])}) for n in fixture["nodes"]]
    assert [e["id"] for e in exported["edges"]] == [e["id"] for e in fixture["edges"]]

    # 9. The editor with a graph, its agent selected so the inspector shows its form. The example
    # stacks Calculator under Helper; moving it left by mouse (an edit) uncovers it.
    header = node(page, "Calculator").locator(".nf-header")
    edits = seq(page)
    drag(page, center(header), (center(header)[0] - 130, center(header)[1] + 20))
    wait_seq(page, edits + 1)
    select(page, "Researcher", "agent")
    page.evaluate(f"{CANVAS}.fitView()")
    page.mouse.move(5, 890)  # no hover effects in the picture
    page.get_by_test_id("save-status").filter(has_text=re.compile(r"^Saved")).wait_for()  # autosave
    page.wait_for_timeout(200)  # fitView applies on the next frame
    screenshot(page, "screenshot-editor.png")

    # 8. A valid graph: Validate says so.
    page.get_by_test_id("validate").click()
    assert "No issues" in page.get_by_test_id("issues").inner_text()
    toast(page, "The graph is valid")
    page.keyboard.press("Escape")
    page.get_by_test_id("issues").wait_for(state="detached")

    # A bounded number in the inspector: out of range is kept as typed, in red, and Validate reports it
    # (the run would otherwise use a value nobody sees); in range it is a plain edit.
    select(page, "Summarize", "llm-completion")
    temperature = page.get_by_test_id("field-temperature")
    edits = seq(page)
    temperature.fill("5")
    temperature.press("Enter")
    wait_seq(page, edits + 1)
    expect(page.get_by_test_id("error-temperature")).to_contain_text("5 is above the maximum 2")
    expect(temperature).to_have_value("5")
    page.get_by_test_id("validate").click()
    expect(page.get_by_test_id("issue")).to_have_text("'Summarize' temperature: 5 is above the maximum 2")
    page.keyboard.press("Escape")
    page.get_by_test_id("issues").wait_for(state="detached")
    temperature = page.get_by_test_id("field-temperature")
    temperature.fill("0.3")
    temperature.press("Enter")
    wait_seq(page, edits + 2)
    page.get_by_test_id("error-temperature").wait_for(state="detached")


def test_validate_with_warnings_says_so_in_a_warning_toast(page, nodeflow_server: Server, store: GraphStore) -> None:
    """A graph whose models' provider is not set up is valid (it can be saved) but its first run fails: the toast
    says "Valid, with 2 warnings" and the first one, in a warning toast, not a green "The graph is valid"."""
    graph = {
        "nodes": [
            {"id": "chat", "type": "chat-start", "name": "Chat Start", "position": {"x": 0, "y": 0}, "data": {}},
            {"id": "draft", "type": "agent", "name": "Draft", "position": {"x": 300, "y": 0},
             "data": {"model": "openai:gpt-4o-mini"}},
            {"id": "review", "type": "agent", "name": "Review", "position": {"x": 600, "y": 0},
             "data": {"model": "openai:gpt-4o"}},
        ],
        "edges": [
            {"id": "e1", "source": "chat", "sourceHandle": "output", "target": "draft", "targetHandle": "input",
             "data": {"channel": "flow"}},
            {"id": "e2", "source": "draft", "sourceHandle": "output", "target": "review", "targetHandle": "input",
             "data": {"channel": "flow"}},
        ],
    }
    open_editor(page, nodeflow_server, store.create(f"Editor warnings {uuid.uuid4().hex[:6]}", graph).id)
    node(page, "Review").wait_for()
    page.get_by_test_id("validate").click()
    expect(page.get_by_test_id("issues")).to_contain_text("No errors: the graph is valid. Before it runs:")
    shown = toast(page, "Valid, with 2 warnings: 'Draft' model: OpenAI is not configured")
    expect(shown).to_contain_text("(and 1 more, listed under Validate)")
    expect(shown).to_have_attribute("data-type", "warning")
    expect(page.locator("[data-sonner-toast]").filter(has_text="The graph is valid")).to_have_count(0)


def test_validate_lists_the_problems_of_a_stored_graph(page, nodeflow_server: Server, store: GraphStore) -> None:
    # Every edit in the editor is checked, so an invalid graph cannot be built there, and Import
    # refuses one; a stored graph can still hold problems (stored before a node definition changed).
    # Such a graph is written to the store directly.
    graph = {
        "nodes": [
            {"id": "chat", "type": "chat-start", "name": "Chat Start", "position": {"x": 0, "y": 0}, "data": {}},
            {"id": "check", "type": "conditional", "name": "Check", "position": {"x": 300, "y": 0},
             "data": {"operator": "sounds_like"}},
            {"id": "agent", "type": "agent", "name": "Agent", "position": {"x": 600, "y": 0},
             "data": {"tool_call_limit": 0}},
        ],
        "edges": [
            {"id": "e1", "source": "chat", "sourceHandle": "output", "target": "check", "targetHandle": "input",
             "data": {"channel": "flow"}},
            {"id": "e2", "source": "check", "sourceHandle": "true", "target": "agent", "targetHandle": "input",
             "data": {"channel": "flow"}},
        ],
    }
    graph_id = store.create(f"Editor invalid {uuid.uuid4().hex[:6]}", graph).id
    open_editor(page, nodeflow_server, graph_id)
    node(page, "Agent").wait_for()

    validate = page.get_by_test_id("validate")
    expect(validate).to_have_text("2 issues")  # known from the load
    expect(node(page, "Check")).to_have_class(HAS_ISSUE)  # outlined in red, the message as tooltip
    expect(node(page, "Agent")).to_have_class(HAS_ISSUE)
    expect(node(page, "Chat Start")).not_to_have_class(HAS_ISSUE)

    validate.click()
    rows = page.get_by_test_id("issue")
    rows.first.wait_for()
    texts = [row.inner_text() for row in rows.all()]
    assert len(texts) == 2
    assert any("'Check'" in t and "'sounds_like' is not one of" in t for t in texts)
    assert any("'Agent'" in t and "0 is below the minimum 1" in t for t in texts)

    # An issue selects its node; fixing the value and validating again leaves one issue.
    rows.filter(has_text="sounds_like").click()
    page.get_by_test_id("inspector-form-conditional").wait_for()
    expect(page.get_by_test_id("inspector-name")).to_have_value("Check")
    assert "is not one of" in page.get_by_test_id("error-operator").inner_text()
    page.keyboard.press("Escape")
    page.get_by_test_id("issues").wait_for(state="detached")
    edits = seq(page)
    choose(page, "field-operator", "equals")
    wait_seq(page, edits + 1)
    page.get_by_test_id("error-operator").wait_for(state="detached")

    validate.click()
    page.get_by_test_id("issue").filter(has_text="below the minimum").wait_for()
    expect(page.get_by_test_id("issue")).to_have_count(1)
    expect(validate).to_have_text(re.compile(r"^1 issues?$"))
    expect(node(page, "Check")).not_to_have_class(HAS_ISSUE)
