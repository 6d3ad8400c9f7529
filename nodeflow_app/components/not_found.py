"""NodeFlow's not-found page, for an address no page has; its message also stands in for a graph that is not
there for the visitor (deleted, never made, or in a workspace they are not in: the same answer, see SPEC 10)."""

import reflex as rx

from nodeflow_app import routes
from nodeflow_app.components.header import header
from nodeflow_app.components.theme import APP_BG


def not_found_message(title, *text, testid: str = "") -> rx.Component:
    """A heading, a short explanation and the way back to the graphs, centred where the page's content goes."""
    return rx.center(
        rx.vstack(
            rx.icon("search-x", size=40, color="var(--gray-8)"),
            rx.heading(title, size="5"),
            rx.text(*text, size="2", color_scheme="gray", text_align="center", max_width="440px",
                    custom_attrs={"data-testid": testid} if testid else {}),
            rx.link(rx.button(rx.icon("arrow-left", size=14), "Back to the graphs", variant="soft"),
                    href=routes.GRAPHS, custom_attrs={"data-testid": "not-found-back"}),
            align="center", spacing="3",
        ),
        flex="1", width="100%", padding="64px", background=APP_BG,
        custom_attrs={"data-testid": "not-found"},
    )


def graph_not_found(graph_id) -> rx.Component:
    """A /graph/<id> page's message when the graph is not there for the visitor: the same whether it was deleted,
    never existed or belongs to a workspace they are not in."""
    return not_found_message("Graph not found", "There is no graph ", rx.code(graph_id), " that you can open: it may "
                             "have been deleted, or it belongs to a workspace you are not in.")


def not_found_page() -> rx.Component:
    return rx.vstack(
        header(),
        not_found_message("Page not found", "There is no page at this address: the link may be mistyped, or what it "
                          "showed has moved."),
        spacing="0", height="100vh", width="100vw", overflow="hidden",
    )
