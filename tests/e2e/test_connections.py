"""The Connections section of the credentials page in Chromium: each kind's placeholder fits its box whole, and
what the fields mean is said under it."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import expect

from nodeflow_app.connections import HOSTS, KINDS

from .server import Server

# Chromium counts a placeholder in a text field's scroll size: a cut-off one overflows.
OVERFLOW = "e => [e.scrollWidth - e.clientWidth, e.scrollHeight - e.clientHeight]"


def test_every_kind_shows_its_whole_placeholder_and_the_hosts_rule_under_it(page, nodeflow_server: Server,
                                                                            tmp_path: Path) -> None:
    page.goto(f"{nodeflow_server.url}/workspace/credentials")
    fields, help_text = page.get_by_test_id("connection-fields"), page.get_by_test_id("connection-help")
    fields.wait_for()
    for kind, (required, optional) in KINDS.items():
        page.get_by_test_id("connection-kind").click()
        page.get_by_role("option", name=kind, exact=True).click()
        expect(page.get_by_test_id("connection-kind")).to_have_text(kind)
        placeholder = fields.get_attribute("placeholder")
        assert [line.split("=")[0] for line in placeholder.splitlines()] == [*required, *optional], kind
        assert fields.evaluate(OVERFLOW) == [0, 0], (kind, placeholder)
        if HOSTS in optional:
            expect(help_text).to_have_text("One field=value per line. hosts: where an HTTP Request node may send "
                                           "it, over https; * for any host; http://host allows plain http too.")
        else:
            expect(help_text).to_have_text("One field=value per line.")
    fields.scroll_into_view_if_needed()
    page.screenshot(path=str(tmp_path / "connections.png"))
    print("screenshot:", tmp_path / "connections.png")
