"""tables: since when a seat is waited for, a "your turn" notice's turn, read notifications

``game_players.waiting_since`` is kept with every save of a game (app/notify/notices.py) and
indexed with the seat's user: the header's badge, /me and ``GET /api/me/turns`` read the
tables awaiting someone by it, without reading any game's state. Games saved before this are
counted from their next move. ``notifications.turn`` keys a "your turn" notice on its game's
turn (app/gm/turns.notice_turn) so a turn is told once; ``notifications.read_at`` is set when
the reader marks a game's notices read on /notifications.

Revision ID: 0022_tables
Revises: 0021_card_collections
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0022_tables"
down_revision: str | None = "0021_card_collections"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "game_players", sa.Column("waiting_since", sa.DateTime(timezone=True), nullable=True)
    )
    op.create_index("ix_game_players_user_waiting", "game_players", ["user_id", "waiting_since"])
    op.add_column("notifications", sa.Column("turn", sa.String(length=64), nullable=True))
    op.add_column("notifications", sa.Column("read_at", sa.DateTime(timezone=True), nullable=True))
    op.create_index("ix_notifications_user_read", "notifications", ["user_id", "read_at"])
    op.create_index("ix_notifications_game_turn", "notifications", ["game_id", "turn"])


def downgrade() -> None:
    op.drop_index("ix_notifications_game_turn", table_name="notifications")
    op.drop_index("ix_notifications_user_read", table_name="notifications")
    op.drop_column("notifications", "read_at")
    op.drop_column("notifications", "turn")
    op.drop_index("ix_game_players_user_waiting", table_name="game_players")
    op.drop_column("game_players", "waiting_since")
