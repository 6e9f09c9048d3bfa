"""rate limits: sliding-window counters shared by every process (app/accounts/ratelimit.py)

Revision ID: 0005_rate_limits
Revises: 0004_search
Create Date: 2026-11-23 12:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005_rate_limits"
down_revision: str | None = "0004_search"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "rate_limits",
        sa.Column("key", sa.String(length=200), nullable=False),
        sa.Column("window_start", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("hits", sa.Integer(), nullable=False),
        sa.Column("expires_at", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("key", "window_start", name=op.f("pk_rate_limits")),
    )
    with op.batch_alter_table("rate_limits", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_rate_limits_expires_at"), ["expires_at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("rate_limits", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_rate_limits_expires_at"))
    op.drop_table("rate_limits")
