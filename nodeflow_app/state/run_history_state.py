"""The run history panel and test runs of the open graph: re-run, run to here, pins, stop and approve (SPEC 5, 14).

Its own state class, apart from the graph: the browser gets short display strings (`runs`, `nodes`);
a test run streams its node statuses to the canvas through RunViewState from one background handler
that takes the lock only to apply a batch (~every 40 ms). Any run of the graph (a test run, a chat
answer, a CLI run, in this process or another) can be stopped, and a paused one approved or rejected
from its approval card; an answered run that executes nowhere goes on here, streamed like a test run.
Store calls run in a thread: a big run (thousands of node records, MBs of outputs) takes tens to hundreds of ms
to read and format, and on the event loop every other tab and every run (they run on that loop) waited.
"""

from __future__ import annotations

import dataclasses
from contextlib import aclosing
from typing import Any

import reflex as rx

from nodeflow_app.state.page_threads import off_loop
from nodeflow_app import routes
from nodeflow_app.state.access import current

from nodeflow_app.runs.live import step_batches
from nodeflow_app.runs.service import RunRefused, approval_payload, run_service
from nodeflow_app.runs.view import approval_cards, canvas_steps, node_rows, pretty, run_row
from nodeflow_app.state.editor_state import EditorState
from nodeflow_app.state.run_view_state import RunViewState
from nodeflow_app.state.access import acts_on_graph, requires, still_checked


class RunHistoryState(rx.State):
    """Runs of the open graph, the chosen run's nodes, the pin editor, and whether a test run is going on."""

    panel_open: bool = False
    runs: list[dict[str, str]] = []
    run_id: str = ""
    run: dict[str, str] = {}  # the chosen run's row (run_row)
    nodes: list[dict[str, str]] = []  # the chosen run's nodes (node_rows, plus child_url / child_count)
    parent: dict[str, str] = {}  # the chosen run's calling run (label, url) when a graph started it
    pinned: dict[str, bool] = {}  # node id -> True: the canvas marks them
    running: bool = False
    has_run: bool = False  # the graph has a run (its toolbar button says Re-run, else Run)
    pin_node_id: str = ""  # the node whose pin is being edited ("" when the editor is closed)
    pin_node_name: str = ""
    pin_text: str = ""
    pin_error: str = ""
    approvals: list[dict[str, str]] = []  # the chosen run's paused nodes: node_id, name, prompt, detail
    approval_options: dict[str, list[str]] = {}  # node id -> the answers its card offers
    approval_note: str = ""

    _graph_id: str = ""
    _outputs: dict[str, Any] = {}  # the chosen run's outputs by node id (to pre-fill a pin)
    _steps: list[dict[str, Any]] = []  # the chosen run for the canvas (canvas_steps)

    # Loading -----------------------------------------------------------------------------------

    @rx.event
    @requires("view")
    async def load(self):
        """on_load of the editor: another graph forgets the previous one's runs and run view."""
        graph_id = routes.page_graph_id(self.router)
        if graph_id != self._graph_id:
            self._graph_id = graph_id
            await self._choose(None)
            self.runs, self.running, self.has_run = [], False, False
            view = await self.get_state(RunViewState)
            view._start_live("", label="")
        await self._load_pins()
        await self._note_runs()
        asked = str(routes.page_args(self.router).get("run") or "")  # /graph/<id>?run=<run id>: open that run
        if asked:
            self.panel_open = True
        if self.panel_open:
            await self._refresh()
        if asked:
            await self._choose(asked)
            if not self.run_id:  # a link to a run pruned since (or of another graph)
                return rx.toast.warning(f"Run {asked[:12]} is not kept any more: finished runs are pruned after "
                                        "a while (NODEFLOW_RUNS_MAX_AGE_DAYS, NODEFLOW_RUNS_MAX_PER_GRAPH)")
            view = await self.get_state(RunViewState)  # and on the canvas, like "Open on canvas"
            view._show_nodes(self.run_id, self._steps, f"Run {self.run_id[:6]} · {self.run.get('status', '')}")

    @rx.event
    @requires("view")
    async def toggle_panel(self):
        self.panel_open = not self.panel_open
        if self.panel_open:
            await self._refresh()

    @rx.event
    @requires("view")
    async def refresh(self):
        """The refresh button, and the chat after each answer (its run joins the history and the inspector's
        input and output of the last run)."""
        await self._note_runs()
        await (await self.get_state(EditorState))._after_run(self._graph_id)
        if not self.panel_open:
            return
        await self._refresh()
        if self.run_id:
            await self._choose(self.run_id)

    @rx.event
    @requires("view")
    async def select_run(self, run_id: str):
        await self._choose(run_id)

    @rx.event
    @requires("view")
    async def open_on_canvas(self):
        if not self.run_id:
            return
        view = await self.get_state(RunViewState)
        view._show_nodes(self.run_id, self._steps, f"Run {self.run_id[:6]} · {self.run.get('status', '')}")

    # Test runs ---------------------------------------------------------------------------------

    @rx.event
    @requires("edit")
    def rerun(self):
        return RunHistoryState.test_run("")

    @rx.event
    @requires("edit")
    def run_selected(self, node_id: str):
        """The inspector's Run to here. (Bound to `test_run` itself, a click filled its `payload` with the mouse
        event, which the trigger then gave out, and later runs reused as the last payload.)"""
        return RunHistoryState.test_run(node_id)

    @rx.event
    @requires("edit")
    def run_to_here(self, payload: dict[str, Any]):
        """The canvas's play button on a node."""
        return RunHistoryState.test_run(str(payload.get("id") or ""))

    @rx.event(background=True)
    @requires("edit")
    async def test_run(self, node_id: str, payload: Any = None):
        """Save pending edits, run the stored graph (all of it, or up to `node_id`), stream statuses to the canvas.

        `payload` is the trigger's (e.g. the test message typed for a Chat Start); None: the last one used."""
        async with self:
            graph_id = await self._begin()
        if graph_id is None:
            return
        try:
            run = await off_loop(_start, graph_id, node_id, payload)
        except RunRefused as error:
            async with self:
                self.running = False
            return rx.toast.error(f"Nothing ran: {error}")
        target = run.plan.nodes.get(node_id)
        return await self._follow(run, run.events(), f"Run to {target.node.name}" if target else "Test run")

    async def _follow(self, run: Any, events: Any, label: str):
        """Drive `run` (its `events`) from this background handler, showing its steps on the canvas."""
        async with self:
            self.has_run = True
            view = await self.get_state(RunViewState)
            view._start_live(run.run_id, label)
        async with aclosing(step_batches(run, events)) as batches:
            async for ops in batches:
                async with self:
                    view = await self.get_state(RunViewState)
                    view._apply_steps(ops)
        async with self:  # the reads in a thread, under the lock: a page load meanwhile cannot change the graph
            self.running = False
            await (await self.get_state(EditorState))._after_run(self._graph_id)
            if self.panel_open:
                await self._refresh()
                await self._choose(run.run_id)
        if run.status == "failed":
            return rx.toast.error(run.error or "The run failed")

    async def _begin(self) -> str | None:
        """Under the lock: the graph to run, after saving the editor's unsaved edits (None: nothing to run)."""
        if self.running or not still_checked(self._graph_id):
            return None
        editor = await self.get_state(EditorState)
        if not await editor._save_pending_edits(self._graph_id):
            return None
        self.running = True
        return self._graph_id

    # Stop and approve (any run, wherever it executes) --------------------------------------------

    @rx.event
    @requires("edit")
    async def stop_run(self):
        """The Stop button of a running (or paused) run."""
        if not self.run_id:
            return
        stopped = await off_loop(run_service().stop, self.run_id)  # flushes and reads the run's owner
        await self._after_control()
        return rx.toast.info("Stopping the run" if stopped else "This run is not going on")

    @rx.event
    @requires("view")
    def set_approval_note(self, note: str):
        self.approval_note = note

    @rx.event(background=True)
    @requires("edit")
    async def answer(self, node_id: str, decision: str):
        """An approval card's button: the run goes on where it executes, else here (streamed to the canvas)."""
        async with self:
            run_id, note = self.run_id, self.approval_note.strip() or None
            if run_id and not still_checked(self._graph_id):  # the run chosen is of the graph of this page
                return rx.toast.error("Not answered: the page changed meanwhile.")
        if not run_id:
            return
        try:
            run = await off_loop(run_service().answer, run_id, node_id, decision, note, _decider())
        except RunRefused as error:
            async with self:
                await self._after_control()
            return rx.toast.error(f"Not answered: {error}")
        async with self:
            self.approval_note = ""
            if run is None:  # a live run (here or in another process) took the answer
                await self._after_control()
                return rx.toast.success(f"Answered {decision}: the run goes on")
            self.running = True
        payload = approval_payload(decision, note, _decider())
        return await self._follow(run, run.resume(node_id, payload), f"Run {run.run_id[:6]} · {decision}")

    async def _after_control(self) -> None:
        if self.panel_open:
            await self._refresh()
        if self.run_id:
            await self._choose(self.run_id)

    # Pins ----------------------------------------------------------------------------------------

    @rx.event
    @requires("edit")
    async def edit_pin(self, node_id: str):
        """Open the pin editor with the node's pin, else its outputs in the chosen run."""
        row = next((n for n in self.nodes if n["node_id"] == node_id), None)
        pins = await off_loop(run_service().pinned, self._graph_id)
        value = pins.get(node_id, self._outputs.get(node_id))
        self.pin_node_id, self.pin_node_name = node_id, row["name"] if row else node_id
        text = await off_loop(pretty, value, limit=10**9)  # whole: an output can be megabytes
        self.pin_text, self.pin_error = text or "{}", ""

    @rx.event
    @requires("edit")
    def set_pin_text(self, text: str):
        self.pin_text = text

    @rx.event
    @requires("view")
    def close_pin(self):
        self._close_pin()

    @rx.event
    @requires("edit")
    async def save_pin(self):
        try:  # reads the stored graph to check the pin against it, then writes it
            await off_loop(run_service().pin_text, self._graph_id, self.pin_node_id, self.pin_text)
        except RunRefused as error:
            self.pin_error = str(error)
            return
        name = self.pin_node_name
        self._close_pin()
        await self._after_pins_changed()
        return rx.toast.success(f"Pinned: test runs use this data for {name}")

    @rx.event
    @requires("edit")
    async def unpin(self, node_id: str):
        await off_loop(run_service().unpin, self._graph_id, node_id)
        await self._after_pins_changed()

    # Internals -----------------------------------------------------------------------------------

    async def _refresh(self) -> None:
        self.runs = await off_loop(_run_rows, self._graph_id) if self._graph_id else []

    async def _choose(self, run_id: str | None) -> None:
        """Show run `run_id`; none (None, gone, or another graph's): no run chosen."""
        chosen = await off_loop(_chosen, run_id, self._graph_id, set(self.pinned)) if run_id else None
        shown = chosen or _Chosen()
        self.run_id = run_id if chosen else ""
        self.run, self.nodes, self.parent = shown.run, shown.nodes, shown.parent
        self.approvals, self.approval_options = shown.approvals, shown.approval_options
        self._outputs, self._steps = shown.outputs, shown.steps

    async def _note_runs(self) -> None:
        if self._graph_id and not self.has_run:
            self.has_run = await off_loop(_has_runs, self._graph_id)

    def _close_pin(self) -> None:
        self.pin_node_id, self.pin_error = "", ""

    async def _load_pins(self) -> None:
        pins = await off_loop(run_service().pinned, self._graph_id) if self._graph_id else {}
        self.pinned = {node_id: True for node_id in pins}

    async def _after_pins_changed(self) -> None:
        await self._load_pins()
        self.nodes = [{**n, "pinned": "pinned" if n["node_id"] in self.pinned else ""} for n in self.nodes]


@dataclasses.dataclass
class _Chosen:
    """The chosen run as the panel shows it (empty: none chosen)."""

    run: dict[str, str] = dataclasses.field(default_factory=dict)
    nodes: list[dict[str, str]] = dataclasses.field(default_factory=list)
    parent: dict[str, str] = dataclasses.field(default_factory=dict)
    approvals: list[dict[str, str]] = dataclasses.field(default_factory=list)
    approval_options: dict[str, list[str]] = dataclasses.field(default_factory=dict)
    outputs: dict[str, Any] = dataclasses.field(default_factory=dict)
    steps: list[dict[str, Any]] = dataclasses.field(default_factory=list)


def _chosen(run_id: str, graph_id: str, pinned: set[str]) -> _Chosen | None:
    """Run `run_id` of `graph_id` with its nodes and links, read and formatted (in a thread); None: no such run."""
    service = run_service()
    stored = service.get_run(run_id)
    if stored is None or stored["graph_id"] != graph_id:
        return None
    cards = approval_cards(stored)
    children = service.child_links(run_id)
    return _Chosen(
        run=run_row(stored),
        nodes=[{**row, "child_url": children.get(row["node_id"], {}).get("url", ""),
                "child_count": children.get(row["node_id"], {}).get("count", "")}
               for row in node_rows(stored, pinned)],
        parent=service.parent_link(stored),
        approvals=[{k: v for k, v in card.items() if k != "options"} for card in cards],
        approval_options={card["node_id"]: card["options"] for card in cards},
        outputs={n["node_id"]: n.get("outputs") for n in stored["nodes"]},
        steps=canvas_steps(stored),
    )


def _run_rows(graph_id: str) -> list[dict[str, str]]:
    """The run list of `graph_id` (in a thread)."""
    return [run_row(r) for r in run_service().list_runs(graph_id)]


def _has_runs(graph_id: str) -> bool:
    return bool(run_service().list_runs(graph_id, limit=1))


def _start(graph_id: str, node_id: str, payload: Any = None):
    service = run_service()
    return service.run_to(graph_id, node_id, payload) if node_id else service.rerun(graph_id, payload)


def _decider() -> str:
    """Who answers an approval: the signed-in caller's name (the access check resolved them)."""
    user = current().user
    return user.name if user else "someone"


acts_on_graph(RunHistoryState)
