"""The shell page: header, and every registered node in the palette under its category heading."""

from __future__ import annotations

from pathlib import Path

from nodes._registry import default_registry

from .server import Server

SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "screenshot-shell.png"


def test_shell_shows_every_registered_node_grouped_by_category(page, nodeflow_server: Server) -> None:
    page.goto(nodeflow_server.url + "/")
    page.get_by_test_id("palette").wait_for()

    assert page.get_by_test_id("logo").inner_text() == "NodeFlow"
    assert page.get_by_test_id("tagline").is_visible()

    groups = default_registry().by_category()
    assert groups, "the registry has no nodes"
    for category, definitions in groups.items():
        group = page.get_by_test_id(f"palette-group-{category}")
        heading = group.get_by_test_id(f"palette-category-{category}")
        assert heading.is_visible(), f"category heading {category!r} is missing"
        for definition in definitions:
            entry = group.get_by_test_id(f"palette-node-{definition.id}")
            assert entry.count() == 1, f"{definition.id} is not under the {category!r} heading"
            entry.scroll_into_view_if_needed()
            assert entry.is_visible(), f"{definition.id} is not visible"
            name = entry.locator(".palette-node-name")
            assert name.inner_text() == definition.name

    total = sum(len(d) for d in groups.values())
    assert page.locator('[data-testid^="palette-node-"]').count() == total

    page.get_by_test_id("palette").evaluate("el => el.scrollTo(0, 0)")
    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOT))


def test_palette_icon_falls_back_to_box_for_unknown_names() -> None:
    from nodeflow_app.components.palette import FALLBACK_ICON, icon_name

    assert icon_name("play") == "play"
    assert icon_name("message-square") == "message-square"
    assert icon_name("no-such-icon-anywhere") == FALLBACK_ICON
    for definition in default_registry().definitions():
        assert icon_name(definition.icon) in {definition.icon, FALLBACK_ICON}
