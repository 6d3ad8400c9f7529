"""Which side panels of the editor are unfolded: the palette and the inspector fold into thin rails.

Each is "auto" until the person folds or unfolds it: auto panels fold while the chat is open (the inspector also
while History is; the two take turns on the right), so the canvas keeps at least half the window (1440 px: 40 + 40
rails and a 440 px chat leave 920 px; 1024 px: the chat takes 40%, 410 px, and leaves 534 px).
"""

from __future__ import annotations

import reflex as rx

from nodeflow_app.state.access import requires


class LayoutState(rx.State):
    palette: str = "auto"  # auto | open | folded
    inspector: str = "auto"

    @rx.event
    @requires("view")
    def show_palette(self, shown: bool):
        self.palette = "open" if shown else "folded"

    @rx.event
    @requires("view")
    def show_inspector(self, shown: bool):
        self.inspector = "open" if shown else "folded"
