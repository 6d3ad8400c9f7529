"""Who else has this graph open: their initials in their colour (the room's `faces`, state/graph_room.py).

One chip per person, however many tabs they have open; mine is left out: the toolbar is crowded, and
everybody knows they are here."""

from __future__ import annotations

import reflex as rx

from nodeflow_app.state.editor_state import EditorState
from nodeflow_app.state.graph_room import GraphRoom


def _person(person: rx.Var) -> rx.Component:
    return rx.cond(person["user"] != EditorState.me_user, rx.tooltip(
        rx.box(
            person["initials"],
            style={"background": person["color"], "color": "#111", "border_radius": "50%", "width": "22px",
                   "height": "22px", "display": "flex", "align_items": "center", "justify_content": "center",
                   "font_size": "11px", "font_weight": "700", "margin_left": "-6px",
                   "border": "2px solid var(--gray-1)"},
            custom_attrs={"data-testid": "presence-" + person["initials"].to(str), "data-color": person["color"]},
        ),
        content=person["name"],
    ))


def presence_bar() -> rx.Component:
    return rx.hstack(
        rx.foreach(GraphRoom.faces, _person),
        # Which backend worker serves this tab (tests of several workers read it).
        rx.box(display="none", custom_attrs={"data-testid": "worker", "data-pid": EditorState.worker}),
        # The toolbar is full at 1440 px: when it overflows, the avatars give up room with the graph's name.
        spacing="0", padding_left="6px", min_width="0", overflow="hidden", flex_shrink="4",
        custom_attrs={"data-testid": "presence"})
