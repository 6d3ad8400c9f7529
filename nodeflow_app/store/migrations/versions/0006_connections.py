"""Named HTTP and database connections of a workspace, encrypted at rest (HTTP Request, Database Query).

Revision ID: 0006_connections
Revises: 0005_chat_owners
"""

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0006_connections"
down_revision = "0005_chat_owners"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "connection",
        sa.Column("workspace_id", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("name", sqlmodel.sql.sqltypes.AutoString(length=120), nullable=False),
        sa.Column("kind", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("secret", sa.Text(), nullable=False),
        sa.Column("updated_at", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("workspace_id", "name"),
    )


def downgrade() -> None:
    op.drop_table("connection")
