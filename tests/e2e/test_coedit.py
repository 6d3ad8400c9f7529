"""Live co-editing in Chromium (docs/editor.md, "Editing together"): the owner, an invited editor and a
viewer have one graph open in three browser contexts; two people make 50 random edits each at the same
time; and two people whose websockets are served by different backend workers (Redis) edit together.

Every edit goes to the graph's room and comes back to every tab as a patch with the room's next seq,
so a tab's `lastSeq()` tells that it has applied an edit, whoever made it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect

from nodeflow_app.editor.presence import initials
from nodeflow_app.store.accounts import AccountStore
from nodeflow_app.store.graphs import GraphStore
from tests.redis_server import redis_database

from .server import Server, run_server, tail
from .team import make_team
from .test_make_run import _seed_web_dir
from .test_triggers import EXAMPLES
from .test_editor import (
    CANVAS, center, drag, expect_counts, expect_position, handle, node, position, select, toast, wire,
)

GRAPH = {
    "nodes": [
        {"id": "start", "type": "chat-start", "name": "Start", "position": {"x": 0, "y": 0}},
        {"id": "check", "type": "conditional", "name": "Check", "position": {"x": 320, "y": 0}},
        {"id": "prompt", "type": "prompt-template", "name": "Prompt", "position": {"x": 320, "y": 320}},
    ],
    "edges": [],
}


def open_graph(context, server: Server, graph_id: str):
    page = context.new_page()
    page.goto(f"{server.url}/graph/{graph_id}")
    page.wait_for_function(f"{CANVAS} && {CANVAS}.rev() > 0")
    return page


def commit(page, testid: str, value: str) -> None:
    field = page.get_by_test_id(testid)
    field.fill(value)
    field.press("Enter")


def stored(server: Server, graph_id: str):
    store = GraphStore(f"sqlite:///{server.data_dir / 'nodeflow.db'}")
    try:
        return store.get(graph_id), store.versions(graph_id)
    finally:
        store.engine.dispose()


def test_an_editor_and_the_owner_edit_together_and_a_viewer_watches(browser, nodeflow_server: Server) -> None:
    team = make_team(nodeflow_server, ["editor", "viewer"])
    editor_member, viewer_member = team.members
    graph_id = team.graph("Together", GRAPH)
    contexts = [team.context(browser, m) for m in (team.owner, editor_member, viewer_member)]
    owner, editor, viewer = (open_graph(c, nodeflow_server, graph_id) for c in contexts)
    everyone = (owner, editor, viewer)

    # Presence: each tab shows the two others' initials in their colours.
    people = (team.owner, editor_member, viewer_member)
    for page, me in zip(everyone, people):
        for member in people:
            presence = page.get_by_test_id(f"presence-{initials(member.name)}")
            expect(presence).to_have_count(0 if member is me else 1)
    expect(viewer.get_by_test_id("view-only")).to_be_visible()

    # Add: the editor clicks a palette entry; the owner and the viewer get the node.
    editor.get_by_test_id("palette-node-conditional").click()
    for page in everyone:
        node(page, "Conditional").wait_for()

    # Move: the owner drags Start; the others see it where it was dropped (shared at drag stop).
    header = center(node(owner, "Start").locator(".nf-header"))
    drag(owner, header, (header[0] + 140, header[1] + 90))
    owner.wait_for_function(f"{CANVAS}.lastSeq() === 2")
    moved = position(owner, "Start")
    assert moved != (0.0, 0.0)
    for page in (editor, viewer):
        expect_position(page, "Start", moved)

    # Rename in the editor's inspector; wire in the owner's canvas.
    select(editor, "Prompt", "prompt-template")
    commit(editor, "inspector-name", "Question")
    for page in everyone:
        node(page, "Question").wait_for()
    wire(owner, handle(owner, "start", "output"), handle(owner, "prompt", "input"))
    for page in everyone:
        expect_counts(page, 4, 1)

    # Both open Check in the inspector. Two parameters of it at the same time (the owner's `field` in the
    # inspector, the editor's `value` inline on the canvas): both kept, and each inspector shows both.
    select(owner, "Check", "conditional")
    select(editor, "Check", "conditional")
    commit(owner, "field-field", "status")
    commit(editor, "inline-Check-value", "open")
    for page in (owner, editor):
        expect(page.get_by_test_id("field-field")).to_have_value("status")
        expect(page.get_by_test_id("field-value")).to_have_value("open")
    expect(viewer.get_by_test_id("inline-Check-value")).to_have_value("open")
    # The same parameter: the last write wins and the other sees it at once (canvas and inspector).
    commit(owner, "inline-Check-value", "closed")
    expect(editor.get_by_test_id("inline-Check-value")).to_have_value("closed")
    expect(editor.get_by_test_id("field-value")).to_have_value("closed")
    commit(editor, "field-value", "pending")
    for page in everyone:
        expect(page.get_by_test_id("inline-Check-value")).to_have_value("pending")

    # Undo takes back my own last change only: the owner's `field`, not the editor's later `value`.
    commit(owner, "field-field", "kind")
    expect(editor.get_by_test_id("field-field")).to_have_value("kind")
    commit(editor, "inline-Check-value", "late")
    expect(owner.get_by_test_id("inline-Check-value")).to_have_value("late")
    owner.get_by_test_id("undo").click()
    for page in (owner, editor):
        expect(page.get_by_test_id("field-field")).to_have_value("status")
    for page in everyone:
        expect(page.get_by_test_id("inline-Check-value")).to_have_value("late")

    # Each sees the other's selection outlined in the other's colour, and the other's cursor.
    expect(node(owner, "Check")).to_have_attribute("data-peer", initials(editor_member.name))
    expect(node(editor, "Check")).to_have_attribute("data-peer", initials(team.owner.name))
    editor.mouse.move(*center(node(editor, "Question")))
    editor.mouse.move(*center(node(editor, "Start")), steps=4)
    expect(owner.get_by_test_id(f"cursor-{initials(editor_member.name)}")).to_be_visible()

    # The owner deletes the node the editor has open in the inspector: the editor's inspector closes, saying so.
    owner.get_by_test_id("delete-node").click()
    editor.get_by_test_id("inspector-form-conditional").wait_for(state="detached")
    toast(editor, "deleted 'Check'")
    for page in everyone:
        expect(node(page, "Check")).to_have_count(0)

    # The viewer saw all of it and can send nothing: no Save is offered, and the server refuses (and logs) what
    # a tampered page sends anyway.
    expect(viewer.get_by_test_id("save-graph")).to_have_count(0)
    name = viewer.get_by_test_id("graph-name")
    name.evaluate("el => el.removeAttribute('readonly')")  # what devtools would do
    name.fill("Viewer was here")
    name.press("Enter")
    toast(viewer, "Not allowed: a viewer cannot do this")

    # Autosave: the stored graph is the merged one; a version names both editing people.
    owner.wait_for_function(
        "() => document.querySelector('[data-testid=\"save-status\"]')?.textContent.startsWith('Saved')")
    graph, versions = stored(nodeflow_server, graph_id)
    names = {n["name"] for n in graph.graph["nodes"]}
    assert names == {"Start", "Question", "Conditional"}, names
    assert any(team.owner.name in v.author_name and editor_member.name in v.author_name for v in versions), \
        [v.author_name for v in versions]
    for context in contexts:
        context.close()


# Reflex's warning when a delta is sent to a token no websocket holds.
DISCONNECTED = "Attempting to send delta to disconnected client"


def _route_events(page, dropped: tuple[str, ...] = ()) -> list:
    """Route the page's websockets through Playwright, leaving out the page's events whose names end with one of
    `dropped` (as if the tab were gone before it sent them); the server sides, newest last (closing one drops the
    connection, as a server that stops would)."""
    routes = []

    def handler(ws) -> None:
        server = ws.connect_to_server()
        ws.on_message(lambda message: None if any(f'{name}"' in str(message) for name in dropped)
                      else server.send(message))
        routes.append(server)

    page.route_web_socket(re.compile(".*"), handler)
    return routes


def test_edits_of_a_tab_gone_before_its_autosave_are_saved_by_the_server(browser, nodeflow_server: Server) -> None:
    """The owner's tab goes before its autosave (a second after the edit) and its `onLeave` reach the server: the
    room saves the edit itself, under the owner's name, and the viewer (whose tab does not save) sees "Saved". The
    server's save sends nothing to the room's own token (no browser holds it: a warning in the log each time)."""
    warnings = nodeflow_server.log.read_text().count(DISCONNECTED)
    team = make_team(nodeflow_server, ["viewer"])
    graph_id = team.graph("Closed at once", GRAPH)
    contexts = [team.context(browser, m) for m in (team.owner, team.members[0])]
    owner_page = contexts[0].new_page()
    _route_events(owner_page, dropped=("editor_state.save", "editor_state.leave_room"))
    owner_page.goto(f"{nodeflow_server.url}/graph/{graph_id}")
    owner_page.wait_for_function(f"{CANVAS} && {CANVAS}.rev() > 0")
    viewer = open_graph(contexts[1], nodeflow_server, graph_id)

    commit(owner_page, "inline-Check-value", "typed just before closing")
    expect(viewer.get_by_test_id("inline-Check-value")).to_have_value("typed just before closing")
    expect(viewer.get_by_test_id("save-status")).to_contain_text("Unsaved")
    owner_page.close()
    expect(viewer.get_by_test_id("save-status")).to_contain_text("Saved", timeout=15_000)
    graph, versions = stored(nodeflow_server, graph_id)
    assert {n["name"]: n.get("data", {}).get("value") for n in graph.graph["nodes"]}["Check"] == \
        "typed just before closing"
    assert versions[0].author_name == team.owner.name, [v.author_name for v in versions]
    assert nodeflow_server.log.read_text().count(DISCONNECTED) == warnings, tail(nodeflow_server.log)
    for context in contexts:
        context.close()


def workspace_name(server: Server, workspace_id: str) -> str:
    accounts = AccountStore(f"sqlite:///{server.data_dir / 'nodeflow.db'}")
    try:
        return accounts.workspace_name(workspace_id)
    finally:
        accounts.engine.dispose()


def test_switching_a_graph_on_and_off_shows_in_every_tab_that_has_it_open(browser, nodeflow_server: Server) -> None:
    """Which version is live is shared (docs/triggers.md): the owner switches the graph on, the editor makes a
    newer save live, the owner switches it off, then on again from the graph list, and the editor off again; each
    time the other tabs' switch and "Live" badge change at once (they kept the old ones until reloaded), the
    viewer's badge and the list's switch too."""
    warnings = nodeflow_server.log.read_text().count(DISCONNECTED)
    team = make_team(nodeflow_server, ["editor", "viewer"])
    graph_id = team.graph("Live together", json.loads((EXAMPLES / "webhook.json").read_text()))
    contexts = [team.context(browser, m) for m in (team.owner, *team.members)]
    owner, editor, viewer = (open_graph(c, nodeflow_server, graph_id) for c in contexts)
    labels = {page: page.get_by_test_id("graph-active-label") for page in (owner, editor, viewer)}
    for page in (owner, editor, viewer):
        expect(labels[page]).to_have_count(0)

    owner.get_by_test_id("graph-active").click()
    for page in (owner, editor, viewer):
        expect(labels[page]).to_have_text("Live · v1")
    expect(editor.get_by_test_id("graph-active")).to_have_attribute("data-state", "checked")

    editor.get_by_test_id("palette-node-conditional").click()  # an edit, autosaved as v2
    expect(owner.get_by_test_id("make-latest-live")).to_be_visible(timeout=15_000)
    editor.get_by_test_id("make-latest-live").click()
    for page in (owner, editor, viewer):
        expect(labels[page]).to_have_text("Live · v2")
    expect(owner.get_by_test_id("make-latest-live")).to_have_count(0)

    owner.get_by_test_id("graph-active").click()  # off
    for page in (owner, editor, viewer):
        expect(labels[page]).to_have_count(0)
    expect(editor.get_by_test_id("graph-active")).to_have_attribute("data-state", "unchecked")

    # On again from the owner's graph list (a tab not in the room).
    listing = contexts[0].new_page()
    listing.goto(f"{nodeflow_server.url}/")
    listing.get_by_test_id("user-menu").click()  # the team's graphs (a new tab starts in the personal workspace)
    listing.get_by_test_id(f"workspace-{workspace_name(nodeflow_server, team.workspace_id)}").click()
    switch = listing.get_by_test_id("graph-active-Live together")
    expect(switch).to_have_attribute("data-state", "unchecked")
    switch.click()
    expect(switch).to_have_attribute("data-state", "checked")
    for page in (owner, editor, viewer):
        expect(labels[page]).to_have_text("Live · v2")
    editor.get_by_test_id("graph-active").click()  # off in an editor: the list's switch follows
    expect(switch).to_have_attribute("data-state", "unchecked")
    expect(labels[owner]).to_have_count(0)
    assert nodeflow_server.log.read_text().count(DISCONNECTED) == warnings, tail(nodeflow_server.log)
    for context in contexts:
        context.close()


def test_the_inspector_shows_the_selected_node_again_after_a_reconnect(browser, nodeflow_server: Server) -> None:
    team = make_team(nodeflow_server, [])
    graph_id = team.graph("Reconnected", GRAPH)
    context = team.context(browser, team.owner)
    page = context.new_page()
    routes = _route_events(page)
    page.goto(f"{nodeflow_server.url}/graph/{graph_id}")
    page.wait_for_function(f"{CANVAS} && {CANVAS}.rev() > 0")
    select(page, "Check", "conditional")
    commit(page, "field-value", "kept")
    loads = page.evaluate(f"{CANVAS}.rev()")

    routes[-1].close()  # the websocket drops; the page connects again, which loads the graph again
    page.wait_for_function(f"{CANVAS}.rev() > {loads}")
    expect(page.get_by_test_id("inspector-form-conditional")).to_be_visible()
    expect(page.get_by_test_id("field-value")).to_have_value("kept")
    commit(page, "field-value", "after the reconnect")  # the form works: the edit reaches the room
    expect(page.get_by_test_id("inline-Check-value")).to_have_value("after the reconnect")
    assert len(routes) >= 2, "the websocket did not reconnect"
    context.close()


HOOK_GRAPH = {
    "nodes": [
        {"id": "hook", "type": "webhook-trigger", "name": "Hook", "position": {"x": 0, "y": 0},
         "data": {"auth": "header"}},  # its token fields show only for an auth mode that uses them
        {"id": "check", "type": "conditional", "name": "Check", "position": {"x": 320, "y": 0}},
    ],
    "edges": [],
}


def test_a_secret_being_typed_keeps_its_text_through_others_edits(browser, nodeflow_server: Server) -> None:
    team = make_team(nodeflow_server, ["editor"])
    graph_id = team.graph("Secret typing", HOOK_GRAPH)
    contexts = [team.context(browser, m) for m in (team.owner, team.members[0])]
    owner, editor = (open_graph(c, nodeflow_server, graph_id) for c in contexts)
    for page in (owner, editor):
        select(page, "Hook", "webhook-trigger")

    secret = owner.get_by_test_id("field-auth_secret")
    secret.fill("half a tok")  # typed, not left yet
    commit(editor, "field-auth_name", "X-Other")  # the same node, another field
    expect(owner.get_by_test_id("field-auth_name")).to_have_value("X-Other")
    commit(editor, "inline-Check-value", "elsewhere")  # another node
    expect(owner.get_by_test_id("inline-Check-value")).to_have_value("elsewhere")
    expect(secret).to_have_value("half a tok")

    secret.press("End")
    secret.type("en")
    secret.press("Enter")  # left: stored (sealed), and the text leaves the page
    expect(secret).to_have_attribute("data-secret-set", "true")
    expect(secret).to_have_value("")
    expect(editor.get_by_test_id("field-auth_secret")).to_have_attribute("data-secret-set", "true")
    for context in contexts:
        context.close()


RANDOM_EDITS = """
async ([count, seed, mine, types]) => {
  // A person's 50 random edits, as fast as gestures go: add a node, set a parameter or move a node.
  let state = seed;
  const rand = (n) => { state = (state * 1103515245 + 12345) % 2147483648; return state % n; };
  const canvas = window.__nodeflowCanvas;
  const done = [];
  for (let i = 0; i < count; i++) {
    const kind = ["add", "parameter", "move"][rand(3)];
    const target = mine[rand(mine.length)];
    if (kind === "add") {
      canvas.send("onAdd", { type: types[rand(types.length)], position: { x: 2000 + seed % 97 * 10 + i * 7, y: i * 30 } });
    } else if (kind === "parameter") {
      canvas.send("onParameter", { id: target.id, parameter: target.parameter, value: `${seed}-${i}` });
    } else {
      canvas.send("onMove", { moves: [{ id: target.id, position: { x: i * 3, y: seed % 1000 + i } }] });
    }
    done.push([kind, target.id, target.parameter, i]);
    await new Promise((r) => setTimeout(r, rand(40)));
  }
  return done;
}
"""


def test_fifty_random_edits_each_from_two_people_at_once_all_end_up_stored(browser, nodeflow_server: Server) -> None:
    nodes = [{"id": f"c{i}", "type": "conditional", "name": f"C{i}", "position": {"x": i * 300.0, "y": 0}}
             for i in range(6)]
    team = make_team(nodeflow_server, ["editor"])
    graph_id = team.graph("Fifty each", {"nodes": nodes, "edges": []})
    contexts = [team.context(browser, m) for m in (team.owner, team.members[0])]
    pages = [open_graph(c, nodeflow_server, graph_id) for c in contexts]
    # Different parameters of the same nodes (the owner's `field`, the editor's `value`), and each moves
    # its own half of the nodes: every edit leaves a trace the stored graph must hold.
    plans = [([{"id": n["id"], "parameter": "field"} for n in nodes[:3]] + [{"id": "c0", "parameter": "field"}], 11),
             ([{"id": n["id"], "parameter": "value"} for n in nodes[3:]] + [{"id": "c3", "parameter": "value"}], 23)]
    types = ["conditional", "prompt-template", "edit-fields"]
    handles = [page.evaluate_handle(f"(a) => ({RANDOM_EDITS})(a)", [50, seed, mine, types])
               for page, (mine, seed) in zip(pages, plans)]
    done = [h.json_value() for h in handles]  # both ran concurrently in their own browser contexts
    assert [len(d) for d in done] == [50, 50]

    adds = sum(kind == "add" for d in done for kind, *_ in d)
    expected_params: dict[tuple[str, str], str] = {}
    expected_moves: dict[str, tuple[float, float]] = {}
    for (mine, seed), edits in zip(plans, done):
        for kind, target, parameter, i in edits:
            if kind == "parameter":
                expected_params[(target, parameter)] = f"{seed}-{i}"
            elif kind == "move":
                expected_moves[target] = (i * 3.0, seed % 1000 + i * 1.0)
    total = len(nodes) + adds
    for page in pages:
        page.wait_for_function(f"{CANVAS}.nodeCount() === {total}", timeout=30_000)
        page.wait_for_function(f"{CANVAS}.lastSeq() === 100", timeout=30_000)
    pages[0].wait_for_function(
        "() => document.querySelector('[data-testid=\"save-status\"]')?.textContent.startsWith('Saved')",
        timeout=30_000)

    graph, _ = stored(nodeflow_server, graph_id)
    by_id = {n["id"]: n for n in graph.graph["nodes"]}
    assert len(by_id) == total
    for (target, parameter), value in expected_params.items():
        assert by_id[target]["data"][parameter] == value, (target, parameter)
    for target, (x, y) in expected_moves.items():
        assert (by_id[target]["position"]["x"], by_id[target]["position"]["y"]) == (x, y), target
    # Both tabs show the stored values (`value` is drawn inline on the canvas; `field` only in the inspector).
    for page in pages:
        for (target, parameter), value in expected_params.items():
            if parameter == "value":
                expect(page.get_by_test_id(f"inline-{by_id[target]['name']}-value")).to_have_value(value)
    for context in contexts:
        context.close()


REDIS_URL = redis_database(6)


@pytest.fixture(scope="module")
def redis_server(artifacts_dir: Path) -> Iterator[Server]:
    """A second server with its state in Redis: `reflex run --env prod` then starts several backend workers.
    It builds into a web folder of its own: the session's server keeps serving its build (and port)."""
    web = artifacts_dir / "coedit-redis-web"
    _seed_web_dir(web)
    env = {"REFLEX_REDIS_URL": REDIS_URL, "REFLEX_WEB_WORKDIR": str(web)}
    with run_server(artifacts_dir / "coedit-redis", extra_env=env) as server:
        yield server


def worker_of(page) -> str:
    page.get_by_test_id("worker").wait_for(state="attached")
    page.wait_for_function("() => document.querySelector('[data-testid=\"worker\"]')?.dataset.pid")
    return page.get_by_test_id("worker").get_attribute("data-pid")


def test_two_people_on_different_workers_edit_together_through_redis(browser, redis_server: Server) -> None:
    team = make_team(redis_server, ["editor"])
    graph_id = team.graph("Across workers", GRAPH)
    first_context = team.context(browser, team.owner)
    first = open_graph(first_context, redis_server, graph_id)
    first_pid = worker_of(first)
    # Each websocket lands on one worker; open the second person's tab until it lands on another one.
    contexts = [first_context]
    for _ in range(12):
        contexts.append(team.context(browser, team.members[0]))
        second = open_graph(contexts[-1], redis_server, graph_id)
        if worker_of(second) != first_pid:
            break
    second_pid = worker_of(second)
    assert second_pid != first_pid, f"every tab landed on worker {first_pid}"

    second.get_by_test_id("palette-node-conditional").click()
    node(first, "Conditional").wait_for()
    commit(first, "inline-Check-value", "from the first worker")
    expect(second.get_by_test_id("inline-Check-value")).to_have_value("from the first worker")
    commit(second, "inline-Conditional-value", "from the second worker")
    expect(first.get_by_test_id("inline-Conditional-value")).to_have_value("from the second worker")
    # The editor may have several tabs open (those that landed on the first worker): still one chip for them,
    # and none of their tabs shows a chip for themselves.
    # The owner opens a second tab too: one chip for them as well.
    editor_chip, owner_chip = (f"presence-{initials(p.name)}" for p in (team.members[0], team.owner))
    owner_again = open_graph(first_context, redis_server, graph_id)
    expect(second.get_by_test_id(owner_chip)).to_have_count(1)
    expect(second.get_by_test_id(editor_chip)).to_have_count(0)
    for page in (first, owner_again):
        expect(page.get_by_test_id(editor_chip)).to_have_count(1)
        expect(page.get_by_test_id(owner_chip)).to_have_count(0)
    # The edits were handled where each tab's websocket is (each edit records its worker's pid).
    assert (worker_of(first), worker_of(second)) == (first_pid, second_pid)
    first.wait_for_function(
        "() => document.querySelector('[data-testid=\"save-status\"]')?.textContent.startsWith('Saved')")
    graph, _ = stored(redis_server, graph_id)
    values = {n["name"]: n.get("data", {}).get("value") for n in graph.graph["nodes"]}
    assert values["Check"] == "from the first worker" and values["Conditional"] == "from the second worker"
    for context in contexts:
        context.close()
