"""The addresses each account signed in from: from them, the account meets only the limit of its own failures
there, so a stranger failing from many addresses cannot lock it out. None is known before the next sign-in.

Revision ID: 0014_known_sign_in_addresses
Revises: 0013_sign_in_addresses
"""

import sqlalchemy as sa
import sqlmodel
from alembic import op

from nodeflow_app.store.migrations import schema

revision = "0014_known_sign_in_addresses"
down_revision = "0013_sign_in_addresses"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "known_sign_in_address",
        sa.Column("user_id", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("address", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("at", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["user_account.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("user_id", "address"),
        schema=schema(),
    )
    op.create_index(op.f("ix_known_sign_in_address_at"), "known_sign_in_address", ["at"], unique=False,
                    schema=schema())


def downgrade() -> None:
    op.drop_index(op.f("ix_known_sign_in_address_at"), table_name="known_sign_in_address", schema=schema())
    op.drop_table("known_sign_in_address", schema=schema())
