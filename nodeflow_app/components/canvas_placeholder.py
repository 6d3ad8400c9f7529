"""The centre area until the React Flow canvas lands."""

import reflex as rx

from nodeflow_app.components.theme import APP_BG


def canvas_placeholder() -> rx.Component:
    return rx.center(
        rx.vstack(
            rx.icon("workflow", size=40, color="var(--gray-8)"),
            rx.text("Canvas arrives with the editor", size="3", color_scheme="gray"),
            align="center",
            spacing="3",
        ),
        flex="1",
        height="100%",
        background=APP_BG,
        background_image="radial-gradient(var(--gray-a5) 1px, transparent 1px)",
        background_size="20px 20px",
        custom_attrs={"data-testid": "canvas"},
    )
