"""The chat thread: a typed wrapper around assets/chat_thread.jsx, the message list of a chat with a graph.

Props
- `messages`: the visible branch, root first; each `{id, role, status, blocks, run_id, created_at, siblings, index}`
  (blocks as in nodeflow_app/chat/blocks.py). A message object must keep its identity until the list changes.
- `stream_head`: the answer being streamed (or just finished), not in `messages`: `{message_id ("" when none),
  status, siblings, index}`; set when it starts and when it ends (its final status), so deltas stay small.
- `stream`: its changes: `{seq, blocks (a list, only to reset), ops}`; ops as `chat.patch.wire_ops` sends them. A new `message_id` or non-null `blocks` resets
  the local copy (then `ops` apply); `seq == last + 1` applies `ops` (nodeflow_app/chat/patch.py); a gap
  sends `on_resync`. A finished answer stays here (never resent in `messages`) until the next exchange.
- `busy`: a run streams in this chat; Retry, Edit, Continue and approval buttons are disabled.

Events, each one dict: `on_approve {message_id, node_id, decision, note}`, `on_retry {message_id}`,
`on_edit {message_id, text}`, `on_branch {message_id}` (the sibling to show), `on_continue {message_id}`,
`on_resync {message_id}`, `on_due {message_id}` (a timed pause of that message came due: the server goes on).

The component is its own scroll container (height 100%): put it in a box with a definite height.
"""

from __future__ import annotations

from typing import Any

import reflex as rx
from reflex_base.components.component import NoSSRComponent
from reflex_base.event import EventHandler, passthrough_event_spec
from reflex_base.vars.base import Var

_Event = EventHandler[passthrough_event_spec(dict[str, Any])]


class ChatThread(NoSSRComponent):
    """Markdown and clipboard need the browser, so the thread renders client-side only."""

    library = "$/public/chat_thread.jsx"
    tag = "ChatThread"
    # react-markdown and remark-gfm at the versions rx.markdown declares, so npm installs one copy.
    lib_dependencies: list[str] = ["react-markdown@10.1.0", "remark-gfm@4.0.1", "lucide-react@1.26.0"]

    messages: Var[list[dict[str, Any]]]
    stream_head: Var[dict[str, Any]]
    stream: Var[dict[str, Any]]
    busy: Var[bool]

    on_approve: _Event
    on_retry: _Event
    on_edit: _Event
    on_branch: _Event
    on_continue: _Event
    on_resync: _Event
    on_due: _Event


def chat_thread(**props: Any) -> rx.Component:
    return ChatThread.create(**props)
