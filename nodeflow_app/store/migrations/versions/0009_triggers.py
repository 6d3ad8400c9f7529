"""Activation (the graph's live version) and the tables of its triggers: webhook addresses, webhook test
listeners, and the schedule's leases (one row per fired due time).

Revision ID: 0009_triggers
Revises: 0008_workspace_credentials
"""

import sqlalchemy as sa
import sqlmodel
from alembic import op

from nodeflow_app.store.migrations import schema

revision = "0009_triggers"
down_revision = "0008_workspace_credentials"
branch_labels = None
depends_on = None

_text = sqlmodel.sql.sqltypes.AutoString


def upgrade() -> None:
    with op.batch_alter_table("graph", schema=schema()) as batch_op:
        batch_op.add_column(sa.Column("active_version", sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column("activated_at", sa.Float(), nullable=True))
        batch_op.create_index(batch_op.f("ix_graph_active_version"), ["active_version"], unique=False)
    op.create_table(
        "webhook_address",
        sa.Column("hook_id", _text(length=64), nullable=False),
        sa.Column("graph_id", _text(length=64), nullable=False),
        sa.Column("node_id", _text(length=64), nullable=False),
        sa.PrimaryKeyConstraint("hook_id"),
        schema=schema(),
    )
    op.create_index(op.f("ix_webhook_address_graph_id"), "webhook_address", ["graph_id"], unique=False, schema=schema())
    op.create_table(
        "webhook_test",
        sa.Column("hook_id", _text(length=64), nullable=False),
        sa.Column("graph_id", _text(length=64), nullable=False),
        sa.Column("node_id", _text(length=64), nullable=False),
        sa.Column("expires_at", sa.Float(), nullable=False),
        sa.Column("payload_json", sa.Text(), nullable=True),
        sa.Column("run_id", _text(length=64), nullable=True),
        sa.PrimaryKeyConstraint("hook_id"),
        schema=schema(),
    )
    op.create_table(
        "schedule_fire",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("graph_id", _text(length=64), nullable=False),
        sa.Column("node_id", _text(length=64), nullable=False),
        sa.Column("due_at", sa.Float(), nullable=False),
        sa.Column("fired_at", sa.Float(), nullable=False),
        sa.Column("owner", _text(length=160), nullable=False),
        sa.Column("run_id", _text(length=64), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("graph_id", "node_id", "due_at"),
        schema=schema(),
    )
    op.create_index(op.f("ix_schedule_fire_graph_id"), "schedule_fire", ["graph_id"], unique=False,
                    schema=schema())


def downgrade() -> None:
    op.drop_index(op.f("ix_schedule_fire_graph_id"), table_name="schedule_fire", schema=schema())
    op.drop_table("schedule_fire", schema=schema())
    op.drop_table("webhook_test", schema=schema())
    op.drop_index(op.f("ix_webhook_address_graph_id"), table_name="webhook_address", schema=schema())
    op.drop_table("webhook_address", schema=schema())
    with op.batch_alter_table("graph", schema=schema()) as batch_op:
        batch_op.drop_index(batch_op.f("ix_graph_active_version"))
        batch_op.drop_column("activated_at")
        batch_op.drop_column("active_version")
