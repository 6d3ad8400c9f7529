"""Copy or move a graph to another workspace where the person may edit (graph list rows, editor menu)."""

from __future__ import annotations

import reflex as rx

from nodeflow_app.state.transfer_state import TargetOption, TransferState


def _testid(value: str) -> dict:
    return {"data-testid": value}


def transfer_items(graph_id, name) -> list[rx.Component]:
    """The two menu items; put them in a dropdown menu's content."""
    return [
        rx.dropdown_menu.item(rx.icon("copy-plus", size=14), "Copy to workspace…",
                              on_click=TransferState.ask(graph_id, name, "copy"), custom_attrs=_testid("graph-copy-to")),
        rx.dropdown_menu.item(rx.icon("folder-input", size=14), "Move to workspace…",
                              on_click=TransferState.ask(graph_id, name, "move"), custom_attrs=_testid("graph-move-to")),
    ]


def _option(target: TargetOption) -> rx.Component:
    return rx.select.item(target.name, value=target.id, custom_attrs=_testid(f"transfer-target-{target.name}"))


def transfer_dialog() -> rx.Component:
    moving = TransferState.mode == "move"
    return rx.dialog.root(
        rx.dialog.content(
            rx.dialog.title(rx.cond(moving, "Move “", "Copy “"), TransferState.graph_name, "” to a workspace"),
            rx.dialog.description(
                rx.cond(moving, "The graph leaves this workspace with its chats and runs.",
                        "A copy with a history of its own; chats and runs stay with the original."),
                size="2", color_scheme="gray"),
            rx.cond(
                TransferState.targets.length() > 0,
                rx.select.root(
                    rx.select.trigger(width="100%", custom_attrs=_testid("transfer-target")),
                    rx.select.content(rx.foreach(TransferState.targets, _option)),
                    value=TransferState.target_id, on_change=TransferState.set_target,
                ),
                rx.text("There is no other workspace where you may edit.", size="2",
                        custom_attrs=_testid("transfer-none")),
            ),
            rx.hstack(
                rx.dialog.close(rx.button("Cancel", variant="soft", color_scheme="gray")),
                rx.button(rx.cond(moving, "Move", "Copy"), on_click=TransferState.confirm,
                          disabled=TransferState.target_id == "", custom_attrs=_testid("transfer-confirm")),
                justify="end", spacing="2", margin_top="16px",
            ),
            max_width="460px",
            custom_attrs=_testid("transfer-dialog"),
        ),
        open=TransferState.open,
        on_open_change=TransferState.set_open,
    )
