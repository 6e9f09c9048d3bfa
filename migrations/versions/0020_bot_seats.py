"""bot seats: game_players.bot marks a seat a bot plays (BOT / ボット, ``"bots": N``), and
games.rated_with_bots the GM's choice to rate a game with bots all the same

A bot's seat has no account; before this column a seat without one that nobody was kicked from
was taken for a bot's. Seats stored before are marked from that guess, so a game that had one
stays out of the ratings. Every game stored before was made without the choice: not rated with
bots (docs/bots.md).

Revision ID: 0020_bot_seats
Revises: 0019_ratings
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0020_bot_seats"
down_revision: str | None = "0019_ratings"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SEATS = sa.table(
    "game_players",
    sa.column("user_id", sa.Integer),
    sa.column("kicked", sa.Boolean),
    sa.column("bot", sa.Boolean),
)


# Plain ALTER TABLE on both databases (as 0016_post_mail): a column with a server default.


def upgrade() -> None:
    op.add_column(
        "game_players",
        sa.Column("bot", sa.Boolean(), nullable=False, server_default=sa.false()),
    )
    op.add_column(
        "games",
        sa.Column("rated_with_bots", sa.Boolean(), nullable=False, server_default=sa.false()),
    )
    op.get_bind().execute(
        SEATS.update().where(SEATS.c.user_id.is_(None), SEATS.c.kicked.is_(False)).values(bot=True)
    )


def downgrade() -> None:
    op.drop_column("games", "rated_with_bots")
    op.drop_column("game_players", "bot")
