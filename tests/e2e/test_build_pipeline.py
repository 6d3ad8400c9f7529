"""Issue 16's "done means" in Chromium: a person builds a data pipeline in the editor from the palette, wires it
with the mouse, sets every parameter in the inspector, then chats with it and reads the aggregated answer.

    Chat Start --> Text Split --> Split Out --> Filter --pass--> Code --> Aggregate

"apple, fig, banana, kiwi" -> four fruits -> those containing "a" -> each with its letter count -> the total
number of letters and the fruits joined: {"total_letters": 11, "fruits": "apple, banana"}.
"""

from __future__ import annotations

import re

from playwright.sync_api import expect

from .server import Server
from .test_chat import expect_answer_status, last_answer, send
from .test_editor import center, drag, expect_counts, handle, node, node_id, seq, wait_loaded, wait_seq

CODE = 'return [{"fruit": item["fruit"], "letters": len(item["fruit"])} for item in items]'
PLACES = {"text-split": (320, 40), "split-out": (20, 260), "filter": (320, 260), "code": (20, 480),
          "aggregate": (320, 480)}  # in the pane, clear of the minimap and the inspector


def edit(page, action) -> None:
    """Do `action` (one edit) and wait until the canvas has the server's answer to it."""
    before = seq(page)
    action()
    wait_seq(page, before + 1)


def add(page, node_type: str) -> None:
    x, y = PLACES[node_type]
    pane = page.locator(".react-flow__pane")
    edit(page, lambda: page.get_by_test_id(f"palette-node-{node_type}").drag_to(pane, target_position={"x": x, "y": y}))


def wire(page, source: str, target: str, port: str = "output") -> None:
    start = center(handle(page, node_id(page, source), port))
    edit(page, lambda: drag(page, start, center(handle(page, node_id(page, target), "input"))))


def inspect(page, name: str, form: str) -> None:
    node(page, name).locator(".nf-header").click()
    page.get_by_test_id(f"inspector-form-{form}").wait_for()
    page.wait_for_function(
        "n => document.querySelector('[data-testid=\"inspector-name\"]')?.value === n", arg=name)


def type_in(page, testid: str, text: str, nth: int = 0, key: str = "Enter") -> None:
    field = page.get_by_test_id(testid).nth(nth)

    def commit() -> None:
        field.fill(text)
        field.press(key)
    edit(page, commit)


def pick(page, testid: str, option: str, nth: int = 0) -> None:
    def commit() -> None:
        page.get_by_test_id(testid).nth(nth).click()
        page.get_by_role("option", name=option, exact=True).click()
    edit(page, commit)


def test_a_person_builds_split_out_filter_code_aggregate_and_chats_with_it(page, nodeflow_server: Server,
                                                                          artifacts_dir):
    # A new blank graph (a Chat Start alone) from the graph list.
    page.goto(f"{nodeflow_server.url}/")
    page.get_by_test_id("new-graph").click()
    page.get_by_test_id("template-blank").click()
    expect(page).to_have_url(re.compile(r"/graph/\w+$"), timeout=15_000)
    wait_loaded(page)

    # The blank graph's Chat Start to the top left, nodes from the palette, wires by mouse.
    pane = page.locator(".react-flow__pane").bounding_box()
    header = center(node(page, "Chat Start").locator(".nf-header"))
    edit(page, lambda: drag(page, header, (pane["x"] + 140, pane["y"] + 60)))
    for node_type in PLACES:
        add(page, node_type)
    expect_counts(page, 6, 0)
    wire(page, "Chat Start", "Text Split")
    wire(page, "Text Split", "Split Out")
    wire(page, "Split Out", "Filter")
    wire(page, "Filter", "Code", port="pass")
    wire(page, "Code", "Aggregate")
    expect_counts(page, 6, 5)

    # Parameters in the inspector (Text Split keeps its defaults: split the message at commas, trimmed).
    inspect(page, "Split Out", "split-out")
    type_in(page, "field-destination", "fruit")
    inspect(page, "Filter", "filter")
    type_in(page, "row-conditions-field", "fruit")
    pick(page, "row-conditions-operator", "contains")
    type_in(page, "row-conditions-value", "a")
    inspect(page, "Code", "code")
    type_in(page, "field-code", CODE, key="Tab")  # a text area commits when it is left
    inspect(page, "Aggregate", "aggregate")
    pick(page, "field-mode", "Individual fields")
    type_in(page, "row-aggregations-field", "letters")
    pick(page, "row-aggregations-operation", "Sum")
    type_in(page, "row-aggregations-name", "total_letters")
    edit(page, lambda: page.get_by_test_id("add-aggregations").click())
    type_in(page, "row-aggregations-field", "fruit", nth=1)
    pick(page, "row-aggregations-operation", "Concatenate as text", nth=1)
    type_in(page, "row-aggregations-name", "fruits", nth=1)
    expect(page.get_by_test_id("save-status")).to_contain_text("Saved")

    # Chat with it: every step runs, and the aggregated value is the answer.
    page.get_by_test_id("toggle-chat").click()
    expect(page.get_by_test_id("chat-panel")).to_be_visible()
    send(page, "apple, fig, banana, kiwi")
    expect_answer_status(page, "complete")
    answer = last_answer(page)
    for name in ("Chat Start", "Text Split", "Split Out", "Filter", "Code", "Aggregate"):
        expect(answer.get_by_test_id(f"step-{name}")).to_have_attribute("data-status", "completed")
    expect(answer.locator("pre code, code").filter(has_text="total_letters")).to_contain_text('"total_letters": 11')
    expect(answer).to_contain_text('"fruits": "apple, banana"')
    page.screenshot(path=str(artifacts_dir / "built-pipeline.png"))  # for a look by a person (git-ignored)
