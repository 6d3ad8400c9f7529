"""The dialog that shows the migration report of a graph of the older runtime before it is imported."""

import reflex as rx

from nodeflow_app.state.legacy_import_state import LegacyImportState, ReportRow

_COLORS = {"mapped": "green", "unmapped": "amber", "warning": "orange", "error": "red"}
_LABELS = {"mapped": "converted", "unmapped": "not mapped", "warning": "warning", "error": "error"}


def _row(row: ReportRow) -> rx.Component:
    return rx.hstack(
        rx.match(row.kind, *[(kind, rx.badge(_LABELS[kind], color_scheme=color, variant="soft", flex_shrink="0"))
                             for kind, color in _COLORS.items()]),
        rx.code(row.where, variant="ghost", flex_shrink="0"),
        rx.text(row.text, size="2"),
        align="start",
        spacing="2",
        custom_attrs={"data-testid": "legacy-line", "data-kind": row.kind},
    )


def legacy_import_dialog() -> rx.Component:
    return rx.dialog.root(
        rx.dialog.content(
            rx.dialog.title("Import a graph of the older runtime: ", LegacyImportState.file_name),
            rx.dialog.description(LegacyImportState.summary, size="2", color_scheme="gray",
                                  custom_attrs={"data-testid": "legacy-summary"}),
            rx.vstack(rx.foreach(LegacyImportState.rows, _row), spacing="2", margin_y="16px",
                      max_height="55vh", overflow_y="auto", custom_attrs={"data-testid": "legacy-report"}),
            rx.hstack(
                rx.dialog.close(rx.button("Cancel", variant="soft", color_scheme="gray",
                                          custom_attrs={"data-testid": "legacy-cancel"})),
                rx.button("Import converted graph", on_click=LegacyImportState.confirm,
                          disabled=~LegacyImportState.ok, custom_attrs={"data-testid": "legacy-confirm"}),
                justify="end",
                spacing="3",
            ),
            max_width="820px",
            custom_attrs={"data-testid": "legacy-import"},
        ),
        open=LegacyImportState.open,
        on_open_change=LegacyImportState.set_open,
    )
