"""The shell: the app header on the home page (the graph list), and the palette's icon fallback.

The palette itself lives on the editor page now; the editor's e2e tests check it there.
"""

from __future__ import annotations

from nodes._registry import default_registry

from .server import Server


def test_home_page_shows_the_header_and_logo(page, nodeflow_server: Server) -> None:
    page.goto(nodeflow_server.url + "/")
    page.get_by_test_id("app-header").wait_for()

    assert page.get_by_test_id("logo").inner_text() == "NodeFlow"
    assert page.get_by_test_id("tagline").is_visible()


def test_palette_icon_falls_back_to_box_for_unknown_names() -> None:
    from nodeflow_app.components.palette import FALLBACK_ICON, icon_name

    assert icon_name("play") == "play"
    assert icon_name("message-square") == "message-square"
    assert icon_name("no-such-icon-anywhere") == FALLBACK_ICON
    for definition in default_registry().definitions():
        assert icon_name(definition.icon) in {definition.icon, FALLBACK_ICON}
