"""The editor's activation switch and a webhook's "Listen for test event" (SPEC 6).

Switching on saves the editor's unsaved edits first, then makes the stored version live; the toolbar shows
which version is live. That version is the room's (`GraphRoom.live_version`), not the tab's: whoever switches, in
whichever tab (or the graph list), every tab with the graph open shows it at once (state/live_rooms.py).
Listening is a background handler: it records a listener in the database (any worker may receive the call), then
looks for the call a few times a second, taking the state lock only to show what came.
"""

from __future__ import annotations

import asyncio
import json
import time

import reflex as rx

from nodeflow_app.state.page_threads import off_loop
from nodeflow_app import routes
from nodeflow_app.state.access import current, requires, still_checked
from nodeflow_app.state.editor_state import EditorState
from nodeflow_app.state.live_rooms import show_live
from nodeflow_app.state.run_history_state import RunHistoryState
from nodeflow_app.store.triggers import trigger_store
from nodeflow_app.triggers.activation import ActivationRefused, activation
from nodeflow_app.triggers.webhooks import hook_id

LISTEN_S = 120.0  # how long "Listen for test event" waits
POLL_S = 0.3


class TriggerState(rx.State):
    listening_to: str = ""  # the webhook node listened for ("" when not listening)
    heard: str = ""  # the test call's payload as pretty JSON
    heard_run: str = ""

    @rx.event
    @requires("view")
    async def load(self):
        """on_load of the editor (EditorState.load_graph has the room read which version is live)."""
        self.listening_to = self.heard = self.heard_run = ""

    @rx.event
    @requires("edit")
    async def set_active(self, on: bool):
        if not isinstance(on, bool):
            return rx.toast.error("The active switch is on or off")
        return await self._make_live() if on else await self._switch_off()

    @rx.event
    @requires("edit")
    async def make_latest_live(self):
        """"Make vN live" beside the Live badge: saved edits run only once activated again (docs/triggers.md), so
        this saves what is unsaved and makes the newest stored version live, as switching on does."""
        return await self._make_live()

    async def _make_live(self):
        graph_id = routes.page_graph_id(self.router)
        editor = await self.get_state(EditorState)
        if not await editor._save_pending_edits(graph_id):
            return rx.toast.error("Not activated: the graph could not be saved (see its issues).")
        try:
            version = await off_loop(activation().activate, graph_id)
        except ActivationRefused as refused:  # a refused new version leaves the live one running
            return rx.toast.error(f"Not activated: {refused}")
        show_live(graph_id, current().workspace_id, version)
        return rx.toast.success(f"Active: version {version} is live")

    async def _switch_off(self):
        graph_id = routes.page_graph_id(self.router)
        await off_loop(activation().deactivate, graph_id)
        show_live(graph_id, current().workspace_id, 0)
        return rx.toast.success("Inactive")

    @rx.event(background=True)
    @requires("edit")
    async def listen(self, node_id: str):
        """Wait for the next call of the selected webhook's test address; show its payload and test run."""
        async with self:
            graph_id = routes.page_graph_id(self.router)
            editor = await self.get_state(EditorState)
            if not still_checked(graph_id) or not await editor._save_pending_edits(graph_id):
                return
            self.listening_to, self.heard, self.heard_run = node_id, "", ""
        hook = hook_id(graph_id, node_id)
        store = trigger_store()
        await off_loop(store.listen, hook, graph_id, node_id, LISTEN_S)
        deadline = time.monotonic() + LISTEN_S
        call = None
        while time.monotonic() < deadline:
            async with self:
                if self.listening_to != node_id:
                    return  # stopped, or another node is listened for
            call = await off_loop(store.test_listener, hook)
            if call is None or call.called:
                break
            await asyncio.sleep(POLL_S)
        heard = await off_loop(json.dumps, call.payload, indent=2, default=str) if call and call.called else ""
        async with self:
            self.listening_to = ""
            if call is None or not call.called:
                return rx.toast.info("No test call came in; listen again when you are ready.")
            self.heard = heard  # (formatted above, outside the lock and off the loop: up to 1 MB of payload)
            self.heard_run = call.run_id or ""
        # The test run joins the run panel: as an event, checked against the graph that panel keeps (called here,
        # it showed the runs of whatever graph the tab's panel kept, one its person may no longer open).
        return RunHistoryState.refresh

    @rx.event
    @requires("edit")
    async def stop_listening(self):
        graph_id = routes.page_graph_id(self.router)
        if self.listening_to and graph_id:
            await off_loop(trigger_store().stop_listening, hook_id(graph_id, self.listening_to))
        self.listening_to = ""
