"""Templates a workspace's members save from their graphs (New graph lists them beside the built-in ones).

Revision ID: 0010_workspace_templates
Revises: 0009_triggers
"""

import sqlalchemy as sa
import sqlmodel
from alembic import op

from nodeflow_app.store.migrations import schema

revision = "0010_workspace_templates"
down_revision = "0009_triggers"
branch_labels = None
depends_on = None

_text = sqlmodel.sql.sqltypes.AutoString


def upgrade() -> None:
    op.create_table(
        "graph_template",
        sa.Column("id", _text(length=32), nullable=False),
        sa.Column("workspace_id", _text(length=32), nullable=False),
        sa.Column("name", _text(length=120), nullable=False),
        sa.Column("description", _text(length=500), nullable=False),
        sa.Column("graph_json", sa.Text(), nullable=False),
        sa.Column("created_by", _text(length=32), nullable=True),
        sa.Column("created_at", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(["workspace_id"], ["workspace.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        schema=schema(),
    )
    op.create_index(op.f("ix_graph_template_workspace_id"), "graph_template", ["workspace_id"], unique=False,
                    schema=schema())


def downgrade() -> None:
    op.drop_index(op.f("ix_graph_template_workspace_id"), table_name="graph_template", schema=schema())
    op.drop_table("graph_template", schema=schema())
