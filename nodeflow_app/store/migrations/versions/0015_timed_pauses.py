"""A paused node may go on by itself at a time (a Wait longer than a minute): `node_run.resume_at`, indexed, so
every worker finds the due ones with one query (nodeflow_app/runs/timers.py).

Revision ID: 0015_timed_pauses
Revises: 0014_known_sign_in_addresses
"""

import sqlalchemy as sa
from alembic import op

from nodeflow_app.store.migrations import schema

revision = "0015_timed_pauses"
down_revision = "0014_known_sign_in_addresses"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("node_run", sa.Column("resume_at", sa.Float(), nullable=True), schema=schema())
    op.create_index(op.f("ix_node_run_resume_at"), "node_run", ["resume_at"], unique=False, schema=schema())


def downgrade() -> None:
    op.drop_index(op.f("ix_node_run_resume_at"), table_name="node_run", schema=schema())
    op.drop_column("node_run", "resume_at", schema=schema())
