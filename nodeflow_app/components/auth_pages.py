"""Setup (the first visit creates the owner), sign-in, and the account page (password, sign out everywhere)."""

import reflex as rx

from nodeflow_app import routes
from nodeflow_app.components.forms import labelled_input
from nodeflow_app.components.header import logo
from nodeflow_app.components.theme import APP_BG, BORDER, PANEL_BG
from nodeflow_app.state.auth_state import AuthState


def _testid(value: str) -> dict:
    return {"data-testid": value}


def _field(label: str, name: str, kind: str = "text", **props) -> rx.Component:
    return labelled_input(label, name, kind, testid=f"auth-{name}", **props)


def _card(title: str, subtitle: str, *fields: rx.Component, submit: str, on_submit) -> rx.Component:
    return rx.center(
        rx.vstack(
            logo(),
            rx.heading(title, size="5", margin_top="8px"),
            rx.text(subtitle, size="2", color_scheme="gray"),
            rx.form(
                rx.vstack(
                    *fields,
                    rx.cond(AuthState.error != "",
                            rx.callout(AuthState.error, color_scheme="red", size="1", width="100%",
                                       custom_attrs=_testid("auth-error"))),
                    rx.button(submit, type="submit", width="100%", custom_attrs=_testid("auth-submit")),
                    spacing="3", width="100%",
                ),
                on_submit=on_submit, reset_on_submit=False, width="100%",
            ),
            spacing="2", width="380px", padding="28px", background=PANEL_BG, border=BORDER,
            border_radius="var(--radius-4)",
        ),
        height="100vh", width="100vw", background=APP_BG,
    )


def setup_page() -> rx.Component:
    return _card(
        "Create the owner account", "This install has no accounts yet: yours will own it (and its settings).",
        _field("Name", "name", auto_focus=True), _field("Email", "email", "email"),
        _field("Password (8 characters or more)", "password", "password"),
        _field("Password again", "confirm", "password"),
        submit="Create account", on_submit=AuthState.create_owner)


def sign_in_page() -> rx.Component:
    return _card(
        "Sign in", "Sign in to reach your graphs and your team's.",
        _field("Email", "email", "email", auto_focus=True), _field("Password", "password", "password"),
        submit="Sign in", on_submit=AuthState.sign_in)


def account_page() -> rx.Component:
    return rx.vstack(
        _card(
            "Your account", AuthState.user_email,
            _field("Current password", "current", "password"), _field("New password", "new", "password"),
            _field("New password again", "confirm", "password"),
            submit="Change password", on_submit=AuthState.change_password),
        rx.hstack(
            rx.link(rx.hstack(rx.icon("arrow-left", size=14), "All graphs", align="center", spacing="1"),
                    href=routes.GRAPHS, size="2", color_scheme="gray", custom_attrs=_testid("account-back")),
            rx.button("Sign out", variant="soft", on_click=AuthState.sign_out, custom_attrs=_testid("sign-out")),
            rx.button("Sign out everywhere", variant="soft", color_scheme="red",
                      on_click=AuthState.sign_out_everywhere, custom_attrs=_testid("sign-out-everywhere")),
            position="fixed", bottom="24px", left="50%", transform="translateX(-50%)", align="center",
        ),
    )
