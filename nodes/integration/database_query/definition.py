from nodeflow_app.contract import NodeDefinition, Parameter, Socket

# A statement holds one of a few shared threads while it runs (nodeflow_app/sql/run.py): minutes, not hours.
MAX_TIMEOUT_S = 300

definition = NodeDefinition(
    id="database-query",
    name="Database Query",
    description=(
        "Run one SQL statement against a database connection (PostgreSQL, MySQL / MariaDB, or a SQLite file "
        "in the data folder). Values are bound as :name parameters, never written into the SQL. Read-only "
        "unless writes are allowed. Outputs {rows, columns, row_count, truncated, affected}."
    ),
    category="integration",
    icon="database",
    inputs=(Socket(id="input", label="Input", side="left"),),
    parameters=(
        Parameter(id="connection", label="Connection", default="", required=True, placeholder="connection name",
                  description="A stored database connection (postgres, mysql or sqlite)."),
        # No expressions in the SQL itself: values go through `parameters`, so they can never become SQL.
        Parameter(id="query", label="SQL", type="code", default="SELECT 1 AS one", expressions=False,
                  description="One statement; write :name where a parameter's value goes."),
        Parameter(id="parameters", label="Parameters", type="key_value", default=[],
                  description="Name and value per row (expressions allowed), bound to :name in the SQL."),
        Parameter(id="allow_writes", label="Allow writes", type="boolean", default=False,
                  description="Off runs the statement in a read-only transaction: INSERT, UPDATE, DDL fail."),
        Parameter(id="row_limit", label="Row limit", type="int", default=1000, min=1, max=100_000,
                  description="At most this many rows are read; `truncated` says whether more were left."),
        Parameter(id="timeout", label="Timeout (s)", type="int", default=30, min=1, max=MAX_TIMEOUT_S,
                  description="Bounds the whole call (connecting, the statement): the database stops it then."),
    ),
    outputs=(Socket(id="output", label="Result", side="right",
                    description="{rows (a list of objects), columns, row_count, truncated, affected}"),),
    side_effects=True,
)
