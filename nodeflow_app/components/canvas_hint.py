"""The hint over an (almost) empty canvas: how to add nodes and wire them. Gone once a second node is there."""

from __future__ import annotations

import reflex as rx

from nodeflow_app.components.theme import BORDER, PANEL_BG
from nodeflow_app.state.graph_room import GraphRoom


def canvas_hint() -> rx.Component:
    nearly_empty = (GraphRoom.node_count >= 0) & (GraphRoom.node_count <= 1)
    return rx.cond(
        nearly_empty,
        rx.hstack(
            rx.icon("mouse-pointer-click", size=18, color="var(--accent-11)", flex_shrink="0"),
            rx.vstack(
                rx.text(rx.cond(GraphRoom.node_count == 0, "This graph is empty.", "Add the next step."),
                        size="2", weight="medium"),
                rx.text("Click a node in the palette on the left (or drag it onto the canvas), then connect it "
                        "by dragging from one dot to another.", size="2", color_scheme="gray"),
                spacing="1",
            ),
            align="start",
            spacing="3",
            position="absolute",
            top="20px",
            left="50%",
            transform="translateX(-50%)",
            max_width="520px",
            padding="12px 16px",
            border=BORDER,
            border_radius="var(--radius-3)",
            background=PANEL_BG,
            box_shadow="var(--shadow-3)",
            pointer_events="none",  # never in the way of the canvas under it
            z_index="5",
            custom_attrs={"data-testid": "canvas-hint"},
        ),
    )
