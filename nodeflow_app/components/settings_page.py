"""The Settings page: every provider, configured or not, with its key and base URL and a connection test.

Built per provider at compile time (the providers are known), filled from SettingsState's display rows.
A key field is always empty: the stored key is shown as "set ••••abcd" and typing replaces it.
"""

from __future__ import annotations

import reflex as rx

from nodeflow_app.components.header import header
from nodeflow_app.components.theme import BORDER
from nodeflow_app.llm.providers import PROVIDERS
from nodeflow_app.state.settings_state import SettingsState


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


def provider_card(index: int, name: str) -> rx.Component:
    spec = PROVIDERS[name]
    row = _row(index)
    fields = []
    if spec.key_env:
        fields.append(rx.input(name="api_key", type="password", placeholder=rx.cond(
            row["key_set"].to(bool), "Replace the key", "API key"), auto_complete="new-password",
            key=SettingsState.form_rev.to_string() + name, width="100%", custom_attrs=_testid(f"api-key-{name}")))
    if spec.base_url_field:
        # Only a stored URL fills the field: saving must not copy an environment variable into the store.
        placeholder = rx.cond(row["base_url_source"].to(str) != "",
                              "Base URL: " + row["base_url"].to(str) + " (" + row["base_url_source"].to(str) + ")",
                              "Base URL (empty: the provider's own)")
        fields.append(rx.input(name="base_url", placeholder=placeholder,
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
            rx.form(
                rx.vstack(
                    *fields,
                    rx.hstack(
                        rx.button("Save", type="submit", size="2", custom_attrs=_testid(f"save-{name}")),
                        rx.button("Test connection", type="button", variant="soft", size="2",
                                  loading=SettingsState.testing == name, on_click=SettingsState.check(name),
                                  custom_attrs=_testid(f"check-{name}")),
                        rx.button("Delete stored", type="button", variant="ghost", color_scheme="red", size="2",
                                  disabled=~row["stored"].to(bool), on_click=SettingsState.delete(name),
                                  custom_attrs=_testid(f"delete-{name}")),
                        spacing="2",
                    ),
                    spacing="2", width="100%",
                ),
                on_submit=lambda form: SettingsState.save(name, form), reset_on_submit=True, width="100%",
            ),
            _test_result(name),
            spacing="2", width="100%",
        ),
        width="100%", custom_attrs=_testid(f"provider-{name}"),
    )


def settings_page() -> rx.Component:
    return rx.vstack(
        header(),
        rx.vstack(
            rx.heading("Settings", size="6"),
            rx.text("Model providers. Keys are encrypted at rest and never shown again; environment variables "
                    "win over stored keys. A base URL written in a graph never receives these keys unless the "
                    "graph's Model Selector chooses one (see docs/security.md).", size="2", color_scheme="gray"),
            rx.cond(
                SettingsState.providers.length() > 0,
                rx.vstack(*(provider_card(i, name) for i, name in enumerate(PROVIDERS)), spacing="3", width="100%"),
                rx.text(SettingsState.tests[""]["message"].to(str), color_scheme="red"),
            ),
            spacing="4", width="100%", max_width="760px", padding="24px", custom_attrs=_testid("settings"),
        ),
        align="center", width="100%", min_height="100vh", border_top=BORDER,
    )
