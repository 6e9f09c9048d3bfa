"""ratings: players' OpenSkill ratings per game kind, the games they were folded from, and
pinned threads (the ロビー's guide)

Revision ID: 0019_ratings
Revises: 0018_thread_dat_key

``ratings`` holds one row per (user, kind): the Plackett–Luce mu and sigma, games and wins.
``rated_games`` notes every finished game the ratings took in (or passed over: a game with
bots, or with fewer than two rated players), at the game's version, so that a game changed
after its end is folded again. Both are derived data: ``bbsgm ratings --rebuild`` makes them
again from the finished games (docs/ratings.md). ``pinned_threads`` lists the threads a board
shows first (docs/forum.md).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019_ratings"
down_revision: str | None = "0018_thread_dat_key"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "ratings",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("mu", sa.Float(), nullable=False),
        sa.Column("sigma", sa.Float(), nullable=False),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("wins", sa.Integer(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_ratings_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ratings")),
        sa.UniqueConstraint("user_id", "kind", name="uq_ratings_user_kind"),
    )
    op.create_index("ix_ratings_kind", "ratings", ["kind"])
    op.create_table(
        "rated_games",
        sa.Column("game_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("excluded", sa.String(length=16), nullable=True),
        sa.Column("rated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["game_id"],
            ["games.id"],
            name=op.f("fk_rated_games_game_id_games"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("game_id", name=op.f("pk_rated_games")),
    )
    op.create_index("ix_rated_games_kind", "rated_games", ["kind"])
    op.create_table(
        "pinned_threads",
        sa.Column("thread_id", sa.Integer(), nullable=False),
        sa.Column("purpose", sa.String(length=32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["thread_id"],
            ["threads.id"],
            name=op.f("fk_pinned_threads_thread_id_threads"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("thread_id", name=op.f("pk_pinned_threads")),
        sa.UniqueConstraint("purpose", name=op.f("uq_pinned_threads_purpose")),
    )


def downgrade() -> None:
    op.drop_table("pinned_threads")
    op.drop_index("ix_rated_games_kind", table_name="rated_games")
    op.drop_table("rated_games")
    op.drop_index("ix_ratings_kind", table_name="ratings")
    op.drop_table("ratings")
