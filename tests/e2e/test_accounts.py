"""Accounts in Chromium: every page needs a session, sign-in (a wrong password explained, and counted against the
browser's address; the session in an HttpOnly cookie) going on to the page the visitor came for and only to a
page of NodeFlow, sign-out ending the session, and an event forged by a signed-out browser refused by the server."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from .server import OWNER_EMAIL, OWNER_PASSWORD, ROOT, owner_graph, signed_in_context


def sign_in(page, password: str = OWNER_PASSWORD) -> None:
    page.get_by_test_id("auth-email").fill(OWNER_EMAIL)
    page.get_by_test_id("auth-password").fill(password)
    page.get_by_test_id("auth-submit").click()


def failed_sign_ins(server) -> list[tuple[str, str | None]]:
    from sqlalchemy import select

    from nodeflow_app.store.db import make_engine
    from nodeflow_app.store.models import SignInAttemptRow

    engine = make_engine(server.db_url)
    try:
        with engine.connect() as conn:
            return [tuple(row) for row in conn.execute(select(SignInAttemptRow.email, SignInAttemptRow.address))]
    finally:
        engine.dispose()


def test_a_visitor_without_a_session_is_sent_to_sign_in_and_signs_in(browser, nodeflow_server):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.goto(f"{nodeflow_server.url}/")
    expect(page).to_have_url(re.compile(r"/signin$"), timeout=15_000)
    page.screenshot(path=str(ROOT / "docs" / "screenshot-signin.png"))  # the README's picture of signing in
    sign_in(page, "not the password")
    expect(page.get_by_test_id("auth-error")).to_contain_text("Wrong email or password")
    assert (OWNER_EMAIL, "127.0.0.1") in failed_sign_ins(nodeflow_server)  # the address the browser came from
    sign_in(page)
    expect(page).to_have_url(f"{nodeflow_server.url}/", timeout=15_000)  # the address bar says where they are
    expect(page.get_by_test_id("new-graph")).to_be_visible(timeout=15_000)
    expect(page.get_by_test_id("user-menu")).to_contain_text("workspace")
    # The session is in an HttpOnly cookie the sign-in route set: no script on the page can read it.
    (session,) = [c for c in context.cookies() if c["name"] == "nf_session"]
    assert session["httpOnly"] and session["sameSite"] == "Strict" and session["path"] == "/"
    assert "nf_session" not in page.evaluate("document.cookie")
    assert "token=" not in page.url and "/api/session" not in page.url
    page.reload()  # the session survives a reload
    expect(page.get_by_test_id("new-graph")).to_be_visible()
    context.close()


def test_a_link_opened_signed_out_opens_after_signing_in(browser, nodeflow_server):
    graph_id = owner_graph(nodeflow_server, "Linked graph")
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.goto(f"{nodeflow_server.url}/graph/{graph_id}")
    expect(page).to_have_url(re.compile(rf"/signin\?next=%2Fgraph%2F{graph_id}$"), timeout=15_000)
    sign_in(page)
    expect(page).to_have_url(f"{nodeflow_server.url}/graph/{graph_id}", timeout=15_000)
    expect(page.get_by_test_id("graph-name")).to_have_value("Linked graph")
    page.reload()  # the address is the graph's: a reload shows the graph again
    expect(page.get_by_test_id("graph-name")).to_have_value("Linked graph", timeout=15_000)
    assert page.url == f"{nodeflow_server.url}/graph/{graph_id}"
    context.close()


def test_the_sign_in_page_sends_someone_signed_in_on_to_nodeflow_pages_only(browser, nodeflow_server):
    """`next` is in a link anyone can write: another host in it leads to the graph list, here. (Signing in with
    such a `next` goes there too: tests/accounts/test_sign_in_next.py.)"""
    graph_id = owner_graph(nodeflow_server, "Linked again")
    context = signed_in_context(browser, nodeflow_server)
    page = context.new_page()
    page.goto(f"{nodeflow_server.url}/signin?next=%2Fgraph%2F{graph_id}")
    expect(page.get_by_test_id("graph-name")).to_have_value("Linked again", timeout=15_000)
    expect(page).to_have_url(f"{nodeflow_server.url}/graph/{graph_id}")
    for elsewhere in ("https%3A%2F%2Fevil.example%2F", "%2F%2Fevil.example%2Fx", "%2F%5Cevil.example",
                      "javascript%3Aalert(1)"):
        page.goto(f"{nodeflow_server.url}/signin?next={elsewhere}")
        expect(page).to_have_url(f"{nodeflow_server.url}/", timeout=15_000)
        expect(page.get_by_test_id("new-graph")).to_be_visible()
    context.close()


def test_sign_out_ends_the_session_and_forged_events_are_refused(browser, nodeflow_server):
    context = signed_in_context(browser, nodeflow_server)
    page = context.new_page()
    page.goto(f"{nodeflow_server.url}/")
    expect(page.get_by_test_id("new-graph")).to_be_visible(timeout=15_000)
    cookie = next(c for c in context.cookies() if c["name"] == "nf_session")
    page.get_by_test_id("user-menu").click()
    page.get_by_test_id("menu-sign-out").click()
    expect(page).to_have_url(re.compile(r"/signin/?$"))  # a full page load: the static server adds the slash
    expect(page.get_by_test_id("auth-submit")).to_be_visible()
    assert not [c for c in context.cookies() if c["name"] == "nf_session"]  # the sign-out route cleared it

    # The old token, put back by hand, opens nothing: the server refuses every event it sends.
    replay = browser.new_context()
    replay.add_cookies([{"name": "nf_session", "value": cookie["value"], "url": nodeflow_server.url}])
    stolen = replay.new_page()
    stolen.goto(f"{nodeflow_server.url}/")
    expect(stolen).to_have_url(re.compile(r"/signin$"), timeout=15_000)
    log = nodeflow_server.log.read_text()
    assert "refused" in log and "anonymous" in log
    replay.close()
    context.close()


def test_after_signing_out_the_tab_keeps_nothing_of_the_person_who_used_it(browser, nodeflow_server):
    """A shared computer: someone opens a graph and signs out; the tab then gets nothing of theirs. The server
    keeps a tab's state under the tab's client token, and a page's first event (hydrate) sends all of it: the
    sign-in page, and whoever signed in next at that tab, received the previous person's graph, chats and runs."""
    name = "Quarterly plans e2e-4711"
    graph_id = owner_graph(nodeflow_server, name)
    context = signed_in_context(browser, nodeflow_server)
    page = context.new_page()
    page.goto(f"{nodeflow_server.url}/graph/{graph_id}")
    expect(page.get_by_test_id("graph-name")).to_have_value(name, timeout=15_000)
    page.goto(f"{nodeflow_server.url}/")  # the same tab: the sign-out is in the graph list's header
    expect(page.get_by_test_id("new-graph")).to_be_visible(timeout=15_000)
    frames: list[str] = []
    signed_out = []  # the websockets opened after the sign-out: the pages the next person sees
    page.on("websocket", lambda ws: signed_out and ws.on("framereceived", lambda payload: frames.append(str(payload))))
    page.get_by_test_id("user-menu").click()
    signed_out.append(True)
    page.get_by_test_id("menu-sign-out").click()
    expect(page).to_have_url(re.compile(r"/signin/?$"))
    expect(page.get_by_test_id("auth-submit")).to_be_visible()
    page.wait_for_timeout(1_000)  # the sign-in page's hydrate and on_load answers
    assert frames, "no websocket frame was recorded"
    assert name not in "\n".join(frames)
    context.close()


def test_changing_the_password_signs_in_again_through_the_httponly_cookie(browser, nodeflow_server):
    from nodeflow_app.store.accounts import AccountStore

    accounts = AccountStore(nodeflow_server.db_url)
    try:
        accounts.create_user("Pat Change", "pat@example.org", "pat's first password", admin=False)
        context = signed_in_context(browser, nodeflow_server, "pat@example.org", "pat's first password")
        old = next(c for c in context.cookies() if c["name"] == "nf_session")["value"]
        page = context.new_page()
        page.goto(f"{nodeflow_server.url}/account")
        page.get_by_test_id("auth-current").fill("pat's first password")
        page.get_by_test_id("auth-new").fill("pat's second password")
        page.get_by_test_id("auth-confirm").fill("pat's second password")
        page.get_by_test_id("auth-submit").click()
        expect(page.get_by_test_id("new-graph")).to_be_visible(timeout=15_000)  # signed in again, on the graphs
        (session,) = [c for c in context.cookies() if c["name"] == "nf_session"]
        assert session["httpOnly"] and session["value"] != old
        assert accounts.user_for_session(old) is None  # the change ended the old session
        assert accounts.user_for_session(session["value"]).email == "pat@example.org"
        context.close()
    finally:
        accounts.engine.dispose()
