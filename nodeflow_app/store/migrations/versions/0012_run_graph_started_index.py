"""An index on a run's graph and start: the run history lists a graph's newest runs, and pruning walks a
graph's oldest beyond the number it keeps, without reading every run of the graph. It replaces the index of
graph_id alone, which it covers (every run written maintains one index less).

Revision ID: 0012_run_graph_started_index
Revises: 0011_httponly_sessions
"""

from alembic import op

from nodeflow_app.store.migrations import schema

revision = "0012_run_graph_started_index"
down_revision = "0011_httponly_sessions"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_run_graph_id_started_at", "run", ["graph_id", "started_at"], unique=False, schema=schema())
    op.drop_index("ix_run_graph_id", table_name="run", schema=schema())


def downgrade() -> None:
    op.create_index("ix_run_graph_id", "run", ["graph_id"], unique=False, schema=schema())
    op.drop_index("ix_run_graph_id_started_at", table_name="run", schema=schema())
