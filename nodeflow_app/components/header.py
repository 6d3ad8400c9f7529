"""The top bar: logo and tagline, the links to the app's pages, the account menu."""

import reflex as rx

from nodeflow_app import routes
from nodeflow_app.components.theme import TOP_BAR
from nodeflow_app.state.auth_state import AuthState

TAGLINE = "Visual builder for AI agent workflows"


def logo(word: bool = True) -> rx.Component:
    """The mark and the word (the editor's full toolbar has room for the mark only)."""
    return rx.hstack(
        rx.center(
            rx.icon("workflow", size=18, color="white"),
            width="30px",
            height="30px",
            border_radius="8px",
            background="linear-gradient(135deg, var(--violet-9), var(--cyan-9))",
        ),
        rx.text("NodeFlow", size="5", weight="bold", custom_attrs={"data-testid": "logo"}) if word else rx.fragment(),
        align="center",
        spacing="2",
    )


def _nav_link(icon: str, word: str, href: str, testid: str) -> rx.Component:
    return rx.link(rx.hstack(rx.icon(icon, size=16), rx.text(word, size="2"), align="center", spacing="1"),
                   href=href, color_scheme="gray", custom_attrs={"data-testid": testid})


def header() -> rx.Component:
    # Every page with this bar leads back to the graphs (Knowledge, Workspace and Credentials had no way back
    # but the browser's): by the logo, as in the editor's toolbar, and by a link beside the others.
    return rx.hstack(
        rx.link(logo(), href=routes.GRAPHS, underline="none", color="inherit", aria_label="All graphs",
                custom_attrs={"data-testid": "home-link"}),
        rx.separator(orientation="vertical", size="1"),
        rx.text(TAGLINE, size="2", color_scheme="gray", custom_attrs={"data-testid": "tagline"}),
        rx.box(flex="1"),
        _nav_link("workflow", "Graphs", routes.GRAPHS, "nav-graphs"),
        _nav_link("library", "Knowledge", routes.KNOWLEDGE, "nav-knowledge"),
        # The workspace's credentials: its owner's page.
        rx.cond(AuthState.role == "owner", _nav_link("settings", "Settings", routes.SETTINGS, "settings-link")),
        rx.badge("preview", variant="soft", color_scheme="violet"),
        rx.cond(AuthState.user_name != "", user_menu()),
        **TOP_BAR,
        custom_attrs={"data-testid": "app-header"},
    )


def user_menu() -> rx.Component:
    """The header's account menu: who is signed in, the workspace switcher, account and sign-out."""
    return rx.menu.root(
        rx.menu.trigger(
            rx.button(rx.icon("circle-user", size=16), AuthState.user_name, rx.text("·", color_scheme="gray"),
                      AuthState.workspace_name, variant="ghost", color_scheme="gray",
                      custom_attrs=_tid("user-menu")),
        ),
        rx.menu.content(
            rx.menu.item("Workspaces", disabled=True),
            rx.foreach(AuthState.workspaces, lambda w: rx.menu.item(
                w.name, rx.badge(w.role, variant="soft", size="1"), on_click=AuthState.switch_workspace(w.id),
                custom_attrs={"data-testid": f"workspace-{w.name}"})),
            rx.menu.separator(),
            rx.menu.item(rx.icon("users", size=14), "Workspace and members", on_click=rx.redirect("/workspace"),
                         custom_attrs=_tid("menu-workspace")),
            rx.menu.item(rx.icon("user", size=14), "Account", on_click=rx.redirect("/account")),
            rx.menu.item(rx.icon("log-out", size=14), "Sign out", on_click=AuthState.sign_out,
                         custom_attrs=_tid("menu-sign-out")),
        ),
    )


def _tid(value: str) -> dict:
    return {"data-testid": value}
