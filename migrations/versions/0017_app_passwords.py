"""app_passwords: passwords a user makes for one client (a 専ブラ's HTTP Basic sign-in)

Made and revoked on /me, shown once; only the argon2 hash of the secret is kept.

Revision ID: 0017_app_passwords
Revises: 0016_post_mail
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017_app_passwords"
down_revision: str | None = "0016_post_mail"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "app_passwords",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("label", sa.String(length=64), nullable=False),
        sa.Column("password_hash", sa.String(length=255), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_used_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_app_passwords_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_app_passwords")),
    )
    op.create_index(op.f("ix_app_passwords_user_id"), "app_passwords", ["user_id"])


def downgrade() -> None:
    op.drop_index(op.f("ix_app_passwords_user_id"), table_name="app_passwords")
    op.drop_table("app_passwords")
