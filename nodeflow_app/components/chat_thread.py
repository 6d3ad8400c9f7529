"""TEMPORARY stub (replaced by the chat-thread branch)."""
from typing import Any
import reflex as rx
from reflex_base.event import EventHandler, passthrough_event_spec
from reflex_base.vars.base import Var
from reflex_base.components.component import NoSSRComponent
_Event = EventHandler[passthrough_event_spec(dict[str, Any])]

class ChatThread(NoSSRComponent):
    library = "$/public/chat_thread.jsx"
    tag = "ChatThread"
    messages: Var[list]
    stream: Var[dict]
    busy: Var[bool]
    on_approve: _Event
    on_retry: _Event
    on_edit: _Event
    on_branch: _Event
    on_continue: _Event
    on_resync: _Event

def chat_thread(**props: Any) -> rx.Component:
    return ChatThread.create(**props)
