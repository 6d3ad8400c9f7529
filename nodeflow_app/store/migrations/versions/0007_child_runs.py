"""A run started by Execute Graph names its parent run and the parent's node (the history links them).

Revision ID: 0007_child_runs
Revises: 0006_connections
"""

import sqlalchemy as sa
import sqlmodel
from alembic import op

from nodeflow_app.store.migrations import schema

revision = "0007_child_runs"
down_revision = "0006_connections"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("run", schema=schema()) as batch_op:
        batch_op.add_column(sa.Column("parent_run_id", sqlmodel.sql.sqltypes.AutoString(), nullable=True))
        batch_op.add_column(sa.Column("parent_node_id", sqlmodel.sql.sqltypes.AutoString(), nullable=True))
        batch_op.create_index(batch_op.f("ix_run_parent_run_id"), ["parent_run_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("run", schema=schema()) as batch_op:
        batch_op.drop_index(batch_op.f("ix_run_parent_run_id"))
        batch_op.drop_column("parent_node_id")
        batch_op.drop_column("parent_run_id")
