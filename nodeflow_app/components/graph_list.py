"""The graph list page: search, create (blank or from a template), import, and per graph open / rename /
duplicate / copy or move to another workspace / delete."""

import reflex as rx

from nodeflow_app import routes
from nodeflow_app.components import dialogs
from nodeflow_app.components.header import header
from nodeflow_app.components.legacy_import import legacy_import_dialog
from nodeflow_app.components.loading import until_loaded
from nodeflow_app.components.template_picker import template_picker
from nodeflow_app.components.template_dialog import save_template_item, template_dialog
from nodeflow_app.components.transfer_dialog import transfer_dialog, transfer_items
from nodeflow_app.components.theme import APP_BG, BORDER, PANEL_BG
from nodeflow_app.state.graph_list_state import UPLOAD_ID, GraphListRow, GraphListState, ImportIssue
from nodeflow_app.state.live_rooms import GraphListRoom

MAX_IMPORT_MB = 5


def _testid(value) -> dict:
    return {"data-testid": value}


def new_graph_button() -> rx.Component:
    return rx.button(rx.icon("plus", size=16), "New graph", on_click=GraphListState.open_picker,
                     custom_attrs=_testid("new-graph"))


def import_button(hidden: bool = False) -> rx.Component:
    """A button that opens the file chooser (a JSON file may also be dropped on it); `hidden`: no button, only
    the file input, which a menu item clicks (the editor's, where room is short)."""
    button = rx.button(rx.icon("upload", size=16), "Import", variant="soft", type="button",
                       custom_attrs=_testid("import-graph"))
    return rx.upload(
        rx.fragment() if hidden else button,
        id=UPLOAD_ID,
        accept={"application/json": [".json"]},
        multiple=False,
        max_files=1,
        max_size=MAX_IMPORT_MB * 1024 * 1024,
        on_drop=GraphListState.import_chunks(rx.upload_files_chunk(upload_id=UPLOAD_ID)),
        border="none",
        padding="0",
        custom_attrs=_testid("import-upload"),
        **({"display": "none"} if hidden else {}),
    )


def toolbar() -> rx.Component:
    return rx.hstack(
        rx.heading("Graphs", size="6"),
        rx.badge(GraphListState.count_text, variant="soft", color_scheme="gray", custom_attrs=_testid("graph-count")),
        rx.box(flex="1"),
        rx.input(
            rx.input.slot(rx.icon("search", size=16)),
            placeholder="Search graphs",
            aria_label="Search graphs",
            value=GraphListState.search,
            on_change=GraphListState.set_search,  # a value + on_change input is debounced by Reflex (300 ms)
            width="260px",
            custom_attrs=_testid("graph-search"),
        ),
        new_graph_button(),
        import_button(),
        align="center",
        spacing="3",
        width="100%",
    )


def row_menu(row: GraphListRow) -> rx.Component:
    return rx.dropdown_menu.root(
        rx.dropdown_menu.trigger(
            rx.icon_button(rx.icon("ellipsis", size=16), variant="ghost", color_scheme="gray",
                           aria_label="Graph actions", custom_attrs=_testid(f"graph-menu-{row.name}")),
        ),
        rx.dropdown_menu.content(
            rx.dropdown_menu.item(rx.icon("pencil", size=14), "Rename",
                                  on_click=GraphListState.start_rename(row.id, row.name),
                                  custom_attrs=_testid("graph-rename")),
            rx.dropdown_menu.item(rx.icon("copy", size=14), "Duplicate",
                                  on_click=GraphListState.duplicate(row.id), custom_attrs=_testid("graph-duplicate")),
            *transfer_items(row.id, row.name),
            save_template_item(row.id, row.name),
            rx.dropdown_menu.separator(),
            rx.dropdown_menu.item(rx.icon("trash-2", size=14), "Delete", color="red",
                                  on_click=GraphListState.ask_delete(row.id, row.name),
                                  custom_attrs=_testid("graph-delete")),
        ),
    )


def graph_row(row: GraphListRow) -> rx.Component:
    return rx.table.row(
        rx.table.row_header_cell(
            rx.link(row.name, href=routes.editor_url(row.id), weight="medium",
                    custom_attrs=_testid(f"graph-open-{row.name}")),
        ),
        rx.table.cell(row.node_count, custom_attrs=_testid("graph-node-count")),
        rx.table.cell(rx.text(row.edited, title=row.edited_title), custom_attrs=_testid("graph-edited")),
        # The workspace's list room: a switch flipped in an editor or another tab shows here at once.
        rx.table.cell(rx.switch(checked=GraphListRoom.live.contains(row.id), size="1",
                                title="Active: webhooks and schedules run it", aria_label=f"Active: {row.name}",
                                on_change=lambda on: GraphListState.set_active(row.id, on),
                                custom_attrs=_testid(f"graph-active-{row.name}"))),
        rx.table.cell(row_menu(row), text_align="right"),
        align="center",
        custom_attrs={"data-testid": f"graph-row-{row.name}", "data-graph-id": row.id},
    )


def graph_table() -> rx.Component:
    return rx.table.root(
        rx.table.header(
            rx.table.row(
                rx.table.column_header_cell("Name"),
                rx.table.column_header_cell("Nodes", width="100px"),
                rx.table.column_header_cell("Last edited", width="180px"),
                rx.table.column_header_cell("Active", width="80px"),
                rx.table.column_header_cell("", width="60px"),
            ),
        ),
        rx.table.body(rx.foreach(GraphListState.rows, graph_row)),
        variant="surface",
        width="100%",
        custom_attrs=_testid("graph-table"),
    )


def empty_state() -> rx.Component:
    return rx.center(
        rx.cond(
            GraphListState.total == 0,
            rx.vstack(
                rx.icon("workflow", size=40, color="var(--gray-8)"),
                rx.text("No graphs yet", size="4", weight="medium"),
                rx.text("Click New graph to start blank or from a template, or import a graph exported as JSON.",
                        size="2", color_scheme="gray"),
                align="center",
                spacing="2",
            ),
            rx.text("No graph matches “", GraphListState.search, "”.", size="3", color_scheme="gray"),
        ),
        padding="64px",
        width="100%",
        border=BORDER,
        border_radius="var(--radius-4)",
        background=PANEL_BG,
        custom_attrs=_testid("graph-empty"),
    )


def rename_dialog() -> rx.Component:
    return dialogs.rename_dialog("Rename graph", field="name", value=GraphListState.rename_name,
                                 error=GraphListState.rename_error, on_submit=GraphListState.confirm_rename,
                                 open_=GraphListState.rename_open, on_open_change=GraphListState.set_rename_open)


def delete_dialog() -> rx.Component:
    return dialogs.delete_dialog(
        "Delete graph", "“", GraphListState.delete_name, "” and all its versions will be deleted. This cannot be undone.",
        on_confirm=GraphListState.confirm_delete, open_=GraphListState.delete_open,
        on_open_change=GraphListState.set_delete_open)


def import_issue(issue: ImportIssue) -> rx.Component:
    return rx.hstack(
        rx.badge(issue.where, variant="soft", color_scheme="red", flex_shrink="0"),
        rx.text(issue.message, size="2"),
        align="start",
        spacing="2",
        custom_attrs=_testid("import-issue"),
    )


def import_errors_dialog() -> rx.Component:
    return rx.dialog.root(
        rx.dialog.content(
            rx.dialog.title("Could not import ", GraphListState.import_file),
            rx.dialog.description("Nothing was stored. Fix these problems in the file and import it again.",
                                  size="2", color_scheme="gray"),
            rx.vstack(rx.foreach(GraphListState.import_issues, import_issue),
                      spacing="2", margin_y="16px", max_height="50vh", overflow_y="auto"),
            rx.hstack(rx.dialog.close(rx.button("Close", variant="soft", custom_attrs=_testid("import-close"))),
                      justify="end"),
            max_width="640px",
            custom_attrs=_testid("import-errors"),
        ),
        open=GraphListState.import_open,
        on_open_change=GraphListState.set_import_open,
    )


def graph_list_page() -> rx.Component:
    return rx.vstack(
        header(),
        rx.box(
            rx.vstack(
                toolbar(),
                until_loaded(GraphListState.loaded,
                             rx.cond(GraphListState.rows.length() > 0, graph_table(), empty_state()),
                             GraphListState.load_error, GraphListState.load),
                spacing="5",
                width="100%",
                max_width="1100px",
                margin_x="auto",
                padding="32px 24px",
            ),
            flex="1",
            width="100%",
            overflow_y="auto",
            background=APP_BG,
        ),
        template_picker(),
        rename_dialog(),
        delete_dialog(),
        import_errors_dialog(),
        legacy_import_dialog(),
        transfer_dialog(),
        template_dialog(),
        spacing="0",
        height="100vh",
        width="100vw",
        overflow="hidden",
    )
