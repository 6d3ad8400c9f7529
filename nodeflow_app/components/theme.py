"""Shared sizes and colours of the shell, so every panel lines up."""

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
