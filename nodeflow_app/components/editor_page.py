"""The editor page: toolbar on top, palette left, canvas in the middle, inspector right."""

from __future__ import annotations

import reflex as rx

from nodeflow_app import routes
from nodeflow_app.components.canvas import flow_canvas
from nodeflow_app.components.canvas_hint import canvas_hint
from nodeflow_app.components.chat_panel import chat_panel, chat_toggle
from nodeflow_app.components.graph_list import import_button, import_errors_dialog
from nodeflow_app.components.header import header, logo
from nodeflow_app.components.history_panel import history_banner, history_panel, history_toggle, restore_dialog
from nodeflow_app.components.inspector import BLUR_ON_ENTER, inspector
from nodeflow_app.components.palette import palette
from nodeflow_app.components.not_found import graph_not_found, not_found_message
from nodeflow_app.components.presence import presence_bar
from nodeflow_app.components.run_panel import rerun_button, run_panel, run_view_chip, runs_toggle
from nodeflow_app.components.template_dialog import save_template_item, template_dialog
from nodeflow_app.components.transfer_dialog import transfer_dialog, transfer_items
from nodeflow_app.components.theme import (BORDER, LABELS_FROM, PANEL_BG, TOP_BAR, WIDE_CANVAS_FROM, below_width,
                                          button_word, from_width)
from nodeflow_app.editor.catalog import catalog
from nodeflow_app.state.chat_state import ChatState
from nodeflow_app.state.editor_state import EditorState
from nodeflow_app.state.graph_room import GraphRoom
from nodeflow_app.state.history_state import HistoryState
from nodeflow_app.state.layout_state import LayoutState
from nodeflow_app.state.run_message_state import RunMessageState
from nodeflow_app.state.run_history_state import RunHistoryState
from nodeflow_app.state.run_view_state import RunViewState
from nodeflow_app.components.trigger_panel import active_switch
from nodes._registry import default_registry

FIT_VIEW = "window.__nodeflowCanvas && window.__nodeflowCanvas.fitView()"


SAVE_STATUS_WIDTH = "124px"  # the widest text, "Unsaved changes": the buttons after it never shift


def save_status() -> rx.Component:
    return rx.match(
        GraphRoom.save_status,
        ("unsaved", rx.badge("Unsaved changes", color_scheme="amber", variant="soft")),
        ("error", rx.tooltip(rx.badge("Not saved", color_scheme="red", variant="soft"),
                             content="Saving failed: Validate lists why")),
        rx.badge(rx.cond(GraphRoom.saved_version > 0, f"Saved · v{GraphRoom.saved_version}", "Saved"),
                 color_scheme="green", variant="soft"),
    )


def tool_button(icon: str, label: str, testid: str, **props) -> rx.Component:
    return rx.tooltip(
        rx.icon_button(rx.icon(icon, size=16), variant="ghost", color_scheme="gray", size="2",
                       aria_label=label, custom_attrs={"data-testid": testid}, **props),
        content=label,
    )


def graph_name_field() -> rx.Component:
    """The graph's name, editable in place: committed when the field is left or Enter is pressed."""
    return rx.input(
        default_value=EditorState.graph_name, key=EditorState.graph_name + EditorState.name_field_rev.to_string(),
        on_blur=EditorState.rename_graph, variant="soft", color_scheme="gray", size="2", aria_label="Graph name",
        title="Rename the graph", read_only=EditorState.read_only,
        # Long names get more room; in a narrow window the name gives up room first, down to a readable 150 px.
        width=rx.cond(EditorState.graph_name.length() > 24, "320px", "200px"), min_width="150px", flex_shrink="1",
        style={"fontWeight": "500", "background": "transparent"},
        custom_attrs={"data-testid": "graph-name", "onKeyDown": BLUR_ON_ENTER},
    )


def test_message_button() -> rx.Component:
    """A Chat Start graph's test run: type the message first (a small prompt), then it runs."""
    return rx.fragment(
        rx.tooltip(  # green like Run: the other way to run the graph
            rx.icon_button(rx.icon("message-square-text", size=16), variant="soft", color_scheme="green", size="2",
                           aria_label="Test run with a message", on_click=RunMessageState.ask,
                           custom_attrs={"data-testid": "test-message"}),
            content="Test run with a message: type what the Chat Start receives, then it runs",
        ),
        rx.dialog.root(
            rx.dialog.content(
                rx.dialog.title("Test run"),
                rx.dialog.description("The message the Chat Start receives in this run.", size="2"),
                rx.form(
                    rx.vstack(
                        rx.text_area(name="message", default_value=RunMessageState.message, auto_focus=True,
                                     rows="3", width="100%", custom_attrs={"data-testid": "test-message-input"}),
                        rx.hstack(
                            rx.dialog.close(rx.button("Cancel", type="button", variant="soft", color_scheme="gray")),
                            rx.button(rx.icon("play", size=14), "Run", type="submit",
                                      custom_attrs={"data-testid": "test-message-run"}),
                            justify="end", width="100%",
                        ),
                        spacing="3", margin_top="12px",
                    ),
                    on_submit=RunMessageState.send, reset_on_submit=False,
                ),
                max_width="480px",
            ),
            open=RunMessageState.open, on_open_change=RunMessageState.set_open,
        ),
    )


IMPORT_INPUT = "[data-testid=import-upload] input[type=file]"


def graph_menu() -> rx.Component:
    """The graph's less frequent actions: export it, import a new graph, copy or move it to another workspace,
    save it as a template. (A viewer may export only.)"""
    return rx.fragment(
        rx.dropdown_menu.root(
            rx.dropdown_menu.trigger(rx.icon_button(rx.icon("ellipsis", size=16), variant="ghost", color_scheme="gray",
                                                    aria_label="More actions",
                                                    custom_attrs={"data-testid": "editor-menu"})),
            rx.dropdown_menu.content(
                rx.dropdown_menu.item(rx.icon("download", size=14), "Export JSON", on_click=EditorState.export_graph,
                                      custom_attrs={"data-testid": "export-graph"}),
                rx.cond(~EditorState.read_only, rx.fragment(
                    # A menu item cannot hold the upload (it goes when the menu closes): it opens the file
                    # chooser of the hidden one below.
                    rx.dropdown_menu.item(rx.icon("upload", size=14), "Import a graph (JSON)…",
                                          on_click=rx.call_script(f"document.querySelector('{IMPORT_INPUT}').click()"),
                                          custom_attrs={"data-testid": "import-graph"}),
                    rx.dropdown_menu.separator(),
                    *transfer_items("", EditorState.graph_name),
                    save_template_item("", EditorState.graph_name),
                )),
            ),
        ),
        # Import makes a new graph from a JSON file (as the list's).
        rx.cond(~EditorState.read_only, import_button(hidden=True)),
    )


def toolbar() -> rx.Component:
    editing = ~EditorState.read_only
    return rx.hstack(
        rx.tooltip(rx.link(logo(word=False), href=routes.GRAPHS, underline="none", color="inherit",
                           aria_label="All graphs", flex_shrink="0"),
                   content="All graphs"),
        rx.box(  # the breadcrumb; the logo leads to the list too
            rx.hstack(
                rx.separator(orientation="vertical", size="1"),
                rx.link(rx.text("Graphs", size="2", color_scheme="gray"), href=routes.GRAPHS,
                        custom_attrs={"data-testid": "back-to-graphs"}),
                rx.text("/", size="2", color_scheme="gray"),
                align="center", spacing="2",
            ),
            display=from_width(LABELS_FROM, "block"), flex_shrink="0",
        ),
        graph_name_field(),
        rx.box(save_status(), width=SAVE_STATUS_WIDTH, flex_shrink="0", custom_attrs={"data-testid": "save-status"}),
        rx.cond(EditorState.read_only, rx.badge(rx.icon("eye", size=12), "View only", color_scheme="gray",
                                                variant="soft", custom_attrs={"data-testid": "view-only"})),
        presence_bar(),
        rx.box(flex="1"),
        active_switch(),
        # What a viewer may not do is not offered (the server refuses it anyway).
        rx.cond(editing, rx.fragment(
            tool_button("undo-2", "Undo (Ctrl+Z)", "undo", on_click=EditorState.undo, disabled=~EditorState.can_undo),
            tool_button("redo-2", "Redo (Ctrl+Shift+Z)", "redo", on_click=EditorState.redo,
                        disabled=~EditorState.can_redo),
        )),
        tool_button("maximize", "Fit view (Shift+1)", "fit-view", on_click=rx.call_script(FIT_VIEW)),
        rx.cond(editing, tool_button("trash-2", "Delete the selection (Delete)", "delete-node",
                                     on_click=EditorState.delete_selection, disabled=~EditorState.has_selection)),
        rx.separator(orientation="vertical", size="1"),
        issues_popover(),
        graph_menu(),
        runs_toggle(),
        history_toggle(),
        rx.cond(editing, rerun_button()),
        rx.cond(GraphRoom.has_chat_start & editing, test_message_button()),
        rx.cond(editing, rx.tooltip(
            rx.button(rx.icon("save", size=14), button_word("Save"), size="2", aria_label="Save",
                      on_click=EditorState.save, custom_attrs={"data-testid": "save-graph"}),
            content="Save a version (Ctrl+S)",
        )),
        chat_toggle(),
        # Tighter than other pages' bars; narrower windows drop words (theme.PANEL_WORDS_FROM, LABELS_FROM): all
        # of it fits from 1024 px up.
        **{**TOP_BAR, "spacing": "2"},
        custom_attrs={"data-testid": "editor-toolbar"},
    )


def issue_row(issue: rx.Var) -> rx.Component:
    return _row(issue, warning=False)


def warning_row(issue: rx.Var) -> rx.Component:
    return _row(issue, warning=True)


def _row(issue: rx.Var, warning: bool) -> rx.Component:
    return rx.hstack(
        rx.icon("triangle-alert" if warning else "circle-alert", size=14,
                color="var(--amber-9)" if warning else "var(--red-9)", flex_shrink="0", margin_top="3px"),
        rx.text(issue["text"], size="2"),
        align="start",
        spacing="2",
        padding="6px",
        border_radius="var(--radius-2)",
        cursor="pointer",
        _hover={"background": "var(--gray-a3)"},
        on_click=EditorState.select_node(issue["node_id"]),
        custom_attrs={"data-testid": "warning" if warning else "issue"},
    )


def issues_popover() -> rx.Component:
    """Validate: the same checks as `nodeflow validate`; errors block a run, warnings say what to set up."""
    count = EditorState.issue_list.length()
    warnings = EditorState.warning_list.length()
    word = rx.cond(count > 0, rx.cond(count == 1, "1 issue", f"{count} issues"), "Validate")
    return rx.popover.root(
        rx.popover.trigger(
            rx.button(
                rx.icon(rx.cond(count > 0, "triangle-alert", "circle-check"), size=14),
                button_word(word),
                variant="soft", size="2", color_scheme=rx.cond(count > 0, "red", "gray"), aria_label=word,
                on_click=EditorState.validate,
                custom_attrs={"data-testid": "validate"},
            ),
        ),
        rx.popover.content(
            rx.vstack(
                rx.cond(
                    count > 0,
                    rx.vstack(rx.foreach(EditorState.issue_list, issue_row), spacing="1", width="100%"),
                    rx.text(rx.cond(warnings > 0, "No errors: the graph is valid. Before it runs:",
                                    "No issues: the graph is valid."), size="2", color_scheme="gray"),
                ),
                rx.foreach(EditorState.warning_list, warning_row),
                spacing="1", width="100%",
            ),
            max_width="480px",
            max_height="360px",
            overflow_y="auto",
            custom_attrs={"data-testid": "issues"},
        ),
        open=EditorState.issues_open,
        on_open_change=EditorState.set_issues_open,
    )


def not_found() -> rx.Component:
    """The editor's place when its graph is not there for this person (under the app's header: nothing of the
    graph's toolbar applies)."""
    return rx.cond(
        EditorState.access_ended,
        not_found_message("Access ended", "You are no longer a member of this graph's workspace, or you signed out.",
                          testid="graph-access-ended"),
        graph_not_found(EditorState.not_found),
    )


RAIL_WIDTH = "40px"


def _docked_right() -> rx.Var:
    """The chat or History (one at a time: each closes the other) is open right of the canvas."""
    return ChatState.panel_open | HistoryState.panel_open


def _shown(choice: rx.Var, folds_for: rx.Var) -> rx.Var:
    """A side panel is unfolded when the person said so, or by default while `folds_for` (a panel) is closed."""
    return rx.cond(choice == "auto", ~folds_for, choice == "open")


def rail(icon: str, label: str, testid: str, on_click, side: str) -> rx.Component:
    """A folded side panel: a thin bar whose button unfolds it."""
    return rx.box(
        tool_button(icon, label, testid, on_click=on_click),
        width=RAIL_WIDTH, min_width=RAIL_WIDTH, height="100%", padding_top="10px", display="flex",
        justify_content="center", background=PANEL_BG, **{f"border_{side}": BORDER},
        custom_attrs={"data-testid": f"{testid}-rail"},
    )


def side_palette(registry) -> rx.Component:
    def unfolded():
        return palette(registry.by_category(),
                       fold=tool_button("panel-left-close", "Fold the nodes panel", "palette-fold",
                                        on_click=LayoutState.show_palette(False)))

    def folded():
        return rail("panel-left-open", "Show the nodes", "palette-unfold", LayoutState.show_palette(True), "right")

    return rx.cond(
        EditorState.read_only,  # a viewer adds nothing: no palette
        folded(),
        rx.cond(
            (LayoutState.palette == "auto") & ~ChatState.panel_open,
            # Unfolded by default only where it leaves the canvas room (at 1024 px it left ~380 px).
            rx.fragment(
                rx.box(unfolded(), display=from_width(WIDE_CANVAS_FROM, "block"), height="100%", flex_shrink="0"),
                rx.box(folded(), display=below_width(WIDE_CANVAS_FROM, "block"), height="100%", flex_shrink="0"),
            ),
            rx.cond(_shown(LayoutState.palette, ChatState.panel_open), unfolded(), folded()),
        ),
    )


def side_inspector(registry) -> rx.Component:
    # With the chat or History open, the inspector's empty state would only take room from the canvas.
    return rx.cond(
        _docked_right() & (EditorState.selected_id == ""),
        rx.fragment(),
        rx.cond(
            # History beside it left 284 px at 1024 px: it folds for History too.
            _shown(LayoutState.inspector, _docked_right()),
            inspector(registry.definitions(),
                      fold=tool_button("panel-right-close", "Fold the inspector", "inspector-fold",
                                on_click=LayoutState.show_inspector(False))),
            rail("panel-right-open", "Show the inspector", "inspector-unfold", LayoutState.show_inspector(True),
                 "left"),
        ),
    )


def canvas_notes() -> rx.Component:
    """Along the canvas's top edge: the run shown (left) and History's banner (centred), side by side or, when the
    canvas is narrow, one under the other: never over each other. Clicks between them reach the canvas."""
    return rx.hstack(
        run_view_chip(), history_banner(),
        position="absolute", top="10px", left="10px", right="10px", z_index="6", spacing="2", align="center",
        wrap="wrap", pointer_events="none",
    )


def editor_page() -> rx.Component:
    registry = default_registry()
    return rx.vstack(
        rx.cond(EditorState.not_found != "", header(), toolbar()),
        import_errors_dialog(),
        transfer_dialog(),
        template_dialog(),
        rx.cond(
            EditorState.not_found != "",
            not_found(),
            rx.hstack(
                side_palette(registry),
                rx.box(
                    flow_canvas(
                        definitions=catalog(registry.definitions()),
                        graph=EditorState.canvas_graph,
                        patch=GraphRoom.patch,
                        catchup=EditorState.catchup,
                        people=GraphRoom.people,
                        cursors=GraphRoom.cursors,
                        me=EditorState.me,
                        focus=EditorState.focus,
                        issues=EditorState.node_issues,
                        statuses=RunViewState.statuses,
                        errors=RunViewState.errors,
                        ports=RunViewState.ports,
                        pinned=RunHistoryState.pinned,
                        history=HistoryState.canvas_view,
                        read_only=EditorState.read_only,
                        on_connect=EditorState.on_connect,
                        on_move=EditorState.on_move,
                        on_delete=EditorState.on_delete,
                        on_select=EditorState.on_select,
                        on_parameter=EditorState.on_parameter,
                        on_add=EditorState.on_add,
                        on_paste=EditorState.on_paste,
                        on_undo=EditorState.undo,
                        on_redo=EditorState.redo,
                        on_save=EditorState.save,
                        on_resync=EditorState.resync,
                        on_viewport=EditorState.on_viewport,
                        on_cursor=EditorState.on_cursor,
                        on_remote=EditorState.on_remote,
                        on_leave=EditorState.leave_room,
                        on_run_to=RunHistoryState.run_to_here,
                    ),
                    canvas_notes(),
                    canvas_hint(),
                    position="relative",
                    flex="1",
                    height="100%",
                    min_width="0",
                    custom_attrs={"data-testid": "canvas"},
                ),
                side_inspector(registry),
                history_panel(),
                restore_dialog(),
                chat_panel(),
                spacing="0",
                width="100%",
                flex="1",
                min_height="0",
            ),
        ),
        run_panel(),
        spacing="0",
        height="100vh",
        width="100vw",
        overflow="hidden",
    )
