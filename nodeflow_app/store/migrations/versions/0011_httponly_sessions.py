"""Sessions made before the session cookie was HttpOnly end: their cookie was written by the page's JavaScript,
so a script could read it until it expired. Everyone signs in once more; nothing else changes.

Revision ID: 0011_httponly_sessions
Revises: 0010_workspace_templates
"""

import sqlalchemy as sa
from alembic import op

revision = "0011_httponly_sessions"
down_revision = "0010_workspace_templates"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A Table (not raw SQL) follows the connection's schema_translate_map (PostgreSQL tests and installs).
    op.get_bind().execute(sa.Table("user_session", sa.MetaData(), sa.Column("token_hash")).delete())


def downgrade() -> None:
    pass  # ended sessions stay ended
