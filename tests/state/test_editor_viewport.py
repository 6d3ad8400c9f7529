"""The viewport is saved with the graph: a viewer's pan and zoom changed the shared document, and the next save
of an editor stored it."""

from __future__ import annotations

import pytest

from nodeflow_app.editor.document import GraphDocument
from nodeflow_app.runtime.graph import Graph
from nodeflow_app.state import access
from nodeflow_app.state.editor_state import EditorState


class Tab:
    def __init__(self, doc: GraphDocument):
        self._doc = doc

    async def _room(self):
        return None, None


@pytest.mark.parametrize("role, moved", [("viewer", False), ("editor", True)])
async def test_only_someone_who_may_edit_moves_the_saved_viewport(role, moved):
    doc = GraphDocument.from_graph(Graph(id="g", name="Shared"), history=False)
    before = doc.to_json().get("viewport")
    token = access._current.set(access.Access(None, "ws", role))
    try:
        await EditorState.on_viewport.fn(Tab(doc), {"x": 120.0, "y": -40.0, "zoom": 0.5})
    finally:
        access._current.reset(token)
    after = doc.to_json().get("viewport")
    assert (after != before) is moved, (before, after)
    if moved:
        assert after == {"x": 120.0, "y": -40.0, "zoom": 0.5}
