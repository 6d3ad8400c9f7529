"""A list's place on a page until the page's first load answered: a spinner, never the list's empty state (people
with graphs or collections saw "No ... yet" flash, and thought their data lost)."""

import reflex as rx


def until_loaded(loaded: rx.Var, content: rx.Component, padding: str = "64px") -> rx.Component:
    """`content` once `loaded` (its state's first load finished), a spinner before."""
    return rx.cond(loaded, content, rx.center(
        rx.spinner(size="3"), padding=padding, width="100%",
        custom_attrs={"data-testid": "loading", "role": "status", "aria-label": "Loading"}))
