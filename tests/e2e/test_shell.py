"""The shell: the app header on the home page (the graph list), no resource missing on the main pages, and the
palette's icon fallback.

The palette itself lives on the editor page now; the editor's e2e tests check it there.
"""

from __future__ import annotations

from nodes._registry import default_registry

from .server import Server, owner_graph, signed_in_context


def test_home_page_shows_the_header_and_logo(page, nodeflow_server: Server) -> None:
    page.goto(nodeflow_server.url + "/")
    page.get_by_test_id("app-header").wait_for()

    assert page.get_by_test_id("logo").inner_text() == "NodeFlow"
    assert page.get_by_test_id("tagline").is_visible()


def test_every_page_leads_back_to_the_graph_list(page, nodeflow_server: Server) -> None:
    """Knowledge, Workspace and Account had no link to the graphs: the header's logo and its Graphs link lead there,
    and so does the account page's link."""
    for path, link in [("/knowledge", "nav-graphs"), ("/workspace", "home-link"), ("/account", "account-back")]:
        page.goto(nodeflow_server.url + path)
        page.get_by_test_id(link).click()
        page.get_by_test_id("new-graph").wait_for()
        assert page.url.rstrip("/") == nodeflow_server.url


def test_the_main_pages_miss_no_resource(browser, nodeflow_server: Server) -> None:
    """The sign-in page, the graph list and the editor load with no 404 (the browser asked for /favicon.ico on
    every page) and no error in the console."""
    graph_id = owner_graph(nodeflow_server, "No 404")
    problems: list[str] = []

    def watch(page) -> None:
        page.on("response", lambda r: problems.append(f"{r.status} {r.url}") if r.status >= 400 else None)
        page.on("requestfailed", lambda r: problems.append(f"failed {r.url}: {r.failure}"))
        page.on("console", lambda m: problems.append(f"console: {m.text}") if m.type == "error" else None)

    signed_out = browser.new_context()
    page = signed_out.new_page()
    watch(page)
    page.goto(nodeflow_server.url + "/signin")
    page.get_by_test_id("auth-submit").wait_for()
    page.wait_for_load_state("networkidle")  # the tab's icon is asked for after the page loaded
    signed_out.close()

    signed_in = signed_in_context(browser, nodeflow_server)
    page = signed_in.new_page()
    watch(page)
    page.goto(nodeflow_server.url + "/")
    page.get_by_test_id("new-graph").wait_for()
    page.wait_for_load_state("networkidle")
    page.goto(f"{nodeflow_server.url}/graph/{graph_id}")
    page.wait_for_function("window.__nodeflowCanvas && window.__nodeflowCanvas.rev() > 0")
    page.wait_for_load_state("networkidle")
    signed_in.close()
    assert problems == []


def test_palette_icon_falls_back_to_box_for_unknown_names() -> None:
    from nodeflow_app.components.palette import FALLBACK_ICON, icon_name

    assert icon_name("play") == "play"
    assert icon_name("message-square") == "message-square"
    assert icon_name("no-such-icon-anywhere") == FALLBACK_ICON
    for definition in default_registry().definitions():
        assert icon_name(definition.icon) in {definition.icon, FALLBACK_ICON}
