"""What a page says before its data arrived: a spinner until a list's first load, never its "No ... yet" empty
state."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from .server import Server, owner_graph

# A delta saying a page's list state finished its first load (`loaded`, in Reflex's delta key of the var).
FIRST_LOAD = re.compile(r'"loaded(_rx_state_)?"\s*:\s*true')


def _hold_first_loads(page):
    """Route the page's websockets: the server's messages reach the page until one says a list loaded; from that
    one on they wait, in order, until `release()`. Returns (release, the messages held)."""
    held: list = []
    holding = {"on": False, "released": False}

    def handler(ws) -> None:
        server = ws.connect_to_server()

        def from_server(message) -> None:
            if not holding["released"] and FIRST_LOAD.search(str(message)):
                holding["on"] = True
            if holding["on"]:
                held.append((ws, message))
            else:
                ws.send(message)

        server.on_message(from_server)

    def release() -> None:
        holding.update(on=False, released=True)
        for ws, message in held:
            ws.send(message)
        held.clear()

    page.route_web_socket(re.compile(".*"), handler)
    return release, held


def test_lists_show_a_spinner_until_their_first_load_never_their_empty_state(page, nodeflow_server: Server) -> None:
    """A person with collections saw "No collections yet" while they loaded (and the credentials page said only
    owners manage credentials, the workspace page "None yet."): each list waits with a spinner instead."""
    owner_graph(nodeflow_server, "Still here")
    page.goto(f"{nodeflow_server.url}/knowledge")
    page.get_by_test_id("new-collection").click()
    page.get_by_test_id("collection-name").fill("kept")
    page.get_by_test_id("collection-create").click()
    expect(page.get_by_test_id("collection-kept")).to_be_visible()

    pages = [("/knowledge", "collection-kept", ["No collections yet"]),
             ("/", "graph-row-Still here", ["No graphs yet", "No graph matches"]),
             ("/workspace", "member-owner@example.org", ["None yet."]),
             ("/workspace/credentials", "provider-openai", ["Only the workspace's owner"])]
    for path, listed, empty_texts in pages:
        tab = page.context.new_page()  # a tab of its own: a fresh state, not one a page before loaded
        release, held = _hold_first_loads(tab)
        tab.goto(nodeflow_server.url + path)
        for _ in range(100):  # the guard's answer (who is signed in) went through; the list's waits
            if held:
                break
            tab.wait_for_timeout(100)
        assert held, f"{path}: no answer said the list loaded"
        expect(tab.get_by_test_id("user-menu")).to_be_visible()
        for text in empty_texts:
            expect(tab.get_by_text(text)).to_have_count(0)
        expect(tab.get_by_test_id("loading").first).to_be_visible()
        expect(tab.get_by_test_id(listed)).to_have_count(0)
        release()
        expect(tab.get_by_test_id(listed)).to_be_visible()
        expect(tab.get_by_test_id("loading")).to_have_count(0)
        tab.close()

