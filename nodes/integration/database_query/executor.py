"""Database Query: check the parameters, run the statement in a thread (nodeflow_app/sql), output the rows."""

from __future__ import annotations

from typing import Any

from nodes._helpers import key_value_pairs, to_number
from nodeflow_app.contract import ExecutionResult, FlowContext, NodeError
from nodeflow_app.connections import DATABASE_KINDS, DEFAULT_WORKSPACE, WORKSPACE_SERVICE, connection_for
from nodeflow_app.sql import bind_names, run_checked
from nodeflow_app.sql.values import to_bind
from nodes.integration.database_query.definition import MAX_TIMEOUT_S


class DatabaseQueryExecutor:
    node_type = "database-query"

    async def execute(self, data: dict[str, Any], inputs: dict[str, Any], ctx: FlowContext) -> ExecutionResult:
        connection = connection_for(ctx.services, data.get("connection"), DATABASE_KINDS)
        sql = data.get("query")
        if not isinstance(sql, str) or not sql.strip():
            raise NodeError("parameter 'query' is empty; write the SQL statement to run")
        params = _bound(sql, data.get("parameters"))
        outcome = await run_checked(
            connection, sql, params, writable=bool(data.get("allow_writes")),
            limit=_whole(data, "row_limit", 1000, 1, 100_000), timeout=_whole(data, "timeout", 30, 1, MAX_TIMEOUT_S),
            workspace=ctx.services.get(WORKSPACE_SERVICE) or DEFAULT_WORKSPACE)
        return ExecutionResult(outputs={"output": {
            "rows": outcome.rows, "columns": outcome.columns, "row_count": len(outcome.rows),
            "truncated": outcome.truncated, "affected": outcome.affected}})


def _bound(sql: str, rows: Any) -> dict[str, Any]:
    """The parameters by name, checked against the `:name`s the SQL uses: none missing, none unused."""
    params = {name.strip(): to_bind(name, value) for name, value in key_value_pairs(rows, "parameters")}
    used = bind_names(sql)
    missing, unused = sorted(used - set(params)), sorted(set(params) - used)
    if missing:
        raise NodeError(f"the SQL uses :{', :'.join(missing)} but no parameter gives a value; add a row per name")
    if unused:
        raise NodeError(f"parameter {', '.join(map(repr, unused))} is not used in the SQL; write :{unused[0]} "
                        "where its value goes")
    return params


def _whole(data: dict[str, Any], name: str, default: int, low: int, high: int) -> int:
    raw = data.get(name)
    number = default if raw in (None, "") else to_number(raw)
    if number is None or not number.is_integer() or not low <= number <= high:
        raise NodeError(f"parameter {name!r} must be a whole number from {low} to {high}, got {raw!r}")
    return int(number)


executor = DatabaseQueryExecutor()
