"""Baseline: the schema of NodeFlow before migrations (graphs, versions, runs, chats, credentials, pins).

Revision ID: 0001_baseline
Revises:
"""

import sqlalchemy as sa
import sqlmodel
from alembic import op

revision = "0001_baseline"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('chat',
    sa.Column('id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('graph_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('title', sqlmodel.sql.sqltypes.AutoString(length=120), nullable=False),
    sa.Column('created_at', sa.Float(), nullable=False),
    sa.Column('updated_at', sa.Float(), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index(op.f('ix_chat_graph_id'), 'chat', ['graph_id'], unique=False)
    op.create_index(op.f('ix_chat_updated_at'), 'chat', ['updated_at'], unique=False)
    op.create_table('credential',
    sa.Column('provider', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('secret', sa.Text(), nullable=False),
    sa.Column('has_api_key', sa.Boolean(), nullable=False),
    sa.Column('has_base_url', sa.Boolean(), nullable=False),
    sa.Column('updated_at', sa.Float(), nullable=False),
    sa.PrimaryKeyConstraint('provider')
    )
    op.create_table('graph',
    sa.Column('id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('name', sqlmodel.sql.sqltypes.AutoString(length=120), nullable=False),
    sa.Column('graph_json', sa.Text(), nullable=False),
    sa.Column('node_count', sa.Integer(), nullable=False),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.Float(), nullable=False),
    sa.Column('updated_at', sa.Float(), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index(op.f('ix_graph_updated_at'), 'graph', ['updated_at'], unique=False)
    op.create_table('pinned_output',
    sa.Column('graph_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('node_id', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('outputs_json', sa.Text(), nullable=False),
    sa.Column('updated_at', sa.Float(), nullable=False),
    sa.PrimaryKeyConstraint('graph_id', 'node_id')
    )
    op.create_table('run',
    sa.Column('id', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('graph_id', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('graph_version', sa.Integer(), nullable=False),
    sa.Column('graph_json', sa.Text(), nullable=False),
    sa.Column('trigger_id', sqlmodel.sql.sqltypes.AutoString(), nullable=True),
    sa.Column('payload_json', sa.Text(), nullable=True),
    sa.Column('status', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('error', sa.Text(), nullable=True),
    sa.Column('chat_id', sqlmodel.sql.sqltypes.AutoString(), nullable=True),
    sa.Column('started_at', sa.Float(), nullable=False),
    sa.Column('finished_at', sa.Float(), nullable=True),
    sa.Column('duration_ms', sa.Float(), nullable=True),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index(op.f('ix_run_chat_id'), 'run', ['chat_id'], unique=False)
    op.create_index(op.f('ix_run_graph_id'), 'run', ['graph_id'], unique=False)
    op.create_index(op.f('ix_run_started_at'), 'run', ['started_at'], unique=False)
    op.create_index(op.f('ix_run_status'), 'run', ['status'], unique=False)
    op.create_table('chat_message',
    sa.Column('id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('chat_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('parent_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True),
    sa.Column('role', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('blocks_json', sa.Text(), nullable=False),
    sa.Column('status', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('run_id', sqlmodel.sql.sqltypes.AutoString(), nullable=True),
    sa.Column('created_at', sa.Float(), nullable=False),
    sa.ForeignKeyConstraint(['chat_id'], ['chat.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_index(op.f('ix_chat_message_chat_id'), 'chat_message', ['chat_id'], unique=False)
    op.create_index(op.f('ix_chat_message_run_id'), 'chat_message', ['run_id'], unique=False)
    op.create_table('graph_version',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('graph_id', sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('graph_json', sa.Text(), nullable=False),
    sa.Column('node_count', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.Float(), nullable=False),
    sa.Column('note', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.ForeignKeyConstraint(['graph_id'], ['graph.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('graph_id', 'version')
    )
    op.create_index(op.f('ix_graph_version_graph_id'), 'graph_version', ['graph_id'], unique=False)
    op.create_table('node_run',
    sa.Column('run_id', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('node_id', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('node_type', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('node_name', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('status', sqlmodel.sql.sqltypes.AutoString(), nullable=False),
    sa.Column('inputs_json', sa.Text(), nullable=True),
    sa.Column('input_refs_json', sa.Text(), nullable=True),
    sa.Column('outputs_json', sa.Text(), nullable=True),
    sa.Column('error', sa.Text(), nullable=True),
    sa.Column('duration_ms', sa.Float(), nullable=True),
    sa.Column('sequence', sa.Integer(), nullable=False),
    sa.Column('cached', sa.Boolean(), nullable=False),
    sa.Column('wait_json', sa.Text(), nullable=True),
    sa.Column('updated_at', sa.Float(), nullable=False),
    sa.ForeignKeyConstraint(['run_id'], ['run.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('run_id', 'node_id')
    )


def downgrade() -> None:
    for table in ("node_run", "graph_version", "chat_message", "run", "pinned_output", "graph", "credential", "chat"):
        op.drop_table(table)
