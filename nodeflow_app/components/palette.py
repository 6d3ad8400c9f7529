"""The node palette: every registered node type, grouped by category.

Rendered at compile time from the registry's definitions (pure data, no state):
adding a node folder and restarting the app adds it here.
"""

from collections.abc import Mapping, Sequence

import reflex as rx
from reflex_base.utils import format as rx_format
from reflex_components_lucide.icon import LUCIDE_ICON_LIST

from nodeflow_app.contract import NodeDefinition
from nodeflow_app.components.theme import BORDER, PALETTE_WIDTH, PANEL_BG
from nodeflow_app.state.access import requires

FALLBACK_ICON = "box"
_KNOWN_ICONS = frozenset(LUCIDE_ICON_LIST)
# Long descriptions stay two lines in the palette; the entry's tooltip has the whole text.
CLAMP_2_LINES = {
    "display": "-webkit-box",
    "WebkitLineClamp": "2",
    "WebkitBoxOrient": "vertical",
    "overflow": "hidden",
}


def icon_name(name: str) -> str:
    """The definition's lucide icon if Reflex knows it (same check as rx.icon), else a plain box."""
    return name if rx_format.to_snake_case(name.lower()) in _KNOWN_ICONS else FALLBACK_ICON


def category_label(category: str) -> str:
    special = {"ai": "AI", "rag": "RAG"}
    return special.get(category, category.replace("_", " ").replace("-", " ").title())


class PaletteState(rx.State):
    """The palette's search text (filtering happens in the browser: entries are static)."""

    query: str = ""

    @rx.event
    @requires("view")
    def set_query(self, query: str):
        self.query = query

    @rx.var
    def needle(self) -> str:
        return self.query.strip().lower()


def _matches(definition: NodeDefinition) -> rx.Var:
    haystack = f"{definition.name} {definition.id} {definition.category} {definition.description}".lower()
    return rx.Var.create(haystack).contains(PaletteState.needle)


def palette_entry(definition: NodeDefinition) -> rx.Component:
    """One node type; the canvas (flow_canvas.jsx) adds it when it is clicked, or dropped onto the canvas."""
    return rx.hstack(
        rx.center(
            rx.icon(icon_name(definition.icon), size=16),
            width="30px",
            height="30px",
            flex_shrink="0",
            border_radius="var(--radius-2)",
            background="var(--accent-a3)",
            color="var(--accent-11)",
        ),
        rx.vstack(
            rx.text(definition.name, size="2", weight="medium", class_name="palette-node-name"),
            rx.text(definition.description, size="1", color_scheme="gray", style=CLAMP_2_LINES),
            spacing="0",
            min_width="0",
        ),
        align="start",
        spacing="3",
        padding="8px",
        border_radius="var(--radius-3)",
        cursor="grab",
        width="100%",
        display=rx.cond(_matches(definition), "flex", "none"),
        _hover={"background": "var(--gray-a3)"},
        title=f"{definition.name} ({definition.id} v{definition.version}): {definition.description}",
        custom_attrs={"data-testid": f"palette-node-{definition.id}", "data-node-type": definition.id,
                      "draggable": "true"},
    )


def _any_matches(definitions: Sequence[NodeDefinition]) -> rx.Var:
    """Whether the search matches one of these entries (one string test, not one per entry)."""
    haystack = "\n".join(f"{d.name} {d.id} {d.category} {d.description}".lower() for d in definitions)
    return rx.Var.create(haystack).contains(PaletteState.needle)


def palette_group(category: str, definitions: Sequence[NodeDefinition]) -> rx.Component:
    """A category and its entries; hidden while the search matches none of them."""
    return rx.vstack(
        rx.text(
            category_label(category),
            size="1",
            weight="bold",
            color_scheme="gray",
            text_transform="uppercase",
            letter_spacing="0.06em",
            padding_x="8px",
            custom_attrs={"data-testid": f"palette-category-{category}"},
        ),
        *(palette_entry(d) for d in definitions),
        spacing="1",
        width="100%",
        display=rx.cond(_any_matches(definitions), "flex", "none"),
        custom_attrs={"data-testid": f"palette-group-{category}"},
    )


def palette(groups: Mapping[str, Sequence[NodeDefinition]], fold: rx.Component | None = None) -> rx.Component:
    """The panel; `fold` is a button that folds it (the editor's), shown beside the title."""
    count = sum(len(defs) for defs in groups.values())
    return rx.vstack(
        rx.hstack(
            rx.text("Nodes", size="3", weight="bold"),
            rx.badge(str(count), variant="soft", color_scheme="gray"),
            rx.box(flex="1"),
            fold or rx.fragment(),
            align="center",
            width="100%",
            padding_x="8px",
        ),
        rx.input(
            rx.input.slot(rx.icon("search", size=14)),
            placeholder="Search nodes",
            aria_label="Search nodes",
            value=PaletteState.query,
            on_change=PaletteState.set_query,
            width="100%",
            custom_attrs={"data-testid": "palette-search"},
        ),
        *(palette_group(category, defs) for category, defs in groups.items()),
        rx.text("No node matches “", PaletteState.query, "”.", size="2", color_scheme="gray", padding_x="8px",
                display=rx.cond(_any_matches([d for defs in groups.values() for d in defs]), "none", "block"),
                custom_attrs={"data-testid": "palette-no-match"}),
        spacing="4",
        padding="12px",
        width=PALETTE_WIDTH,
        min_width=PALETTE_WIDTH,
        height="100%",
        overflow_y="auto",
        background=PANEL_BG,
        border_right=BORDER,
        custom_attrs={"data-testid": "palette"},
    )
