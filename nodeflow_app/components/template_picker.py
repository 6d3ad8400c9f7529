"""The New graph picker: Blank and every template of nodeflow_app/templates, each with what it does, then the
templates the workspace's members saved (with a delete button)."""

from __future__ import annotations

import reflex as rx

from nodeflow_app.components.theme import BORDER, PANEL_BG
from nodeflow_app.state.graph_list_state import GraphListState, TemplateCard


def _testid(value) -> dict:
    return {"data-testid": value}


def template_card(card: TemplateCard) -> rx.Component:
    nodes = rx.cond(card.node_count == 1, "1 node", f"{card.node_count} nodes")
    return rx.el.button(
        rx.vstack(
            rx.hstack(
                rx.icon(rx.cond(card.id == "blank", "square-plus", "layout-template"), size=18,
                        color="var(--accent-11)", flex_shrink="0"),
                rx.text(card.name, size="3", weight="medium"),
                rx.box(flex="1"),
                rx.text(nodes, size="1", color_scheme="gray", white_space="nowrap"),
                align="center",
                spacing="2",
                width="100%",
            ),
            rx.text(card.description, size="2", color_scheme="gray", text_align="left"),
            spacing="2",
            align="start",
            width="100%",
        ),
        on_click=GraphListState.create_graph(card.id),
        disabled=GraphListState.creating,
        type="button",
        display="flex",
        align_items="flex-start",
        padding="12px 14px",
        border=BORDER,
        border_radius="var(--radius-3)",
        background=PANEL_BG,
        color="inherit",
        cursor="pointer",
        text_align="left",
        _hover={"background": "var(--gray-a3)", "border_color": "var(--accent-8)"},
        _disabled={"cursor": "progress", "opacity": "0.7"},
        custom_attrs={"data-testid": f"template-{card.id}", "aria-label": f"New graph: {card.name}"},
    )


def workspace_template_card(card: TemplateCard) -> rx.Component:
    """A template of the workspace: the same card, and a button that deletes it."""
    return rx.box(
        template_card(card),
        rx.icon_button(rx.icon("trash-2", size=12), size="1", variant="ghost", color_scheme="red",
                       on_click=GraphListState.delete_template(card.id), disabled=GraphListState.creating,
                       position="absolute", bottom="8px", right="8px",
                       aria_label=f"Delete the template {card.name}",
                       custom_attrs={"data-testid": f"template-delete-{card.name}"}),
        position="relative",
    )


def template_picker() -> rx.Component:
    return rx.dialog.root(
        rx.dialog.content(
            rx.dialog.title("New graph"),
            rx.dialog.description("Start blank (a Chat Start to build on) or from a working template.",
                                  size="2", color_scheme="gray"),
            rx.box(
                rx.grid(rx.foreach(GraphListState.templates, template_card), columns="3", spacing="3"),
                rx.cond(GraphListState.workspace_templates.length() > 0, rx.fragment(
                    rx.text("Your workspace's templates", size="2", weight="medium", margin_top="16px",
                            margin_bottom="8px", as_="div"),
                    rx.grid(rx.foreach(GraphListState.workspace_templates, workspace_template_card), columns="3",
                            spacing="3", custom_attrs=_testid("workspace-templates")),
                )),
                margin_y="16px", max_height="60vh", overflow_y="auto",
            ),
            rx.hstack(
                rx.cond(GraphListState.creating,
                        rx.hstack(rx.spinner(size="2"), rx.text("Creating the graph ...", size="2"), spacing="2",
                                  align="center", custom_attrs=_testid("template-creating"))),
                rx.box(flex="1"),
                rx.dialog.close(rx.button("Cancel", variant="soft", color_scheme="gray",
                                          disabled=GraphListState.creating, custom_attrs=_testid("template-cancel"))),
                align="center",
                width="100%",
            ),
            max_width="960px",
            # The second click of a double click on New graph lands outside the fresh dialog: keep it open.
            on_pointer_down_outside=rx.prevent_default,
            custom_attrs=_testid("template-picker"),
        ),
        open=GraphListState.picker_open,
        on_open_change=GraphListState.set_picker_open,
    )
