"""A workspace's credentials page (its owner's): every provider with the workspace's key and base URL and a
connection test; the workspace's named HTTP and database connections; for the instance admin, the install's
environment keys (every workspace's fallback) and declared MCP servers.

Built per provider at compile time (the providers are known), filled from SettingsState's display rows.
A key field is always empty: the stored key is shown as "set ••••abcd" and typing replaces it.
"""

from __future__ import annotations

import json

import reflex as rx

from nodeflow_app.components.header import header
from nodeflow_app.components.loading import until_loaded
from nodeflow_app.components.theme import BORDER
from nodeflow_app.connections import HOSTS, KINDS
from nodeflow_app.llm.providers import PROVIDERS
from nodeflow_app.state.auth_state import AuthState
from nodeflow_app.state.settings_state import SettingsState
from nodeflow_app.state.users_state import AccountRow, UsersState


def _testid(name: str) -> dict[str, str]:
    return {"data-testid": name}


def _row(index: int) -> rx.Var:
    return SettingsState.providers[index]


def _status(index: int, name: str) -> rx.Component:
    row = _row(index)
    return rx.cond(
        row["configured"].to(bool),
        rx.badge("configured", color_scheme="green", variant="soft", custom_attrs=_testid(f"status-{name}")),
        rx.badge("not configured", color_scheme="gray", variant="soft", custom_attrs=_testid(f"status-{name}")),
    )


def _key_line(index: int, name: str) -> rx.Component:
    row = _row(index)
    return rx.cond(
        row["key_set"].to(bool),
        rx.text("Key: set ", row["key_hint"].to(str), " (", row["key_source"].to(str), ")", size="2",
                custom_attrs=_testid(f"key-{name}")),
        rx.text("Key: not set", size="2", color_scheme="gray", custom_attrs=_testid(f"key-{name}")),
    )


def _url_line(index: int, name: str) -> rx.Component:
    """The base URL in use, in plain sight (a URL is not a secret; an input's placeholder is easy to miss)."""
    row = _row(index)
    url, source = row["base_url"].to(str), row["base_url_source"].to(str)
    return rx.text(
        "Base URL: ",
        rx.cond(url != "", rx.fragment(rx.code(url), " (", source, ")"),
                rx.cond(source != "", "the install's",
                        "not set" if PROVIDERS[name].needs_base_url else "the provider's own")),
        size="2", custom_attrs=_testid(f"url-{name}"))


def _test_result(name: str) -> rx.Component:
    result = SettingsState.tests[name]
    return rx.cond(
        SettingsState.tests.contains(name),
        rx.vstack(
            rx.text(result["message"].to(str), size="2", color_scheme=rx.cond(result["ok"].to(bool), "green", "red"),
                    custom_attrs=_testid(f"test-{name}")),
            rx.flex(rx.foreach(result["models"].to(list[str]),
                               lambda model: rx.badge(model, variant="surface", custom_attrs=_testid("model"))),
                    wrap="wrap", gap="4px", custom_attrs=_testid(f"models-{name}")),
            spacing="1", width="100%",
        ),
    )


def _typed(name: str) -> rx.Var:
    """The values of `name`'s form when the event fires: a test uses what is typed, not only what is saved."""
    form = f"document.getElementById({json.dumps(_form_id(name))})"
    return rx.Var(_js_expr=f"Object.fromEntries(new FormData({form}))", _var_type=dict[str, str])


def _form_id(name: str) -> str:
    return f"provider-form-{name}"


def provider_card(index: int, name: str) -> rx.Component:
    spec = PROVIDERS[name]
    row = _row(index)
    fields = []
    if spec.key_env:
        fields.append(rx.input(name="api_key", type="password", placeholder=rx.cond(
            row["key_set"].to(bool), "Replace the key", "API key"), auto_complete="new-password", aria_label="API key",
            key=SettingsState.form_rev.to_string() + name, width="100%", custom_attrs=_testid(f"api-key-{name}")))
    if spec.base_url_field:
        # Only a stored URL fills the field: saving must not copy an environment variable into the store. The
        # placeholder says what an empty field means (saving and testing it use the install's URL).
        fields.append(rx.input(name="base_url", placeholder="Base URL (empty: " + row["empty_url"].to(str) + ")",
                               aria_label="Base URL",
                               default_value=row["stored_base_url"].to(str),
                               key=SettingsState.form_rev.to_string() + name,
                               width="100%", custom_attrs=_testid(f"base-url-{name}")))
    how = rx.cond(row["configured"].to(bool), rx.fragment(),
                  rx.text("To configure: ", row["how"].to(str), size="1", color_scheme="gray"))
    return rx.card(
        rx.vstack(
            rx.hstack(rx.text(spec.label, size="3", weight="bold"), _status(index, name), rx.spacer(),
                      rx.text(name, size="1", color_scheme="gray", font_family="monospace"), width="100%",
                      align="center"),
            how,
            _key_line(index, name) if spec.key_env else rx.fragment(),
            _url_line(index, name) if spec.base_url_field else rx.fragment(),
            rx.form(
                rx.vstack(
                    *fields,
                    rx.hstack(
                        rx.button("Save", type="submit", size="2", custom_attrs=_testid(f"save-{name}")),
                        rx.button("Test connection", type="button", variant="soft", size="2",
                                  loading=SettingsState.testing == name,
                                  on_click=SettingsState.check(name, _typed(name)),
                                  custom_attrs=_testid(f"check-{name}")),
                        rx.button("Delete stored", type="button", variant="ghost", color_scheme="red", size="2",
                                  disabled=~row["stored"].to(bool), on_click=SettingsState.delete(name),
                                  custom_attrs=_testid(f"delete-{name}")),
                        spacing="2",
                    ),
                    spacing="2", width="100%",
                ),
                on_submit=lambda form: SettingsState.save(name, form), reset_on_submit=True, width="100%",
                id=_form_id(name),
            ),
            _test_result(name),
            spacing="2", width="100%",
        ),
        width="100%", custom_attrs=_testid(f"provider-{name}"),
    )


def _connection_row(row: rx.Var) -> rx.Component:
    name = row["name"].to(str)
    result = SettingsState.tests["connection:" + name]
    return rx.table.row(
        rx.table.cell(rx.text(name, weight="medium")),
        rx.table.cell(rx.code(row["kind"].to(str))),
        rx.table.cell(rx.text(row["fields"].to(str), size="1", color_scheme="gray")),
        rx.table.cell(rx.cond(SettingsState.tests.contains("connection:" + name), rx.text(
            result["message"].to(str), size="1", color_scheme=rx.cond(result["ok"].to(bool), "green", "red"),
            custom_attrs=_testid("connection-test-" + name)))),
        rx.table.cell(rx.hstack(
            rx.button("Test", size="1", variant="soft", on_click=SettingsState.check_connection(name),
                      loading=SettingsState.testing == "connection:" + name,
                      custom_attrs=_testid("connection-check-" + name)),
            rx.button("Delete", size="1", variant="ghost", color_scheme="red",
                      on_click=SettingsState.delete_connection(name), custom_attrs=_testid("connection-delete-" + name)),
            spacing="2")),
        custom_attrs=_testid("connection-" + name),
    )


# One line per field: the placeholder of the kind with the most fields fits the box whole.
FIELD_ROWS = max(len(required) + len(optional) for required, optional in KINDS.values())


def _field_placeholder(kind: str) -> str:
    """A `field=...` line per field of the kind; what they mean is said under the box, not in it."""
    required, optional = KINDS[kind]
    return "\n".join([f"{f}=..." for f in required] + [
        f"{HOSTS}=api.example.com" if f == HOSTS else f"{f}=... (optional)" for f in optional])


def _field_help(kind: str) -> str:
    hosts = (f" {HOSTS}: where an HTTP Request node may send it, over https; * for any host; http://host allows "
             "plain http too." if HOSTS in KINDS[kind][1] else "")
    return "One field=value per line." + hosts


def connections_section() -> rx.Component:
    """The workspace's named connections: listed without values; adding one with an existing name replaces it."""
    placeholder = rx.match(SettingsState.connection_kind, *((kind, _field_placeholder(kind)) for kind in KINDS), "")
    help_text = rx.match(SettingsState.connection_kind, *((kind, _field_help(kind)) for kind in KINDS), "")
    return rx.vstack(
        rx.heading("Connections", size="4"),
        rx.text("Named HTTP and database credentials that HTTP Request and Database Query nodes of this workspace "
                "pick by name. Values are encrypted and never shown again: saving a name again replaces it.",
                size="2", color_scheme="gray"),
        rx.table.root(rx.table.body(rx.foreach(SettingsState.connections, _connection_row)), width="100%",
                      custom_attrs=_testid("connections")),
        rx.form(
            rx.hstack(
                rx.input(name="name", placeholder="Name", width="160px", aria_label="Connection name",
                         custom_attrs=_testid("connection-name")),
                rx.select(list(KINDS), value=SettingsState.connection_kind, on_change=SettingsState.set_connection_kind,
                          custom_attrs={"data-testid": "connection-kind", "aria-label": "Connection kind"}),
                rx.text_area(name="fields", placeholder=placeholder, rows=str(FIELD_ROWS), flex="1",
                             aria_label="Connection fields",
                             auto_complete=False,
                             key=SettingsState.form_rev.to_string() + "connection",
                             custom_attrs=_testid("connection-fields")),
                rx.button("Save connection", type="submit", custom_attrs=_testid("connection-save")),
                width="100%", align="start", spacing="2",
            ),
            on_submit=SettingsState.save_connection, reset_on_submit=True, width="100%",
        ),
        rx.text(help_text, size="1", color_scheme="gray", custom_attrs=_testid("connection-help")),
        spacing="2", width="100%",
    )


def install_section() -> rx.Component:
    """The install-wide part, for the instance admin only (the server fills it only for them)."""
    return rx.cond(
        SettingsState.is_admin,
        rx.vstack(
            rx.heading("Install-wide (instance admin)", size="4"),
            rx.text("Environment keys are the fallback of every workspace without a key of its own; only you see "
                    "them here.", size="2", color_scheme="gray"),
            rx.table.root(rx.table.body(rx.foreach(SettingsState.environment, lambda row: rx.table.row(
                rx.table.cell(row["provider"]), rx.table.cell(rx.code(row["variable"])), rx.table.cell(row["value"]),
            ))), width="100%"),
            rx.text("Declared stdio MCP servers: ", SettingsState.mcp_servers, size="2"),
            spacing="2", width="100%", custom_attrs=_testid("install-settings"),
        ),
    )


def _account_row(row: AccountRow) -> rx.Component:
    return rx.table.row(
        rx.table.cell(row.name), rx.table.cell(row.email),
        rx.table.cell(rx.cond(row.admin, rx.badge("instance admin", variant="soft"), "")),
        rx.table.cell(rx.button("Reset password", size="1", variant="soft", color_scheme="orange",
                                on_click=UsersState.reset_password(row.id),
                                custom_attrs=_testid(f"reset-password-{row.email}"))),
    )


def users_section() -> rx.Component:
    """The install's accounts (instance admin only: rendered for them, and the server checks every event)."""
    return rx.cond(
        SettingsState.is_admin,
        rx.vstack(
            rx.heading("Accounts of this install", size="4"),
            rx.text("A reset signs the person out everywhere; hand them the new password (shown once).", size="2",
                    color_scheme="gray"),
            rx.cond(UsersState.new_password != "", rx.callout(
                rx.text("New password of ", UsersState.reset_for, ": ",
                        rx.code(UsersState.new_password, custom_attrs=_testid("new-password"))),
                color_scheme="green", width="100%")),
            rx.table.root(rx.table.body(rx.foreach(UsersState.accounts, _account_row)), width="100%"),
            spacing="2", width="100%", on_mount=UsersState.load, custom_attrs=_testid("accounts"),
        ),
    )


def settings_page() -> rx.Component:
    return rx.vstack(
        header(),
        rx.vstack(
            rx.heading("Credentials of ", AuthState.workspace_name, size="6", custom_attrs=_testid("settings-title")),
            rx.text("Model providers of this workspace: its runs use these keys first, then the install's. Keys are "
                    "encrypted at rest and never shown again. A base URL written in a graph never receives these "
                    "keys unless the graph's Model Selector chooses one (see docs/security.md).",
                    size="2", color_scheme="gray"),
            # A non-owner's load is refused (no answer comes): their role, once known, says it will not.
            until_loaded(SettingsState.loaded | ((AuthState.role != "") & (AuthState.role != "owner")), rx.cond(
                SettingsState.providers.length() > 0,
                rx.vstack(*(provider_card(i, name) for i, name in enumerate(PROVIDERS)), connections_section(),
                          install_section(), users_section(), spacing="3", width="100%"),
                rx.text(rx.cond(SettingsState.tests.contains(""), SettingsState.tests[""]["message"].to(str),
                                "Only the workspace's owner manages its credentials."), color_scheme="red",
                        custom_attrs=_testid("settings-refused")),
            ), SettingsState.load_error, SettingsState.load),
            spacing="4", width="100%", max_width="860px", padding="24px", custom_attrs=_testid("settings"),
        ),
        align="center", width="100%", min_height="100vh", border_top=BORDER,
    )
