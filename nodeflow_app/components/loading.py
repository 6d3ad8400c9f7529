"""A list's place on a page until the page's first load answered: a spinner, never the list's empty state (people
with graphs or collections saw "No ... yet" flash, and thought their data lost); what failed, with a Retry, when
that load failed (the spinner went on forever, beside an error toast)."""

from typing import Any

import reflex as rx


def until_loaded(loaded: rx.Var, content: rx.Component, failed: rx.Var, retry: Any = None,
                 padding: str = "64px") -> rx.Component:
    """`content` once `loaded` (its state's first load finished); before, a spinner, or `failed` (the state's
    `load_error`: "Could not load the ...: <reason>") with a Retry button that sends `retry` (the load again).
    Without `retry`, nothing on failure: another list of the same load says it (once a page)."""
    return rx.cond(loaded, content, rx.cond(
        failed != "",
        rx.fragment() if retry is None else rx.center(rx.vstack(
            rx.callout(failed, icon="triangle-alert", color_scheme="red", width="100%",
                       custom_attrs={"data-testid": "load-error"}),
            rx.button(rx.icon("rotate-cw", size=14), "Retry", variant="soft", on_click=retry,
                      custom_attrs={"data-testid": "load-retry"}),
            align="center", spacing="3", max_width="560px", width="100%",
        ), padding=padding, width="100%", custom_attrs={"role": "alert"}),
        rx.center(rx.spinner(size="3"), padding=padding, width="100%",
                  custom_attrs={"data-testid": "loading", "role": "status", "aria-label": "Loading"}),
    ))
