"""Activation switch (editor toolbar) and the trigger panel of the inspector: a webhook's addresses with
copy buttons and "Listen for test event", or a schedule's next three due times (EditorState.trigger_info)."""

from __future__ import annotations

import reflex as rx

from nodeflow_app.components.theme import LABELS_FROM, from_width
from nodeflow_app.state.editor_state import EditorState
from nodeflow_app.state.trigger_state import TriggerState

MONO = "var(--code-font-family, ui-monospace, SFMono-Regular, Menlo, monospace)"


def _testid(name: str) -> dict[str, str]:
    return {"data-testid": name}


ACTIVE_SWITCH_ID = "graph-active-switch"


def active_switch() -> rx.Component:
    """On: webhooks and schedules run the stored version shown; off: they stop. Compact (the toolbar is full):
    the switch and "Active" while inactive (the word only in a wide window), the live version while active; a
    viewer sees only the version."""
    live = rx.badge(f"Live · v{TriggerState.live_version}", color_scheme="green", variant="soft",
                    custom_attrs=_testid("graph-active-label"))
    return rx.cond(
        EditorState.read_only,
        rx.cond(TriggerState.active, live),
        rx.tooltip(
            rx.hstack(
                rx.switch(checked=TriggerState.active, on_change=TriggerState.set_active, size="1",
                          aria_label="Active", id=ACTIVE_SWITCH_ID, custom_attrs=_testid("graph-active")),
                rx.cond(TriggerState.active, live,
                        rx.el.label("Active", html_for=ACTIVE_SWITCH_ID, font_size="var(--font-size-1)",
                                    color="var(--gray-11)", cursor="pointer", display=from_width(LABELS_FROM))),
                align="center", spacing="1", flex_shrink="0",
            ),
            content="Active: webhooks and schedules run the graph's saved version (switch on to make it live)",
        ),
    )


def _full_url(path: rx.Var) -> rx.Var:
    # The path's var data too: shown in the page, the Var needs the state hook the path reads from.
    return rx.Var(_js_expr=f"(window.location.origin + {path._js_expr})", _var_type=str,
                  _var_data=path._get_all_var_data())


def _address(label: str, path: rx.Var, testid: str) -> rx.Component:
    return rx.vstack(
        rx.text(label, size="1", color_scheme="gray"),
        rx.hstack(
            rx.code(_full_url(path), size="1", style={"fontFamily": MONO, "wordBreak": "break-all"},
                    custom_attrs=_testid(testid)),  # the whole URL, as callers need it (n8n shows it so too)
            rx.icon_button(rx.icon("copy", size=12), size="1", variant="ghost", aria_label=f"Copy the {label}",
                           on_click=rx.set_clipboard(_full_url(path)), custom_attrs=_testid(f"{testid}-copy")),
            align="center", spacing="2", width="100%",
        ),
        spacing="1", width="100%",
    )


def webhook_panel() -> rx.Component:
    info = EditorState.trigger_info
    listening = TriggerState.listening_to == EditorState.selected_id
    return rx.vstack(
        _address("Address (while the graph is active)", info["path"].to(str), "webhook-url"),
        _address("Test address (while listening)", info["test_path"].to(str), "webhook-test-url"),
        rx.cond(
            listening,
            rx.button(rx.spinner(size="1"), "Listening… (stop)", size="1", variant="soft",
                      on_click=TriggerState.stop_listening, custom_attrs=_testid("webhook-stop-listening")),
            rx.button(rx.icon("radio", size=12), "Listen for test event", size="1", variant="soft",
                      on_click=TriggerState.listen(EditorState.selected_id), custom_attrs=_testid("webhook-listen")),
        ),
        rx.cond(TriggerState.heard != "",
                rx.vstack(
                    rx.text("Test call received", size="1", weight="medium"),
                    rx.code_block(TriggerState.heard, language="json", font_size="11px", width="100%",
                                  custom_attrs=_testid("webhook-heard")),
                    spacing="1", width="100%",
                )),
        spacing="2", width="100%", custom_attrs=_testid("webhook-panel"),
    )


def schedule_panel() -> rx.Component:
    info = EditorState.trigger_info
    return rx.vstack(
        rx.text("Next runs (while the graph is active)", size="1", color_scheme="gray"),
        rx.cond(info["error"].to(str) != "",
                rx.text(info["error"].to(str), size="1", color_scheme="red", custom_attrs=_testid("schedule-error")),
                rx.vstack(rx.foreach(info["next"].to(list[str]),
                                     lambda t: rx.text(t, size="1", style={"fontFamily": MONO})),
                          spacing="0", custom_attrs=_testid("schedule-next"))),
        spacing="1", width="100%", custom_attrs=_testid("schedule-panel"),
    )


def trigger_panel() -> rx.Component:
    return rx.match(
        EditorState.trigger_info["kind"].to(str),
        ("webhook", webhook_panel()),
        ("schedule", schedule_panel()),
        rx.fragment(),
    )
