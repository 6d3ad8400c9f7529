"""Importing a graph of the older runtime: the migration report in a dialog, saved only when confirmed.

The graph list's Import hands a file here when `is_legacy_graph` recognises it; nothing is stored until
the person has seen what became what and clicks "Import converted graph".
"""

from __future__ import annotations

import dataclasses
import json
import logging
from pathlib import PurePath
from typing import Any

import reflex as rx

from nodeflow_app.state.page_threads import off_loop
from nodeflow_app.state.access import current

from nodeflow_app import routes
from nodeflow_app.legacy import LegacyFormatError, Migration, MigrationReport, is_legacy_graph, migrate_graph
from nodeflow_app.store.graphs import graph_store
from nodes._registry import default_registry
from nodeflow_app.state.access import requires

log = logging.getLogger(__name__)


@dataclasses.dataclass
class ReportRow:
    kind: str  # mapped | unmapped | warning | error
    where: str
    text: str


def legacy_migration(text: str, file_name: str) -> Migration | None:
    """The migration of `text` if it is a graph of the older runtime; None for anything else."""
    try:
        raw = json.loads(text)
    except (ValueError, RecursionError):  # not JSON, a whole number too long, nested too deep: the import says so
        return None
    if not is_legacy_graph(raw):
        return None
    report = MigrationReport()
    try:
        return migrate_graph(raw, default_registry(), fallback_name=PurePath(file_name).stem or None)
    except LegacyFormatError as error:
        report.add("error", "graph", str(error))
    except Exception as error:  # noqa: BLE001 - a bug met by a hostile file: the dialog says so, the handler lives on
        log.exception("legacy import: migrating %s failed", file_name)
        report.add("error", "graph", f"{file_name} could not be converted: {type(error).__name__}: {error}")
    return Migration(None, report)


class LegacyImportState(rx.State):
    open: bool = False
    file_name: str = ""
    rows: list[ReportRow] = []
    ok: bool = False
    _graph_text: str = ""  # the converted graph, kept on the server until the person confirms

    @rx.var
    def summary(self) -> str:
        counts = {kind: sum(row.kind == kind for row in self.rows) for kind in ("mapped", "unmapped", "warning", "error")}
        if counts["error"]:
            return f"{counts['error']} error(s): the older runtime would not run this graph either; nothing was stored."
        return (f"{counts['mapped']} converted, {counts['unmapped']} not mapped, {counts['warning']} warning(s). "
                "Nothing is stored until you import it.")

    @requires("edit")
    def _show(self, file_name: str, migration: Migration) -> None:
        """Fill the dialog with the report (the caller's handler returns; the dialog opens). Private: a public
        method would be an event the browser may call, with any JSON in place of the Migration."""
        self.file_name = file_name
        self.rows = [ReportRow(line.kind, line.where, line.text) for line in migration.report.lines]
        self.ok = migration.graph is not None
        self._graph_text = json.dumps(migration.graph) if migration.graph is not None else ""
        self.open = True

    @rx.event
    @requires("view")
    def set_open(self, is_open: bool) -> None:
        self.open = is_open
        if not is_open:
            self._graph_text = ""

    @rx.event
    @requires("edit")
    async def confirm(self) -> Any:
        """Store the converted graph and open it in the editor."""
        text, workspace = self._graph_text, current().workspace_id
        if not text:
            return None
        try:  # in a thread: checking and writing the graph held the event loop, so every tab and run waited
            summary, issues = await off_loop(
                lambda: graph_store().import_json(text, default_registry(), workspace_id=workspace))
        except Exception as error:  # noqa: BLE001 - a handler answers with a message, never crashes
            log.exception("legacy import: could not store the converted graph")
            return rx.toast.error(f"Could not import the graph: {error}")
        if summary is None:
            return rx.toast.error("Could not import the graph: " + "; ".join(str(i) for i in issues))
        self.open, self._graph_text = False, ""
        return rx.redirect(routes.editor_url(summary.id))
