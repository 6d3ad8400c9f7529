"""What the canvas shows of a run is filled by the server (chat, Runs panel), never by the browser: RunViewState's
fillers are private, so a forged event naming one is no handler at all (a forged `show_nodes` with a list of
texts crashed it). The browser may only clear it."""

from __future__ import annotations

from nodeflow_app.state.run_view_state import RunViewState

FILLERS = ("start_live", "apply_steps", "show_blocks", "show_nodes")


def test_the_browser_can_call_no_filler_only_clear():
    for name in FILLERS:
        assert name not in RunViewState.event_handlers, f"{name} is an event the browser can send"
        assert f"_{name}" not in RunViewState.event_handlers
    assert "clear" in RunViewState.event_handlers


def test_the_private_fillers_still_fill_the_view():
    view = RunViewState(_reflex_internal_init=True)
    view._show_nodes("r1", [{"node_id": "a", "status": "completed", "outputs": {"output": 1, "other": None}},
                            {"node_id": "b", "status": "failed", "error": "x" * 400}], "Run r1")
    assert view.statuses == {"a": "completed", "b": "failed"} and view.ports == {"a": ["output"]}
    assert len(view.errors["b"]) == 300 and view.label == "Run r1"
    view._start_live("r2")
    assert (view.run_id, view.label, view.statuses) == ("r2", "Live run", {})
