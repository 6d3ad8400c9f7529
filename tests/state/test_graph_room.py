"""GraphRoom's bookkeeping without a server: patches in seq order with a log to catch up from, one save per
burst with every author, presence entries that leave with their tab."""

from __future__ import annotations

import json
import math

import pytest

from nodeflow_app.editor.document import GraphDocument
from nodeflow_app.editor.presence import person
from nodeflow_app.runtime.graph import Graph, Node
from nodeflow_app.state.graph_room import LOG_SIZE, GraphRoom, room_token
from reflex_base.utils.format import json_dumps

SELECT = [{"op": "select", "ids": []}]


def room(*node_ids: str) -> GraphRoom:
    """A room with a graph of these nodes open."""
    r = GraphRoom(_reflex_internal_init=True)
    nodes = [Node(id=node_id, type="manual-trigger", name=node_id) for node_id in node_ids]
    r._doc = GraphDocument.from_graph(Graph(id="g", name="G", nodes=nodes), history=False)
    return r


def test_patches_count_up_and_a_tab_that_missed_some_gets_them_while_the_log_has_them():
    r = room()
    for _ in range(3):
        r._publish(SELECT, "tab-a", "u1", "Ann")
    assert r.patch["seq"] == 3 and r.patch["by"] == "tab-a" and r.unsaved
    assert [seq for seq, _ in r._since(1)] == [2, 3] and r._since(3) == []
    for _ in range(LOG_SIZE + 5):
        r._publish(SELECT, "tab-b", "u2", "Bob")
    assert r._since(1) is None  # gone from the log: the tab gets the whole graph instead
    assert len(r._since(r._seq - 10)) == 10


def test_the_first_autosave_of_a_burst_claims_every_edit_and_its_authors():
    r = room()
    r._publish(SELECT, "tab-a", "u1", "Ann")
    r._publish(SELECT, "tab-b", "u2", "Bob")
    edits, authors = r._claim_save()
    assert authors == {"u1": "Ann", "u2": "Bob"} and not r.unsaved
    assert r._claim_save()[1] == {}  # a second tab's autosave finds nothing
    r._saved(edits, 7)
    assert (r.saved_version, r.save_status) == (7, "saved")
    r._publish(SELECT, "tab-a", "u1", "Ann")
    edits, authors = r._claim_save()
    r._save_failed(edits, authors)
    assert r.unsaved and r._authors == {"u1": "Ann"} and r.save_status == "error"


def test_presence_follows_tabs_in_and_out_and_drops_tabs_that_went_away():
    r = room("n1")
    r._enter(person("a", "u1", "Ann Lee"), "token-a")
    r._enter(person("b", "u2", "Bob Roe"), "token-b")
    r._select("b", ["n1"])
    r._point("b", [10.0, 20.0])
    assert [p["initials"] for p in r.people] == ["AL", "BR"] and r.people[1]["selected"] == ["n1"]
    r._enter(person("c", "u3", "Cy"), "token-c", connected={"token-a"})  # b's websocket is gone
    assert [p["id"] for p in r.people] == ["a", "c"] and r.cursors == {}
    r._leave("a")
    assert [p["id"] for p in r.people] == ["c"]


def test_a_person_with_two_tabs_has_one_face_and_keeps_it_until_their_last_tab_leaves():
    r = room()
    r._enter(person("a1", "u1", "Ann Lee"), "token-a1")
    r._enter(person("b", "u2", "Bob Roe"), "token-b")
    r._enter(person("a2", "u1", "Ann Lee"), "token-a2")  # Ann's second tab
    assert [p["id"] for p in r.people] == ["a1", "b", "a2"]  # selections and cursors stay per tab
    assert [f["initials"] for f in r.faces] == ["AL", "BR"]
    assert r.faces[0]["user"] == r.people[2]["user"] != "u1"  # a key of the account, not its id
    r._leave("a1")
    assert [f["initials"] for f in r.faces] == ["BR", "AL"]
    r._leave("a2")
    assert [f["initials"] for f in r.faces] == ["BR"]


def test_room_tokens_have_no_underscore_and_cannot_be_made_from_the_graph_id_alone(monkeypatch):
    from cryptography.fernet import Fernet

    tokens = []
    for _ in range(2):
        monkeypatch.setenv("NODEFLOW_SECRET_KEY", Fernet.generate_key().decode())
        room_token.cache_clear()
        tokens.append(room_token("ab_cd"))
    room_token.cache_clear()
    assert all(t.startswith("graphab-cd-") and "_" not in t for t in tokens)
    assert tokens[0] != tokens[1]  # another install's key, another token


def _as_the_browser_reads_it(value) -> object:
    """What a tab gets: the websocket's JSON, encoded (UTF-8) and parsed as strictly as a browser (no NaN)."""
    def refuse(constant: str):
        raise ValueError(f"{constant} is no JSON a browser parses")
    return json.loads(json_dumps(value).encode(), parse_constant=refuse)


@pytest.mark.parametrize("at", [[math.nan, 0.0], [0.0, math.inf], [-math.inf, 1.0]])
def test_a_cursor_sent_with_nan_or_infinity_reaches_no_tab(at):
    """The cursor comes from any tab's browser, a viewer's too, and goes to every tab in the room: a NaN there
    (float("nan") takes the text "nan") broke every co-editor's websocket, again on each reconnect."""
    r = room("n1")
    r._enter(person("v", "u1", "Vi Ewer"), "token-v")
    r._point("v", [10.0, 20.0])
    r._point("v", at)
    assert r.cursors == {}
    assert _as_the_browser_reads_it(r.cursors) == {}


def test_a_selection_others_see_holds_only_nodes_of_the_graph():
    """Selected ids come from the browser and go to every tab: a forged selection of made-up ids (megabytes of
    them, or a lone surrogate no websocket can encode) reached every co-editor."""
    r = room("n1", "n2")
    r._enter(person("v", "u1", "Vi Ewer"), "token-v")
    r._select("v", ["n2", "\ud800", "x" * 100_000, "n1"])
    assert r.people[0]["selected"] == ["n2", "n1"]
    assert _as_the_browser_reads_it(r.people)[0]["selected"] == ["n2", "n1"]
    many = room(*[f"n{i}" for i in range(60)])
    many._enter(person("v", "u1", "Vi Ewer"), "token-v")
    many._select("v", [f"n{i}" for i in range(60)])
    assert len(many.people[0]["selected"]) == 50
