"""card_holdings: each account's collection of 掲示板進行カードゲーム cards (app/gm/collections.py,
docs/cards.md "Collections")

One row per (user, card): how it came (starter / own / given), when, by whom, from which
registry post, and when it was released (the row stays, so the starter cards are given once).
At most 9 normal and 3 magic cards are held (R 「f:規定枚数 ← 9」, 「3枚以下」): the limit is the
registry's, not the table's. No rows are written here: an account's starter cards are given at
its first need.

Revision ID: 0021_card_collections
Revises: 0020_bot_seats
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0021_card_collections"
down_revision = "0020_bot_seats"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


# A new table only: no batch operation touches an existing table.


def upgrade() -> None:
    op.create_table(
        "card_holdings",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=32), nullable=False),
        sa.Column("name_key", sa.String(length=64), nullable=False),
        sa.Column("how", sa.String(length=16), nullable=False),
        sa.Column("obtained_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("given_by", sa.String(length=32), nullable=False),
        sa.Column("post_number", sa.Integer(), nullable=True),
        sa.Column("released_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_card_holdings_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_card_holdings")),
        sa.UniqueConstraint("user_id", "name_key", name="uq_card_holdings_user_card"),
    )


def downgrade() -> None:
    op.drop_table("card_holdings")
