"""Chats belong to the person who started them (each member sees their own chats of a graph); runs name
the person who started them.

Revision ID: 0005_chat_owners
Revises: 0004_version_authors
"""

import sqlalchemy as sa
import sqlmodel
from alembic import op

from nodeflow_app.store.migrations import schema

revision = "0005_chat_owners"
down_revision = "0004_version_authors"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("chat", schema=schema()) as batch_op:
        batch_op.add_column(sa.Column("user_id", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=True))
        batch_op.create_index(batch_op.f("ix_chat_user_id"), ["user_id"], unique=False)
    with op.batch_alter_table("run", schema=schema()) as batch_op:
        batch_op.add_column(sa.Column("started_by_user", sqlmodel.sql.sqltypes.AutoString(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("run", schema=schema()) as batch_op:
        batch_op.drop_column("started_by_user")
    with op.batch_alter_table("chat", schema=schema()) as batch_op:
        batch_op.drop_index(batch_op.f("ix_chat_user_id"))
        batch_op.drop_column("user_id")
