"""The History panel (versions of the open graph), its toolbar button, and the banner over a read-only canvas."""

from __future__ import annotations

import reflex as rx

from nodeflow_app.components import dialogs
from nodeflow_app.components.theme import BORDER, PANEL_BG, PANEL_WORDS_FROM, button_word
from nodeflow_app.state.chat_state import ChatState
from nodeflow_app.state.editor_state import EditorState
from nodeflow_app.state.graph_room import GraphRoom
from nodeflow_app.state.history_state import HistoryState

HISTORY_PANEL_WIDTH = "360px"
# The canvas's diff colours (assets/flow_canvas.css), repeated in the legend and the change list.
STATUS_COLORS = {"added": "green", "removed": "red", "changed": "amber"}


def _testid(value: str) -> dict:
    return {"data-testid": value}


def history_toggle() -> rx.Component:
    return rx.tooltip(
        rx.button(rx.icon("clock", size=14), button_word("History", PANEL_WORDS_FROM), size="2", color_scheme="gray",
                  variant=rx.cond(HistoryState.panel_open, "solid", "soft"), aria_label="History",
                  on_click=[HistoryState.toggle_panel, ChatState.close_panel],  # both dock right: one at a time
                  custom_attrs=_testid("toggle-history")),
        content="History: the saved versions of this graph, to compare or restore",
    )


def _icon_action(icon: str, label: str, testid: str, **props) -> rx.Component:
    return rx.tooltip(
        rx.icon_button(rx.icon(icon, size=13), size="1", variant="ghost", color_scheme="gray", aria_label=label,
                       custom_attrs=_testid(testid), **props),
        content=label,
    )


def entry_row(entry: rx.Var) -> rx.Component:
    version = entry["version"]
    return rx.hstack(
        rx.checkbox(checked=HistoryState.picked.contains(version), on_change=HistoryState.toggle_pick(version),
                    aria_label="Compare", custom_attrs=_testid("history-pick")),
        rx.vstack(
            rx.hstack(
                rx.text(entry["title"], size="2", weight="bold", custom_attrs=_testid("history-title")),
                rx.cond(entry["label"] != "", rx.badge(entry["label"], size="1", color_scheme="iris",
                                                       custom_attrs=_testid("history-label"))),
                rx.cond(entry["runs"] != "", rx.badge(entry["runs"], size="1", variant="outline", color_scheme="gray",
                                                      custom_attrs=_testid("history-runs"))),
                spacing="2", align="center", wrap="wrap",
            ),
            rx.text(entry["note"], " · ", entry["author"], size="1", color_scheme="gray",
                    custom_attrs=_testid("history-note")),
            rx.text(entry["when"], size="1", color_scheme="gray", title=entry["at"]),
            spacing="0", flex="1", min_width="0",
        ),
        _icon_action("eye", "Open read-only", "history-open", on_click=HistoryState.open_version(version)),
        _icon_action("pencil", "Name this version", "history-name",
                     on_click=HistoryState.start_naming(version, entry["label"])),
        _icon_action("rotate-ccw", "Restore (as a new version)", "history-restore",
                     on_click=HistoryState.ask_restore(version)),
        align="start", spacing="2", width="100%", padding="8px 10px", border_bottom=BORDER,
        background=rx.cond(HistoryState.viewing.to_string() == version, "var(--accent-a4)", "transparent"),
        custom_attrs={"data-testid": "history-entry", "data-version": version},
    )


def diff_row(row: rx.Var) -> rx.Component:
    return rx.match(
        row["kind"],
        ("node", rx.hstack(
            rx.text(row["name"], size="2", weight="medium"),
            rx.badge(row["status"], size="1", color_scheme=rx.match(
                row["status"], ("added", "green"), ("removed", "red"), "amber")),
            spacing="2", align="center", padding_top="6px",
            custom_attrs={"data-testid": "diff-node", "data-name": row["name"]},
        )),
        ("change", rx.text(row["text"], size="1", font_family="var(--code-font-family)", padding_left="12px",
                           word_break="break-all", custom_attrs={"data-testid": "diff-change",
                                                                 "data-name": row["name"]})),
        rx.text(row["text"], size="1", color_scheme="gray", padding_top="6px", custom_attrs=_testid("diff-note")),
    )


def diff_section() -> rx.Component:
    return rx.cond(
        HistoryState.diff_title != "",
        rx.vstack(
            rx.text("Differences ", HistoryState.diff_title, size="2", weight="bold"),
            rx.vstack(rx.foreach(HistoryState.diff_rows, diff_row), spacing="0", width="100%"),
            spacing="1", width="100%", padding="8px 10px", border_bottom=BORDER, background="var(--gray-a2)",
            custom_attrs=_testid("history-diff"),
        ),
    )


def compare_bar() -> rx.Component:
    picked = HistoryState.picked.length()
    return rx.hstack(
        rx.text(rx.cond(picked == 2, "Compare the two ticked versions",
                        "Tick two versions to compare them"), size="1", color_scheme="gray", flex="1"),
        rx.button(rx.icon("git-compare", size=12), "Compare", size="1", variant="soft", disabled=picked != 2,
                  on_click=HistoryState.compare, custom_attrs=_testid("history-compare")),
        align="center", width="100%", padding="6px 10px", border_bottom=BORDER,
    )


def name_dialog() -> rx.Component:
    return rx.dialog.root(
        rx.dialog.content(
            rx.dialog.title("Name version ", HistoryState.naming),
            rx.form(
                rx.vstack(
                    rx.input(name="label", default_value=HistoryState.naming_text, auto_focus=True, width="100%",
                             placeholder="e.g. before the new prompt", max_length=120,
                             custom_attrs=_testid("history-name-input")),
                    rx.hstack(
                        rx.dialog.close(rx.button("Cancel", type="button", variant="soft", color_scheme="gray")),
                        rx.button("Save name", type="submit", custom_attrs=_testid("history-name-save")),
                        justify="end", width="100%",
                    ),
                    spacing="3", margin_top="8px",
                ),
                on_submit=HistoryState.save_name, reset_on_submit=False,
            ),
            max_width="420px",
        ),
        open=HistoryState.naming != "", on_open_change=HistoryState.set_naming_open,
    )


def restore_dialog() -> rx.Component:
    """Asked by both Restore buttons (the entry's arrow, the banner's); outside the panel, which may be closed."""
    version = HistoryState.restoring.to_string()
    return dialogs.confirm_dialog(
        "Restore version " + version + "?",
        "Version ", version, " becomes the newest version and replaces the graph on everyone's canvas. The current "
        "graph stays in History (restore it from there), but undo cannot bring it back.",
        action="Restore", on_confirm=HistoryState.restore(HistoryState.restoring), open_=HistoryState.restoring != 0,
        on_open_change=HistoryState.set_restore_open, prefix="history-restore-", color_scheme="amber",
    )


def history_panel() -> rx.Component:
    """Docked right of the canvas; the list refreshes on every save (a marker keyed by the saved version)."""
    return rx.cond(
        HistoryState.panel_open,
        rx.vstack(
            rx.hstack(
                rx.icon("clock", size=16, color="var(--gray-10)"),
                rx.text("History", size="2", weight="bold"),
                rx.box(flex="1"),
                _icon_action("refresh-cw", "Refresh", "history-refresh", on_click=HistoryState.refresh),
                _icon_action("x", "Close History", "history-close", on_click=HistoryState.toggle_panel),
                align="center", spacing="2", padding="8px 10px", border_bottom=BORDER, width="100%",
            ),
            rx.box(key=GraphRoom.saved_version.to_string(), on_mount=HistoryState.refresh, display="none"),
            compare_bar(),
            diff_section(),
            rx.vstack(rx.foreach(HistoryState.entries, entry_row), spacing="0", width="100%",
                      custom_attrs=_testid("history-list")),
            name_dialog(),
            spacing="0", width=HISTORY_PANEL_WIDTH, min_width=HISTORY_PANEL_WIDTH, height="100%", overflow_y="auto",
            background=PANEL_BG, border_left=BORDER, custom_attrs=_testid("history-panel"),
        ),
    )


def _legend(status: str) -> rx.Component:
    return rx.badge(status, size="1", color_scheme=STATUS_COLORS[status], variant="outline")


def history_banner() -> rx.Component:
    """Over the canvas while it shows a stored version or a comparison: what is shown, and the ways out (placed by
    editor_page.canvas_notes)."""
    mode = HistoryState.canvas_view["mode"].to(str)
    back = rx.button("Back to current", size="1", variant="soft", color_scheme="gray", white_space="nowrap",
                     on_click=HistoryState.back_to_current, custom_attrs=_testid("history-back"))
    return rx.cond(
        (mode == "version") | (mode == "diff"),
        rx.hstack(
            rx.icon("eye", size=14),
            rx.cond(
                mode == "version",
                rx.hstack(
                    rx.text("Viewing version ", HistoryState.viewing, " — read-only", size="2", weight="medium",
                            white_space="nowrap"),
                    rx.button(rx.icon("rotate-ccw", size=12), "Restore", size="1",
                              on_click=HistoryState.ask_restore(HistoryState.viewing),
                              custom_attrs=_testid("history-banner-restore")),
                    align="center", spacing="2",
                ),
                rx.hstack(rx.text("Differences ", HistoryState.diff_title, size="2", weight="medium",
                                  white_space="nowrap"),
                          _legend("added"), _legend("removed"), _legend("changed"), align="center", spacing="2",
                          wrap="wrap"),
            ),
            back,
            align="center", spacing="3", wrap="wrap", margin_x="auto", pointer_events="auto", max_width="100%",
            padding="6px 8px 6px 12px", border_radius="var(--radius-3)", background="var(--amber-3)",
            border="1px solid var(--amber-7)", custom_attrs=_testid("history-banner"),
        ),
    )
