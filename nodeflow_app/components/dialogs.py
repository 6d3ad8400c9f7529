"""The rename, delete and confirmation dialogs the pages share (test ids get a prefix: "" or "chat-")."""

from __future__ import annotations

from typing import Any

import reflex as rx


def _testid(prefix: str, name: str) -> dict[str, str]:
    return {"data-testid": f"{prefix}{name}"}


def rename_dialog(title: str, *, field: str, value: Any, error: Any, on_submit: Any, open_: Any,
                  on_open_change: Any, prefix: str = "") -> rx.Component:
    """A form with one text input named `field`; `error` (a Var) shows under it when not empty."""
    return rx.dialog.root(
        rx.dialog.content(
            rx.dialog.title(title),
            rx.form(
                rx.vstack(
                    rx.input(name=field, default_value=value, auto_focus=True, width="100%",
                             custom_attrs=_testid(prefix, "rename-input")),
                    rx.cond(error != "", rx.text(error, size="2", color_scheme="red",
                                                 custom_attrs=_testid(prefix, "rename-error"))),
                    rx.hstack(
                        rx.dialog.close(rx.button("Cancel", type="button", variant="soft", color_scheme="gray")),
                        rx.button("Rename", type="submit", custom_attrs=_testid(prefix, "rename-confirm")),
                        justify="end",
                        width="100%",
                    ),
                    spacing="3",
                ),
                on_submit=on_submit,
                reset_on_submit=False,
            ),
            max_width="440px",
        ),
        open=open_,
        on_open_change=on_open_change,
    )


def delete_dialog(title: str, *description: Any, on_confirm: Any, open_: Any, on_open_change: Any,
                  prefix: str = "") -> rx.Component:
    """A confirmation: `description` (text and Vars) says what goes; Delete calls `on_confirm`."""
    return confirm_dialog(title, *description, action="Delete", on_confirm=on_confirm, open_=open_,
                          on_open_change=on_open_change, prefix=f"{prefix}delete-", color_scheme="red")


def confirm_dialog(title: Any, *description: Any, action: str, on_confirm: Any, open_: Any, on_open_change: Any,
                   prefix: str, color_scheme: str = "red") -> rx.Component:
    """An alert dialog: `description` says what happens; Cancel (`<prefix>cancel`) or `action`
    (`<prefix>confirm`, which calls `on_confirm`)."""
    return rx.alert_dialog.root(
        rx.alert_dialog.content(
            rx.alert_dialog.title(title),
            rx.alert_dialog.description(*description),
            rx.hstack(
                rx.alert_dialog.cancel(rx.button("Cancel", variant="soft", color_scheme="gray",
                                                 custom_attrs=_testid(prefix, "cancel"))),
                rx.alert_dialog.action(rx.button(action, color_scheme=color_scheme, on_click=on_confirm,
                                                 custom_attrs=_testid(prefix, "confirm"))),
                justify="end",
                spacing="3",
                margin_top="16px",
            ),
            max_width="440px",
        ),
        open=open_,
        on_open_change=on_open_change,
    )
