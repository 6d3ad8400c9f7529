"""Runs in the editor: toolbar buttons, the run-view chip on the canvas, and the bottom run history panel.

The panel lists the graph's runs (left, with who started each) and the chosen run's nodes in the order they
ran (right), each expandable to its input, output and error as JSON, with "Pin output" to keep an output as
test data. A running run has a Stop button; a paused run shows each waiting node's approval card (prompt,
the text to approve, the whole input on demand, a note, one button per answer), wherever the run was started.
"""

from __future__ import annotations

import reflex as rx

from nodeflow_app.components.theme import BORDER, PANEL_BG, PANEL_WORDS_FROM, button_word
from nodeflow_app.state.chat_state import ChatState
from nodeflow_app.state.editor_state import EditorState
from nodeflow_app.state.history_state import HistoryState
from nodeflow_app.state.run_history_state import RunHistoryState
from nodeflow_app.state.run_view_state import RunViewState

PANEL_HEIGHT = "340px"
LIST_WIDTH = "380px"
MONO = "var(--code-font-family, ui-monospace, SFMono-Regular, Menlo, monospace)"
STATUS_COLORS = (("completed", "green"), ("failed", "red"), ("running", "blue"), ("paused", "amber"),
                 ("interrupted", "orange"), ("cancelled", "gray"), ("skipped", "gray"))


def _testid(name: str | rx.Var) -> dict:
    return {"data-testid": name}


def status_badge(status: rx.Var) -> rx.Component:
    return rx.badge(status, color_scheme=rx.match(status, *STATUS_COLORS, "gray"), variant="soft", size="1",
                    flex_shrink="0")


# Toolbar and canvas ------------------------------------------------------------------------------

def rerun_button() -> rx.Component:
    # "Re-run" only once the graph has run: before that there are no outputs to reuse.
    word = rx.cond(RunHistoryState.has_run, "Re-run", "Run")
    return rx.tooltip(
        rx.button(rx.icon("play", size=14), button_word(word), size="2", variant="soft", color_scheme="green",
                  aria_label=word, loading=RunHistoryState.running, on_click=RunHistoryState.rerun,
                  custom_attrs=_testid("rerun")),
        content=rx.cond(RunHistoryState.has_run,
                        "Run the saved graph: only nodes changed since their last run execute; the rest reuse "
                        "their outputs", "Run the saved graph from its trigger"),
    )


def runs_toggle() -> rx.Component:
    return rx.tooltip(
        rx.button(rx.icon("history", size=14), button_word("Runs", PANEL_WORDS_FROM), size="2", color_scheme="gray",
                  variant=rx.cond(RunHistoryState.panel_open, "solid", "soft"), aria_label="Runs",
                  on_click=RunHistoryState.toggle_panel, custom_attrs=_testid("toggle-runs")),
        content="Runs: every run of this graph, its nodes' inputs and outputs",
    )


def run_to_here_button() -> rx.Component:
    """In the inspector: run the selected node and what it depends on."""
    return rx.button(rx.icon("play", size=14), "Run to here", size="2", variant="soft", width="100%",
                     loading=RunHistoryState.running, on_click=RunHistoryState.run_selected(EditorState.selected_id),
                     custom_attrs=_testid("run-to-here"))


def run_view_chip() -> rx.Component:
    """Which run the canvas shows (live or opened from the history), with a way back to the plain graph; placed
    by editor_page.canvas_notes."""
    return rx.cond(
        RunViewState.label != "",
        rx.hstack(
            rx.icon("activity", size=14),
            rx.text(RunViewState.label, size="1", weight="medium"),
            rx.icon_button(rx.icon("x", size=12), size="1", variant="ghost", color_scheme="gray",
                           aria_label="Stop showing this run", on_click=RunViewState.clear,
                           custom_attrs=_testid("run-view-clear")),
            align="center", spacing="2", pointer_events="auto", flex_shrink="0", padding="2px 4px 2px 10px", border_radius="999px", background="var(--gray-3)", border=BORDER,
            custom_attrs=_testid("run-view-chip"),
        ),
    )


# Run list ----------------------------------------------------------------------------------------

def _whole_or_titled(text: rx.Var, testid: str, **props) -> rx.Component:
    """A line of the run list: whole when it fits, else cut with "…" and the whole text in its tooltip."""
    return rx.text(text, overflow="hidden", white_space="nowrap", text_overflow="ellipsis", min_width="0",
                   title=text, custom_attrs=_testid(testid), **props)


def run_list_row(run: rx.Var) -> rx.Component:
    """Status, then the trigger over who started it and how long it took (two lines: on one, at the panel's width,
    the trigger's name was cut to "Webh…"), the version and when."""
    return rx.hstack(
        status_badge(run["status"]),
        rx.vstack(
            rx.hstack(
                rx.cond(run["source"] == "chat", rx.icon("message-square", size=12, color="var(--gray-10)",
                                                          flex_shrink="0")),
                _whole_or_titled(run["trigger"], "run-trigger", size="2", weight="medium"),
                align="center", spacing="1", width="100%", min_width="0",
            ),
            rx.hstack(
                rx.cond(run["source"] != "", _whole_or_titled(run["source"], "run-started-by", size="1",
                                                              color_scheme="gray")),
                rx.text(run["duration"], size="1", color_scheme="gray", white_space="nowrap", flex_shrink="0"),
                align="center", spacing="2", width="100%", min_width="0",
            ),
            spacing="0", flex="1", min_width="0",
        ),
        rx.badge(run["version"], variant="outline", color_scheme="gray", size="1", flex_shrink="0"),
        rx.text(run["started"], size="1", color_scheme="gray", white_space="nowrap", flex_shrink="0"),
        align="center", spacing="2", width="100%", padding="6px 10px", cursor="pointer",
        background=rx.cond(RunHistoryState.run_id == run["id"], "var(--accent-a4)", "transparent"),
        _hover={"background": "var(--gray-a3)"},
        on_click=RunHistoryState.select_run(run["id"]),
        custom_attrs=_testid("run-row"),
    )


def run_list() -> rx.Component:
    return rx.vstack(
        rx.hstack(
            rx.text("Runs", size="2", weight="bold"),
            rx.spacer(),
            rx.icon_button(rx.icon("refresh-cw", size=14), size="1", variant="ghost", color_scheme="gray",
                           aria_label="Refresh", on_click=RunHistoryState.refresh, custom_attrs=_testid("refresh-runs")),
            rx.icon_button(rx.icon("x", size=14), size="1", variant="ghost", color_scheme="gray",
                           aria_label="Close", on_click=RunHistoryState.toggle_panel),
            align="center", width="100%", padding="8px 10px", border_bottom=BORDER,
        ),
        rx.cond(
            RunHistoryState.runs.length() > 0,
            rx.vstack(rx.foreach(RunHistoryState.runs, run_list_row), spacing="0", width="100%"),
            rx.text("No runs yet: Re-run the graph or chat with it.", size="2", color_scheme="gray", padding="12px"),
        ),
        spacing="0", width=LIST_WIDTH, min_width=LIST_WIDTH, height="100%", overflow_y="auto", border_right=BORDER,
    )


# The chosen run ----------------------------------------------------------------------------------

def json_section(label: str, text: rx.Var, testid: str) -> rx.Component:
    return rx.vstack(
        rx.text(label, size="1", weight="bold", color_scheme="gray"),
        rx.cond(
            text != "",
            rx.el.pre(text, custom_attrs=_testid(testid), style={
                "fontFamily": MONO, "fontSize": "11px", "margin": 0, "padding": "6px 8px", "maxHeight": "220px",
                "overflow": "auto", "background": "var(--gray-a3)", "borderRadius": "var(--radius-2)",
                "whiteSpace": "pre-wrap", "wordBreak": "break-word", "width": "100%"}),
            rx.text("no value", size="1", color_scheme="gray", custom_attrs=_testid(testid)),
        ),
        spacing="1", width="100%", min_width="0", flex="1",
    )


def pin_buttons(node: rx.Var) -> rx.Component:
    return rx.hstack(
        rx.button(rx.icon("pin", size=12), rx.cond(node["pinned"] != "", "Edit pin", "Pin output"), size="1",
                  variant="soft", on_click=RunHistoryState.edit_pin(node["node_id"]), custom_attrs=_testid("pin-output")),
        rx.cond(node["pinned"] != "",
                rx.button(rx.icon("pin-off", size=12), "Unpin", size="1", variant="soft", color_scheme="gray",
                          on_click=RunHistoryState.unpin(node["node_id"]), custom_attrs=_testid("unpin-output"))),
        spacing="2",
    )


def child_run_link(node: rx.Var) -> rx.Component:
    """An Execute Graph step: open the run it started (the latest one when a loop called it several times)."""
    return rx.link(rx.icon("external-link", size=12), "Open child run",
                   rx.cond(node["child_count"] != "1", rx.text.span(" (latest of ", node["child_count"], ")")),
                   href=node["child_url"], size="1", display="inline-flex", align_items="center", gap="4px",
                   custom_attrs=_testid("open-child-run"))


def node_detail(node: rx.Var) -> rx.Component:
    return rx.el.details(
        rx.el.summary(
            rx.hstack(
                rx.icon("chevron-right", size=14, class_name="nf-run-chevron", flex_shrink="0"),
                status_badge(node["status"]),
                rx.text(node["name"], size="2", weight="medium"),
                rx.text(node["type"], size="1", color_scheme="gray"),
                rx.cond(node["cached"] != "", rx.badge("cached", size="1", variant="outline", color_scheme="cyan",
                                                       custom_attrs=_testid("run-node-cached"))),
                rx.cond(node["pinned"] != "", rx.badge(rx.icon("pin", size=10), "pinned", size="1", variant="outline",
                                                       color_scheme="amber")),
                rx.spacer(),
                rx.text(node["duration"], size="1", color_scheme="gray"),
                align="center", spacing="2", width="100%",
            ),
            cursor="pointer", padding="6px 10px", display="block", list_style="none",
        ),
        rx.vstack(
            rx.hstack(json_section("Input", node["inputs"], "run-node-input"),
                      json_section("Output", node["outputs"], "run-node-output"), spacing="3", width="100%",
                      align="start"),
            rx.cond(node["error"] != "", rx.callout(node["error"], icon="circle-alert", color_scheme="red", size="1",
                                                   width="100%", custom_attrs=_testid("run-node-error"))),
            rx.cond(node["child_url"] != "", child_run_link(node)),
            pin_buttons(node),
            spacing="2", width="100%", padding="4px 10px 10px 32px",
        ),
        border_bottom=BORDER,
        style={"& > summary::-webkit-details-marker": {"display": "none"},
               "&[open] .nf-run-chevron": {"transform": "rotate(90deg)"}},
        custom_attrs=_testid("run-node-" + node["name"]),
    )


def _approval_detail(card: rx.Var) -> rx.Component:
    """The whole input a paused node asks about, as JSON."""
    return rx.el.pre(card["detail"], style={
        "fontFamily": MONO, "fontSize": "11px", "margin": 0, "padding": "6px 8px", "maxHeight": "120px",
        "overflow": "auto", "background": "var(--gray-a3)", "borderRadius": "var(--radius-2)",
        "whiteSpace": "pre-wrap", "width": "100%"})


def approval_card(card: rx.Var) -> rx.Component:
    """A paused node of the chosen run: what it asks, what is approved (as the chat's card shows it: its text,
    the whole input on demand), and one button per answer."""
    return rx.vstack(
        rx.hstack(rx.icon("hand", size=14), rx.text(card["name"], size="2", weight="bold"),
                  rx.badge("waiting", color_scheme="amber", variant="soft", size="1"), align="center", spacing="2"),
        rx.text(card["prompt"], size="2", custom_attrs=_testid("approval-prompt")),
        rx.cond(
            card["text"] != "",
            rx.fragment(
                rx.text(card["text"], size="2", white_space="pre-wrap", max_height="160px", overflow="auto",
                        width="100%", custom_attrs=_testid("approval-text")),
                rx.cond(card["detail"] != "", rx.el.details(
                    rx.el.summary(rx.text("Whole input", as_="span", size="1", color="gray"), cursor="pointer"),
                    _approval_detail(card), width="100%")),
            ),
            rx.cond(card["detail"] != "", _approval_detail(card)),
        ),
        rx.input(value=RunHistoryState.approval_note, on_change=RunHistoryState.set_approval_note,
                 placeholder="Note (optional)", size="1", width="100%", custom_attrs=_testid("approval-note")),
        rx.hstack(
            rx.foreach(RunHistoryState.approval_options[card["node_id"]], lambda option: rx.button(
                option, size="1", variant="soft",
                color_scheme=rx.cond((option == "reject") | (option == "deny"), "red", "green"),
                on_click=RunHistoryState.answer(card["node_id"], option),
                custom_attrs=_testid("approval-" + option))),
            spacing="2",
        ),
        spacing="2", width="100%", padding="10px", border=BORDER, border_radius="var(--radius-3)",
        background="var(--amber-a2)", custom_attrs=_testid("approval-card"),
    )


def run_detail() -> rx.Component:
    run = RunHistoryState.run
    return rx.cond(
        RunHistoryState.run_id == "",
        rx.center(rx.text("Choose a run to see every node's input and output.", size="2", color_scheme="gray"),
                  flex="1", height="100%"),
        rx.vstack(
            rx.hstack(
                status_badge(run["status"]),
                rx.text(run["trigger"], size="2", weight="bold"),
                rx.link(run["version"], size="1", title="Open this version read-only (History)",
                        on_click=[HistoryState.open_run_version(run["version"]), ChatState.close_panel],
                        custom_attrs=_testid("run-version")),
                rx.text(run["duration"], " · ", run["started"], size="1", color_scheme="gray"),
                rx.spacer(),
                rx.cond((run["status"] == "running") | (run["status"] == "paused"),
                        rx.button(rx.icon("square", size=12), "Stop", size="1", variant="soft", color_scheme="red",
                                  on_click=RunHistoryState.stop_run, custom_attrs=_testid("stop-run"))),
                rx.button(rx.icon("eye", size=12), "Open on canvas", size="1", variant="soft",
                          on_click=RunHistoryState.open_on_canvas, custom_attrs=_testid("open-on-canvas")),
                align="center", spacing="2", width="100%", padding="8px 10px", border_bottom=BORDER,
                position="sticky", top="0", z_index="1", background=PANEL_BG,
            ),
            rx.cond(RunHistoryState.parent.contains("url"),
                    rx.link(rx.icon("corner-left-up", size=12), RunHistoryState.parent["label"],
                            href=RunHistoryState.parent["url"], size="1", display="inline-flex", align_items="center",
                            gap="4px", padding="6px 10px", custom_attrs=_testid("parent-run"))),
            rx.cond(run["error"] != "", rx.callout(run["error"], icon="circle-alert", color_scheme="red", size="1",
                                                  width="100%")),
            rx.cond(RunHistoryState.approvals.length() > 0,
                    rx.vstack(rx.foreach(RunHistoryState.approvals, approval_card), spacing="2", width="100%",
                              padding="8px 10px")),
            rx.box(rx.foreach(RunHistoryState.nodes, node_detail), width="100%"),
            spacing="0", flex="1", min_width="0", height="100%", overflow_y="auto",
            custom_attrs=_testid("run-detail"),
        ),
    )


def pin_dialog() -> rx.Component:
    return rx.dialog.root(
        rx.dialog.content(
            rx.dialog.title("Pin output of ", RunHistoryState.pin_node_name),
            rx.dialog.description(
                "Test runs (Re-run, Run to here) use this data instead of running the node. "
                "A JSON object of output ports, e.g. {\"output\": {...}}. Chat runs always run the node.",
                size="2", color_scheme="gray",
            ),
            rx.text_area(value=RunHistoryState.pin_text, on_change=RunHistoryState.set_pin_text, rows="14",
                         width="100%", margin_top="12px", style={"fontFamily": MONO, "fontSize": "12px"},
                         custom_attrs=_testid("pin-editor")),
            rx.cond(RunHistoryState.pin_error != "",
                    rx.text(RunHistoryState.pin_error, size="2", color_scheme="red", custom_attrs=_testid("pin-error"))),
            rx.hstack(
                rx.button("Cancel", variant="soft", color_scheme="gray", on_click=RunHistoryState.close_pin),
                rx.button(rx.icon("pin", size=14), "Save pin", on_click=RunHistoryState.save_pin,
                          custom_attrs=_testid("save-pin")),
                justify="end", spacing="2", margin_top="12px",
            ),
            max_width="640px",
        ),
        open=RunHistoryState.pin_node_id != "",
        on_open_change=lambda _open: RunHistoryState.close_pin(),
    )


def run_panel() -> rx.Component:
    """The bottom panel (toggled by the toolbar's Runs button) and the pin editor."""
    return rx.fragment(
        rx.cond(
            RunHistoryState.panel_open,
            rx.hstack(run_list(), run_detail(), spacing="0", width="100%", height=PANEL_HEIGHT, min_height=PANEL_HEIGHT,
                      background=PANEL_BG, border_top=BORDER, custom_attrs=_testid("run-panel")),
        ),
        pin_dialog(),
    )
