"""card_versions: the card registry of 掲示板進行カードゲーム (app/gm/cards.py, docs/cards.md)

Every version of every card — proposed in the registry thread, approved or rejected by a site
admin — one row each, unique by (name, version). The starter pool is seeded at start-up
(``bbsgm migrate`` / ``serve``), not here: it is house content read from its data file.

Revision ID: 0010_card_registry
Revises: 0009_board_at
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010_card_registry"
down_revision: str | None = "0009_board_at"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


# A new table and its index only: no batch operation touches an existing table (on SQLite a
# batch rebuild of posts would lose its full-text triggers).


def upgrade() -> None:
    op.create_table(
        "card_versions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=32), nullable=False),
        sa.Column("name_key", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("cost", sa.Integer(), nullable=False),
        sa.Column("attack", sa.Integer(), nullable=False),
        sa.Column("durability", sa.Integer(), nullable=False),
        sa.Column("abilities", sa.JSON(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("author_id", sa.Integer(), nullable=True),
        sa.Column("author_name", sa.String(length=32), nullable=False),
        sa.Column("post_id", sa.Integer(), nullable=True),
        sa.Column("post_number", sa.Integer(), nullable=True),
        sa.Column("decided_by", sa.String(length=32), nullable=True),
        sa.Column("decided_post_number", sa.Integer(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["author_id"],
            ["users.id"],
            name=op.f("fk_card_versions_author_id_users"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["post_id"],
            ["posts.id"],
            name=op.f("fk_card_versions_post_id_posts"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_card_versions")),
        sa.UniqueConstraint("name", "version", name="uq_card_versions_name_version"),
    )
    op.create_index(op.f("ix_card_versions_name_key"), "card_versions", ["name_key"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_card_versions_name_key"), table_name="card_versions")
    op.drop_table("card_versions")
