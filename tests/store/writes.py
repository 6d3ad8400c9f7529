"""Which run and node rows a RunStore writes, for tests of what reaches the database and how often."""

from __future__ import annotations

from sqlalchemy import event

from nodeflow_app.store.runs import RunStore


def recorded_writes(store: RunStore) -> list[tuple[str, str]]:
    """(table, status) of every run and node row `store` writes from now on ("run update" for a status update)."""
    writes: list[tuple[str, str]] = []
    upsert_runs, upsert_nodes = store._upsert_runs, store._upsert_nodes

    def runs(conn, rows):
        writes.extend(("run", row["status"]) for row in rows)
        upsert_runs(conn, rows)

    def nodes(conn, rows):
        writes.extend(("node", row["status"]) for row in rows)
        upsert_nodes(conn, rows)

    def update(conn, cursor, statement, parameters, context, executemany):
        if statement.startswith("UPDATE") and statement.split()[1].split(".")[-1].strip('"') == "run":
            writes.append(("run update", ""))

    store._upsert_runs, store._upsert_nodes = runs, nodes
    event.listen(store.engine, "before_cursor_execute", update)
    return writes
