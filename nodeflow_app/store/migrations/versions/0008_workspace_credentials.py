"""Provider credentials belong to a workspace: the key becomes (workspace_id, provider); credentials stored
install-wide before join the install owner's personal workspace ("" while no owner exists: the owner adopts
them at the first start).

Revision ID: 0008_workspace_credentials
Revises: 0007_child_runs
"""

import sqlalchemy as sa
import sqlmodel
from alembic import op

from nodeflow_app.store.migrations import schema

revision = "0008_workspace_credentials"
down_revision = "0007_child_runs"
branch_labels = None
depends_on = None

FIELDS = ("provider", "secret", "has_api_key", "has_base_url", "updated_at")


def _columns(*, with_workspace: bool) -> list[sa.Column]:
    workspace = [sa.Column("workspace_id", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False)]
    return [*(workspace if with_workspace else []),
            sa.Column("provider", sqlmodel.sql.sqltypes.AutoString(), nullable=False),
            sa.Column("secret", sa.Text(), nullable=False),
            sa.Column("has_api_key", sa.Boolean(), nullable=False),
            sa.Column("has_base_url", sa.Boolean(), nullable=False),
            sa.Column("updated_at", sa.Float(), nullable=False)]


def _table(name: str, *, with_workspace: bool) -> sa.Table:
    # A Table (not raw SQL) follows the connection's schema_translate_map (PostgreSQL tests and installs).
    names = (("workspace_id",) if with_workspace else ()) + FIELDS
    return sa.Table(name, sa.MetaData(), *(sa.Column(n) for n in names))


def _owner_workspace(bind) -> str:
    users = sa.Table("user_account", sa.MetaData(), sa.Column("id"), sa.Column("is_admin"), sa.Column("created_at"))
    workspaces = sa.Table("workspace", sa.MetaData(), sa.Column("id"), sa.Column("personal_of"))
    return bind.execute(sa.select(workspaces.c.id).join(users, users.c.id == workspaces.c.personal_of)
                        .where(users.c.is_admin.is_(True)).order_by(users.c.created_at).limit(1)).scalar() or ""


def _copy(source: str, target: str, *, to_workspace: bool) -> None:
    """Copy the rows (new tables instead of ALTERs: a primary key changes, and SQLite cannot alter one)."""
    bind = op.get_bind()
    rows = bind.execute(sa.select(_table(source, with_workspace=not to_workspace))).mappings().all()
    if to_workspace:
        owner = _owner_workspace(bind)
        values = [{**row, "workspace_id": owner} for row in rows]
    else:  # one credential per provider: the owner's (or the unassigned one)
        owner, chosen = _owner_workspace(bind), {}
        for row in rows:
            if row["workspace_id"] in (owner, "") or row["provider"] not in chosen:
                chosen[row["provider"]] = {k: row[k] for k in FIELDS}
        values = list(chosen.values())
    if values:
        bind.execute(_table(target, with_workspace=to_workspace).insert(), values)


def upgrade() -> None:
    op.create_table("credential_new", *_columns(with_workspace=True),
                    sa.PrimaryKeyConstraint("workspace_id", "provider"))
    _copy("credential", "credential_new", to_workspace=True)
    op.drop_table("credential")
    op.rename_table("credential_new", "credential", schema=schema())


def downgrade() -> None:
    op.create_table("credential_old", *_columns(with_workspace=False), sa.PrimaryKeyConstraint("provider"))
    _copy("credential", "credential_old", to_workspace=False)
    op.drop_table("credential")
    op.rename_table("credential_old", "credential", schema=schema())
