"""Shared sizes and colours of the shell, so every panel lines up."""

HEADER_HEIGHT = "56px"
PALETTE_WIDTH = "300px"
PANEL_BG = "var(--gray-2)"
APP_BG = "var(--gray-1)"
BORDER = "1px solid var(--gray-a5)"
