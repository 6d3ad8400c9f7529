"""Activation switch (editor toolbar) and the trigger panel of the inspector: a webhook's addresses with
copy buttons and "Listen for test event", or a schedule's next three due times (EditorState.trigger_info)."""

from __future__ import annotations

import reflex as rx

from nodeflow_app.components.addresses import address
from nodeflow_app.components.theme import (LABELS_FROM, PANEL_WORDS_FROM, SAVED_DETAIL_FROM, button_word,
                                          from_width)
from nodeflow_app.state.editor_state import EditorState
from nodeflow_app.state.graph_room import GraphRoom
from nodeflow_app.state.trigger_state import TriggerState

MONO = "var(--code-font-family, ui-monospace, SFMono-Regular, Menlo, monospace)"


def _testid(name: str) -> dict[str, str]:
    return {"data-testid": name}


ACTIVE_SWITCH_ID = "graph-active-switch"


def _live_badge() -> rx.Component:
    """"Live · v7"; with newer saved edits "Live · v7 (v8 saved)" in amber: webhooks and schedules keep running
    the live version until it is made live again (docs/triggers.md), which people missed. In a narrower window
    (the toolbar is full) the amber badge and its tooltip say it."""
    live, saved = GraphRoom.live_version, GraphRoom.saved_version
    newer = saved > live
    return rx.tooltip(
        rx.badge("Live · v", live.to_string(),
                 rx.cond(newer, rx.text(f" (v{saved} saved)", as_="span", display=from_width(SAVED_DETAIL_FROM))),
                 color_scheme=rx.cond(newer, "amber", "green"), variant="soft",
                 custom_attrs=_testid("graph-active-label")),
        content=rx.cond(
            newer,
            f"Webhooks and schedules still run v{live}: saved edits (v{saved}) run only once made live",
            f"Webhooks and schedules run v{live}, the latest saved version"),
    )


def _make_live_button() -> rx.Component:
    """One click makes the newest saved version live (an editor's; shown while it is newer than the live one)."""
    label = f"Make v{GraphRoom.saved_version} live"
    return rx.tooltip(
        rx.button(rx.icon("upload", size=12), button_word(label, PANEL_WORDS_FROM), size="1", variant="soft",
                  color_scheme="amber", aria_label=label, flex_shrink="0", on_click=TriggerState.make_latest_live,
                  custom_attrs=_testid("make-latest-live")),
        content=label + ": webhooks and schedules then run it",
    )


def active_switch() -> rx.Component:
    """On: webhooks and schedules run the stored version shown; off: they stop. Compact (the toolbar is full):
    the switch and "Active" while inactive (the word only in a wide window), the live version while active, and
    "Make vN live" when saved edits are newer; a viewer sees only the version."""
    active = GraphRoom.live_version > 0  # the room's: a switch in any tab (or the graph list) shows in every tab
    newer = active & (GraphRoom.saved_version > GraphRoom.live_version)
    return rx.cond(
        EditorState.read_only,
        rx.cond(active, _live_badge()),
        rx.hstack(
            rx.tooltip(
                rx.hstack(
                    rx.switch(checked=active, on_change=TriggerState.set_active, size="1",
                              aria_label="Active", id=ACTIVE_SWITCH_ID, custom_attrs=_testid("graph-active")),
                    rx.cond(~active,
                            rx.el.label("Active", html_for=ACTIVE_SWITCH_ID, font_size="var(--font-size-1)",
                                        color="var(--gray-11)", cursor="pointer", display=from_width(LABELS_FROM))),
                    align="center", spacing="1",
                ),
                content="Active: webhooks and schedules run the graph's saved version (switch on to make it live)",
            ),
            rx.cond(active, _live_badge()),
            rx.cond(newer, _make_live_button()),
            align="center", spacing="1", flex_shrink="0",
        ),
    )


def webhook_panel() -> rx.Component:
    info = EditorState.trigger_info
    listening = TriggerState.listening_to == EditorState.selected_id
    return rx.vstack(
        address("Address (while the graph is active)", info["path"].to(str), "webhook-url"),
        address("Test address (while listening)", info["test_path"].to(str), "webhook-test-url"),
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
