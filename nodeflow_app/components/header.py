"""The top bar: logo and tagline."""

import reflex as rx

from nodeflow_app import routes
from nodeflow_app.components.theme import TOP_BAR

TAGLINE = "Visual builder for AI agent workflows"


def logo() -> rx.Component:
    return rx.hstack(
        rx.center(
            rx.icon("workflow", size=18, color="white"),
            width="30px",
            height="30px",
            border_radius="8px",
            background="linear-gradient(135deg, var(--violet-9), var(--cyan-9))",
        ),
        rx.text("NodeFlow", size="5", weight="bold", custom_attrs={"data-testid": "logo"}),
        align="center",
        spacing="2",
    )


def header() -> rx.Component:
    return rx.hstack(
        logo(),
        rx.separator(orientation="vertical", size="1"),
        rx.text(TAGLINE, size="2", color_scheme="gray", custom_attrs={"data-testid": "tagline"}),
        rx.box(flex="1"),
        rx.link(rx.hstack(rx.icon("library", size=16), rx.text("Knowledge", size="2"), align="center", spacing="1"),
                href=routes.KNOWLEDGE, color_scheme="gray", custom_attrs={"data-testid": "nav-knowledge"}),
        rx.link(rx.hstack(rx.icon("settings", size=16), rx.text("Settings", size="2"), spacing="1", align="center"),
                href=routes.SETTINGS, color_scheme="gray", custom_attrs={"data-testid": "settings-link"}),
        rx.badge("preview", variant="soft", color_scheme="violet"),
        **TOP_BAR,
        custom_attrs={"data-testid": "app-header"},
    )
