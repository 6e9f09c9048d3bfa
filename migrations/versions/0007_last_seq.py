"""games.last_seq: the number of the game's last move, kept on the (locked) game row

A command post used to ask ``SELECT max(seq) FROM moves`` for the next move number; the game
row is locked for the move anyway, so the number lives there.

Revision ID: 0007_last_seq
Revises: 0006_notifications
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007_last_seq"
down_revision: str | None = "0006_notifications"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("games", schema=None) as batch_op:
        batch_op.add_column(sa.Column("last_seq", sa.Integer(), server_default="0", nullable=False))
    op.execute(
        "UPDATE games SET last_seq = COALESCE("
        "(SELECT max(moves.seq) FROM moves WHERE moves.game_id = games.id), 0)"
    )


def downgrade() -> None:
    with op.batch_alter_table("games", schema=None) as batch_op:
        batch_op.drop_column("last_seq")
