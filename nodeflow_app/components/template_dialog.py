"""The "Save as template…" menu item and its dialog (graph list rows, the editor's menu)."""

from __future__ import annotations

import reflex as rx

from nodeflow_app.state.template_state import TemplateSaveState


def _testid(value: str) -> dict:
    return {"data-testid": value}


def save_template_item(graph_id, name) -> rx.Component:
    """The menu item; put it in a dropdown menu's content."""
    return rx.dropdown_menu.item(rx.icon("layout-template", size=14), "Save as template…",
                                 on_click=TemplateSaveState.ask(graph_id, name),
                                 custom_attrs=_testid("graph-save-template"))


def template_dialog() -> rx.Component:
    return rx.dialog.root(
        rx.dialog.content(
            rx.dialog.title("Save as template"),
            rx.dialog.description("Everyone who may edit in this workspace finds it in New graph. The graph is "
                                  "taken as last saved; secrets stay behind.", size="2", color_scheme="gray"),
            rx.form(
                rx.vstack(
                    rx.input(name="name", default_value=TemplateSaveState.name, placeholder="Template name",
                             width="100%", custom_attrs=_testid("template-name")),
                    rx.text_area(name="description", placeholder="What it does (optional)", width="100%",
                                 custom_attrs=_testid("template-description")),
                    rx.cond(TemplateSaveState.error != "",
                            rx.text(TemplateSaveState.error, color_scheme="red", size="2",
                                    custom_attrs=_testid("template-error"))),
                    rx.hstack(
                        rx.dialog.close(rx.button("Cancel", variant="soft", color_scheme="gray", type="button")),
                        rx.button("Save template", type="submit", custom_attrs=_testid("template-save")),
                        justify="end", spacing="2", width="100%",
                    ),
                    spacing="3", margin_top="12px",
                ),
                on_submit=TemplateSaveState.save, reset_on_submit=False,
            ),
            max_width="460px",
            custom_attrs=_testid("template-dialog"),
        ),
        open=TemplateSaveState.open,
        on_open_change=TemplateSaveState.set_open,
    )
