"""Shared sizes and colours of the shell, so every panel lines up."""

import reflex as rx

HEADER_HEIGHT = "56px"
PALETTE_WIDTH = "300px"
PANEL_BG = "var(--gray-2)"
APP_BG = "var(--gray-1)"
BORDER = "1px solid var(--gray-a5)"

# The bar across the top of every page (the header, the editor's toolbar).
TOP_BAR = {
    "align": "center", "spacing": "3", "height": HEADER_HEIGHT, "padding_x": "16px",
    "background": PANEL_BG, "border_bottom": BORDER, "width": "100%", "flex_shrink": "0",
}

# Window widths below which the editor gives up room (its e2e test measures 1024, 1280 and 1440 px):
SAVED_DETAIL_FROM = 1600  # narrower: the Live badge drops "(v8 saved)" (amber, its tooltip and "Make v8 live" say it)
PANEL_WORDS_FROM = 1440  # narrower: the Runs and History buttons show only their icons (tooltips name them),
# "Make v8 live" too
LABELS_FROM = 1280  # narrower: Validate, Run and Save too, and the breadcrumb and the switch's "Active" go
WIDE_CANVAS_FROM = 1200  # narrower: the palette starts folded (flow_canvas.css hides the minimap on a small canvas)


def from_width(px: int, display: str = "inline"):
    """A responsive `display` style: hidden in windows narrower than `px`."""
    return rx.breakpoints(custom={"0px": "none", f"{px}px": display})


def below_width(px: int, display: str = "inline"):
    """A responsive `display` style: shown only in windows narrower than `px`."""
    return rx.breakpoints(custom={"0px": display, f"{px}px": "none"})


def button_word(text, px: int = LABELS_FROM) -> rx.Component:
    """A button's word that goes in windows narrower than `px`: give the button an aria-label and a tooltip."""
    return rx.text(text, as_="span", display=from_width(px))
