"""Versions record their author (and the author's name then) and may be named in History.

Revision ID: 0004_version_authors
Revises: 0003_run_owners
"""

import sqlalchemy as sa
import sqlmodel
from alembic import op

from nodeflow_app.store.migrations import schema

revision = "0004_version_authors"
down_revision = "0003_run_owners"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("graph_version", schema=schema()) as batch_op:
        batch_op.add_column(sa.Column("author", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=True))
        batch_op.add_column(sa.Column("author_name", sqlmodel.sql.sqltypes.AutoString(length=120), nullable=True))
        batch_op.add_column(sa.Column("label", sqlmodel.sql.sqltypes.AutoString(length=120), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("graph_version", schema=schema()) as batch_op:
        for column in ("label", "author_name", "author"):
            batch_op.drop_column(column)
