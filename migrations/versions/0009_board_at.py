"""posts.board_at: the bot's reply that shows the board says after how many applied moves

The thread shows the board's picture beside such a reply (`/api/games/{id}/board.svg?at=N`);
N is counted when the reply is written, so the page needs no count of its own.

Revision ID: 0009_board_at
Revises: 0008_search_backlog
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009_board_at"
down_revision: str | None = "0008_search_backlog"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


# Plain ALTER TABLE on both databases (SQLite has DROP COLUMN since 3.35): a batch operation
# would rebuild the posts table on SQLite and lose its full-text triggers.


def upgrade() -> None:
    op.add_column("posts", sa.Column("board_at", sa.Integer(), nullable=True))


def downgrade() -> None:
    op.drop_column("posts", "board_at")
