"""games.wording: the wording of its kind's replies a game started with

Issue 43 shortened the bot's replies: the same moves are now said in fewer words. A game's
record is verified by replaying it and looking for each move's replayed text in the bot's
posts (app/archive/verify.py), which only works while the kind still words its texts as it
did when the posts were written. ``games.wording`` keeps the wording (``GameImpl.wording``) a
game started with; every game already started is marked wording 1, the texts before issue 43.
Recruiting games take the kind's wording when they start.

Revision ID: 0023_game_wording
Revises: 0022_tables
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0023_game_wording"
down_revision: str | None = "0022_tables"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

GAMES = sa.table("games", sa.column("wording", sa.Integer), sa.column("started_at", sa.DateTime))


def upgrade() -> None:
    op.add_column("games", sa.Column("wording", sa.Integer(), nullable=True))
    op.execute(GAMES.update().where(GAMES.c.started_at.is_not(None)).values(wording=1))


def downgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.drop_column("wording")
