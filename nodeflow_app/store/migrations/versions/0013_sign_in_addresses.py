"""Failed sign-ins keep the client's address: the limits count per email and address, per address across all
emails, and per email across all addresses, so one address cannot try a password on every account and a
stranger cannot lock someone out from elsewhere. Attempts made before have no address (NULL).

Revision ID: 0013_sign_in_addresses
Revises: 0012_run_graph_started_index
"""

import sqlalchemy as sa
import sqlmodel
from alembic import op

from nodeflow_app.store.migrations import schema

revision = "0013_sign_in_addresses"
down_revision = "0012_run_graph_started_index"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("sign_in_attempt", schema=schema()) as batch_op:
        batch_op.add_column(sa.Column("address", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True))
        batch_op.create_index(batch_op.f("ix_sign_in_attempt_address"), ["address"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("sign_in_attempt", schema=schema()) as batch_op:
        batch_op.drop_index(batch_op.f("ix_sign_in_attempt_address"))
        batch_op.drop_column("address")
