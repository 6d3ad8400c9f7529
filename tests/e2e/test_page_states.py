"""What a page says before its data arrived and where there is nothing: a spinner until a list's first load (never
its "No ... yet" empty state), and NodeFlow's own not-found page for an unknown address or a graph that is not
there for the visitor."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from nodeflow_app.store.accounts import AccountStore

from .server import Server, owner_graph, signed_in_context

# A delta saying a page's list state finished its first load (`loaded`, in Reflex's delta key of the var).
FIRST_LOAD = re.compile(r'"loaded(_rx_state_)?"\s*:\s*true')
# The delta after a page's last on_load handler (Reflex queues `set_is_hydrated(True)` behind them).
HYDRATED = re.compile(r'"is_hydrated(_rx_state_)?"\s*:\s*true')
NOT_A_MEMBER_TOAST = "Not found: it belongs to a workspace you are not in."


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


def test_unknown_addresses_and_graphs_not_there_get_nodeflows_not_found_page(browser, page,
                                                                              nodeflow_server: Server) -> None:
    """An unknown URL showed Reflex's bare "404: Page not found"; a graph the visitor may not see showed an empty
    editor. Each gets the same page: the header, a short message, a link back to the graphs."""
    for path in ("/nope", "/graphs/does-not-exist-xyz", "/graph/does-not-exist-xyz", "/graph/does-not-exist-xyz/chat"):
        page.goto(nodeflow_server.url + path)
        found = page.get_by_test_id("not-found")
        expect(found).to_be_visible()
        expect(found).to_contain_text("not found")
        expect(page.get_by_test_id("app-header")).to_be_visible()
    assert page.goto(nodeflow_server.url + "/nope").status == 404  # for crawlers and scripts, too
    expect(page).to_have_title("NodeFlow — page not found")
    page.get_by_test_id("not-found-back").click()
    expect(page.get_by_test_id("new-graph")).to_be_visible()
    assert page.url.rstrip("/") == nodeflow_server.url

    # A graph of a workspace the visitor is not in is "not found" for them, in the same look.
    graph_id = owner_graph(nodeflow_server, "Owner's only")
    accounts = AccountStore(nodeflow_server.db_url)
    try:
        accounts.create_user("Olga", "olga@example.org", "outsider password")
    finally:
        accounts.engine.dispose()
    context = signed_in_context(browser, nodeflow_server, "olga@example.org", "outsider password")
    outsider = context.new_page()
    frames: list[str] = []
    outsider.on("websocket", lambda ws: ws.on("framereceived", lambda payload: frames.append(str(payload))))
    for path in (f"/graph/{graph_id}", f"/graph/{graph_id}/chat"):
        frames.clear()
        outsider.goto(nodeflow_server.url + path)
        expect(outsider.get_by_test_id("not-found")).to_contain_text("Graph not found")
        # Said once, by the page: each of its parts refused by the access check added a toast saying it again.
        for _ in range(100):
            if any(HYDRATED.search(frame) for frame in frames):
                break
            outsider.wait_for_timeout(100)
        assert any(HYDRATED.search(frame) for frame in frames), f"{path}: the page's loads never finished"
        assert not [frame for frame in frames if NOT_A_MEMBER_TOAST in frame], f"{path}: toasts were sent"
        outsider.wait_for_timeout(3_000)  # a toast sent shows within this (not yet at 0.5 s, at 3.5 s it did)
        expect(outsider.get_by_text(NOT_A_MEMBER_TOAST)).to_have_count(0)
        expect(outsider.get_by_test_id("app-header")).to_be_visible()
        expect(outsider.get_by_text("Owner's only")).to_have_count(0)
        expect(outsider.get_by_test_id("canvas").or_(outsider.get_by_test_id("chat-input"))).to_have_count(0)
    context.close()


def test_a_list_whose_first_load_fails_says_what_failed_and_retry_loads_it(page, nodeflow_server: Server) -> None:
    """The collections' load failed (a collection's settings file broken on disk): the spinner went on forever,
    beside an error toast. The list's place says what failed; Retry loads it again."""
    page.goto(f"{nodeflow_server.url}/knowledge")
    page.get_by_test_id("new-collection").click()
    page.get_by_test_id("collection-name").fill("mended")
    page.get_by_test_id("collection-create").click()
    expect(page.get_by_test_id("collection-mended")).to_be_visible()
    [settings] = (nodeflow_server.data_dir / "knowledge").glob("*/mended.json")
    kept = settings.read_text()
    settings.write_text("{not json")
    try:
        tab = page.context.new_page()  # a fresh state: its first load
        tab.goto(f"{nodeflow_server.url}/knowledge")
        failed = tab.get_by_test_id("load-error")
        expect(failed).to_have_count(1)  # said once (the collection's side waits for the list)
        expect(failed).to_contain_text("Could not load the collections: ")
        expect(tab.get_by_test_id("loading")).to_have_count(0)
        expect(failed).to_contain_text("line 1 column 2")  # the reason: "{not json"
        # Broken another way, so that the answer to Retry shows (the message stays until it comes): the retry
        # ran and failed again, with its own reason. (Repairing the file while it was still on its way raced it.)
        settings.write_text('{"a": ')
        tab.get_by_test_id("load-retry").click()
        expect(failed).to_contain_text("line 1 column 7")
        expect(failed).to_have_count(1)
    finally:
        settings.write_text(kept)
    tab.get_by_test_id("load-retry").click()
    expect(tab.get_by_test_id("collection-mended")).to_be_visible()
    expect(tab.get_by_test_id("load-error")).to_have_count(0)
    expect(tab.get_by_test_id("loading")).to_have_count(0)
    tab.close()
