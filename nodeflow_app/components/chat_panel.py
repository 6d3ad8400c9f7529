"""Chat with a graph: the panel beside the canvas and the full-page chat view, around the thread component.

The thread (messages, blocks, the streamed answer) is `chat_thread`; here are the chat list, the composer
(Enter sends, Shift+Enter breaks the line; Stop while an answer streams) and the rename / delete dialogs.
"""

from __future__ import annotations

import reflex as rx

from nodeflow_app import routes
from nodeflow_app.components import dialogs
from nodeflow_app.components.chat_thread import chat_thread
from nodeflow_app.components.header import header, logo
from nodeflow_app.components.not_found import graph_not_found
from nodeflow_app.components.theme import BORDER, PANEL_BG, TOP_BAR
from nodeflow_app.state.chat_state import ChatState
from nodeflow_app.state.history_state import HistoryState

CHAT_PANEL_WIDTH = "min(440px, 40vw)"  # at 1024 px, with the rails, the canvas keeps just over half


def _testid(value: str) -> dict:
    return {"data-testid": value}


def icon_button(icon: str, label: str, testid: str, **props) -> rx.Component:
    return rx.tooltip(
        rx.icon_button(rx.icon(icon, size=15), variant="ghost", color_scheme="gray", size="1", aria_label=label,
                       custom_attrs=_testid(testid), **props),
        content=label,
    )


def thread() -> rx.Component:
    return chat_thread(
        messages=ChatState.messages,
        stream_head=ChatState.stream_head,
        stream=ChatState.stream,
        busy=ChatState.busy,
        on_approve=ChatState.approve,
        on_retry=ChatState.retry,
        on_edit=ChatState.edit,
        on_branch=ChatState.show_branch,
        on_continue=ChatState.continue_chat,
        on_resync=ChatState.resync,
        on_due=ChatState.due,
    )


def empty_thread() -> rx.Component:
    return rx.center(
        rx.vstack(
            rx.icon("messages-square", size=28, color="var(--gray-9)"),
            rx.text("Chat with ", ChatState.graph_name, weight="medium"),
            rx.text("Each message runs the graph from its Chat Start; tokens, tool calls and node steps show "
                    "up here as they happen.", size="2", color_scheme="gray", text_align="center"),
            align="center",
            spacing="2",
            max_width="320px",
        ),
        flex="1",
        custom_attrs=_testid("chat-empty"),
    )


def composer() -> rx.Component:
    return rx.form(
        rx.hstack(
            rx.text_area(name="message", placeholder="Message the graph… (Enter sends, Shift+Enter new line)",
                         aria_label="Message",
                         enter_key_submit=True, auto_height=True, rows="1", max_height="200px", flex="1",
                         # before the page is live, Enter would do nothing and the typed text would be lost
                         disabled=~rx.State.is_hydrated, custom_attrs=_testid("chat-input")),
            rx.cond(
                ChatState.busy,
                rx.button(rx.icon("square", size=14), "Stop", type="button", color_scheme="red", variant="soft",
                          on_click=ChatState.stop, custom_attrs=_testid("chat-stop")),
                rx.button(rx.icon("send-horizontal", size=14), "Send", type="submit",
                          disabled=~rx.State.is_hydrated, custom_attrs=_testid("chat-send")),
            ),
            align="end",
            spacing="2",
            width="100%",
        ),
        on_submit=ChatState.send,
        reset_on_submit=True,
        width="100%",
        padding="12px",
        border_top=BORDER,
        background=PANEL_BG,
    )


def chat_body() -> rx.Component:
    """The thread (or a hint when the chat is empty) above the composer."""
    return rx.vstack(
        rx.cond((ChatState.messages.length() > 0) | (ChatState.stream_head["message_id"] != ""), thread(),
                empty_thread()),
        composer(),
        spacing="0",
        flex="1",
        min_height="0",
        width="100%",
    )


def chat_picker() -> rx.Component:
    return rx.select.root(
        rx.select.trigger(placeholder="No chat yet", variant="ghost", max_width="220px", aria_label="Chat",
                          custom_attrs=_testid("chat-picker")),
        rx.select.content(rx.foreach(ChatState.chats, lambda chat: rx.select.item(chat["title"], value=chat["id"]))),
        value=ChatState.chat_id,
        on_change=ChatState.select_chat,
        size="2",
    )


def chat_actions() -> rx.Component:
    has_chat = ChatState.chat_id != ""
    return rx.hstack(
        icon_button("plus", "New chat", "chat-new", on_click=ChatState.new_chat),
        icon_button("pencil", "Rename chat", "chat-rename", on_click=ChatState.set_rename_open(True),
                    disabled=~has_chat),
        icon_button("trash-2", "Delete chat", "chat-delete", on_click=ChatState.set_delete_open(True),
                    disabled=~has_chat),
        spacing="1",
    )


def rename_dialog() -> rx.Component:
    return dialogs.rename_dialog("Rename chat", field="title", value=ChatState.chat_title, error=ChatState.rename_error,
                                 on_submit=ChatState.rename, open_=ChatState.rename_open,
                                 on_open_change=ChatState.set_rename_open, prefix="chat-")


def delete_dialog() -> rx.Component:
    return dialogs.delete_dialog(
        "Delete chat", "“", ChatState.chat_title, "” and all its messages will be deleted. This cannot be undone.",
        on_confirm=ChatState.delete, open_=ChatState.delete_open, on_open_change=ChatState.set_delete_open,
        prefix="chat-")


def chat_panel() -> rx.Component:
    """The editor's chat, docked right of the canvas."""
    return rx.cond(
        ChatState.panel_open,
        rx.vstack(
            rx.hstack(
                rx.icon("messages-square", size=16, color="var(--gray-10)"),
                chat_picker(),
                rx.box(flex="1"),
                chat_actions(),
                rx.tooltip(
                    rx.link(rx.icon("maximize-2", size=15), href=routes.chat_url(ChatState.graph_id),
                            color="var(--gray-11)", custom_attrs=_testid("chat-full-page")),
                    content="Open the full-page chat",
                ),
                icon_button("x", "Close the chat", "chat-close", on_click=ChatState.toggle_panel),
                align="center",
                spacing="2",
                padding="8px 10px",
                border_bottom=BORDER,
                width="100%",
            ),
            chat_body(),
            rename_dialog(),
            delete_dialog(),
            spacing="0",
            width=CHAT_PANEL_WIDTH,
            flex_shrink="0",
            height="100%",
            border_left=BORDER,
            background="var(--color-background)",
            custom_attrs=_testid("chat-panel"),
        ),
    )


def chat_toggle() -> rx.Component:
    """The editor toolbar's button that opens and closes the chat panel."""
    return rx.button(rx.icon("messages-square", size=14), "Chat", size="2",
                     variant=rx.cond(ChatState.panel_open, "solid", "soft"),
                     on_click=[ChatState.toggle_panel, HistoryState.close_panel],  # both dock right: one at a time
                     custom_attrs=_testid("toggle-chat"))


def chat_list_item(chat: rx.Var) -> rx.Component:
    selected = chat["id"] == ChatState.chat_id
    return rx.box(
        rx.text(chat["title"], size="2", weight=rx.cond(selected, "medium", "regular"), trim="both",
                white_space="nowrap", overflow="hidden", text_overflow="ellipsis"),
        rx.text(chat["updated"], size="1", color_scheme="gray"),
        padding="8px 10px",
        border_radius="var(--radius-2)",
        background=rx.cond(selected, "var(--accent-a4)", "transparent"),
        _hover={"background": rx.cond(selected, "var(--accent-a4)", "var(--gray-a3)")},
        cursor="pointer",
        width="100%",
        on_click=ChatState.select_chat(chat["id"]),
        custom_attrs={"data-testid": "chat-list-item", "data-id": chat["id"]},
    )


def chat_sidebar() -> rx.Component:
    return rx.vstack(
        rx.button(rx.icon("plus", size=14), "New chat", variant="soft", width="100%", on_click=ChatState.new_chat,
                  custom_attrs=_testid("chat-new")),
        rx.vstack(rx.foreach(ChatState.chats, chat_list_item), spacing="1", width="100%", overflow_y="auto",
                  flex="1", custom_attrs=_testid("chat-list")),
        rx.hstack(
            icon_button("pencil", "Rename chat", "chat-rename", on_click=ChatState.set_rename_open(True),
                        disabled=ChatState.chat_id == ""),
            icon_button("trash-2", "Delete chat", "chat-delete", on_click=ChatState.set_delete_open(True),
                        disabled=ChatState.chat_id == ""),
            spacing="2",
        ),
        width="260px",
        flex_shrink="0",
        height="100%",
        padding="12px",
        spacing="3",
        background=PANEL_BG,
        border_right=BORDER,
    )


def chat_page() -> rx.Component:
    """/graph/<id>/chat: the chats of a graph, full page."""
    return rx.vstack(
        rx.cond(ChatState.missing != "", header(), rx.hstack(
            rx.link(logo(), href=routes.GRAPHS, underline="none", color="inherit"),
            rx.separator(orientation="vertical", size="1"),
            rx.link(rx.text(ChatState.graph_name, size="3", weight="medium"), href=routes.editor_url(ChatState.graph_id),
                    custom_attrs=_testid("chat-graph-link")),
            rx.text("/ chat", size="3", color_scheme="gray"),
            rx.box(flex="1"),
            rx.link(rx.button(rx.icon("workflow", size=14), "Open the editor", variant="soft", size="2"),
                    href=routes.editor_url(ChatState.graph_id)),
            **TOP_BAR,
        )),
        rx.cond(
            ChatState.missing != "",
            graph_not_found(ChatState.missing),
            rx.hstack(
                chat_sidebar(),
                rx.vstack(chat_body(), flex="1", height="100%", min_width="0", max_width="920px", margin_x="auto",
                          spacing="0"),
                spacing="0",
                width="100%",
                flex="1",
                min_height="0",
            ),
        ),
        rename_dialog(),
        delete_dialog(),
        spacing="0",
        height="100vh",
        width="100vw",
        overflow="hidden",
        custom_attrs=_testid("chat-page"),
    )
