"""Alembic environment: runs on the connection NodeFlow hands over (see nodeflow_app.store.migrations)."""

from alembic import context
from sqlmodel import SQLModel

from nodeflow_app.store import models  # noqa: F401 - registers the tables for autogenerate


def include_object(obj, name, type_, reflected, compare_to):
    """Autogenerate compares NodeFlow's tables only: Agno's (agno_*) belong to Agno."""
    return not (type_ == "table" and name.startswith("agno_"))


connection = context.config.attributes.get("connection")
if connection is None:  # `alembic` run by hand: use the app's database
    from nodeflow_app.store.db import make_engine

    connection = make_engine().connect()
# PostgreSQL tests (and installs) may translate the default schema: the version table goes there too.
schema = (connection.get_execution_options().get("schema_translate_map") or {}).get(None)
context.configure(connection=connection, target_metadata=SQLModel.metadata, include_object=include_object,
                  render_as_batch=True, version_table_schema=schema)
with context.begin_transaction():
    context.run_migrations()
