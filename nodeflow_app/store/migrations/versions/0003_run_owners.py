"""Runs: who started them, their context (the chat moves there), their owner process and heartbeat;
node checkpoints (For Each progress); stop and answer requests between processes (run_request).

Revision ID: 0003_run_owners
Revises: 0002_accounts
"""

import json

import sqlalchemy as sa
import sqlmodel
from alembic import op

from nodeflow_app.store.migrations import schema

revision = "0003_run_owners"
down_revision = "0002_accounts"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('run_request',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('run_id', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('kind', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('node_id', sqlmodel.sql.sqltypes.AutoString(), nullable=True),
    sa.Column('payload_json', sa.Text(), nullable=True),
    sa.Column('created_at', sa.Float(), nullable=False),
    sa.Column('handled_at', sa.Float(), nullable=True),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('run_request', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_run_request_handled_at'), ['handled_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_run_request_run_id'), ['run_id'], unique=False)

    with op.batch_alter_table('node_run', schema=schema()) as batch_op:
        batch_op.add_column(sa.Column('checkpoint_json', sa.Text(), nullable=True))

    with op.batch_alter_table('run', schema=schema()) as batch_op:
        batch_op.add_column(sa.Column('started_by', sqlmodel.sql.sqltypes.AutoString(), nullable=True))
        batch_op.add_column(sa.Column('context_json', sa.Text(), nullable=True))
        batch_op.add_column(sa.Column('owner', sqlmodel.sql.sqltypes.AutoString(), nullable=True))
        batch_op.add_column(sa.Column('heartbeat_at', sa.Float(), nullable=True))

    # A run's chat moves into its opaque context ({"conversation": chat_id}), where the kernel hands it to nodes.
    run = sa.Table("run", sa.MetaData(), sa.Column("id"), sa.Column("chat_id"), sa.Column("context_json"))
    bind = op.get_bind()
    for run_id, chat_id in bind.execute(sa.select(run.c.id, run.c.chat_id).where(run.c.chat_id.is_not(None))).all():
        bind.execute(run.update().where(run.c.id == run_id).values(context_json=json.dumps({"conversation": chat_id})))
    with op.batch_alter_table('run', schema=schema()) as batch_op:
        batch_op.drop_index(batch_op.f('ix_run_chat_id'))
        batch_op.drop_column('chat_id')


def downgrade() -> None:
    with op.batch_alter_table("run", schema=schema()) as batch_op:
        batch_op.add_column(sa.Column("chat_id", sqlmodel.sql.sqltypes.AutoString(), nullable=True))
        batch_op.create_index(batch_op.f("ix_run_chat_id"), ["chat_id"], unique=False)
        for column in ("heartbeat_at", "owner", "context_json", "started_by"):
            batch_op.drop_column(column)
    with op.batch_alter_table("node_run", schema=schema()) as batch_op:
        batch_op.drop_column("checkpoint_json")
    op.drop_table("run_request")
