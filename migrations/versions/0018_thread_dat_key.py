"""threads.dat_key: a 2ch key that reads as the thread's creation time

BBS browsers (専ブラ) read a thread's key (``/{board}/dat/{key}.dat``) as the UNIX second the
thread was made: with the thread's id as its key they showed 1970/01/01 as its date and took a
key starting with 924 for 2ch's notice thread. Every thread, old ones too, gets the second of
its ``created_at``; two threads of one board made in the same second get the next free second
(in the order they were made). Unique per board. New threads get theirs from the model's
default (app/db/models.py ``_dat_key``).

Revision ID: 0018_thread_dat_key
Revises: 0017_app_passwords
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision: str = "0018_thread_dat_key"
down_revision: str | None = "0017_app_passwords"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_threads = sa.table(
    "threads",
    sa.column("id", sa.Integer()),
    sa.column("board_id", sa.Integer()),
    sa.column("created_at", sa.DateTime(timezone=True)),
    sa.column("dat_key", sa.BigInteger()),
)


def _second(moment: datetime) -> int:
    if moment.tzinfo is None:  # SQLite keeps no offset: the column holds UTC
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp())


def upgrade() -> None:
    # Plain ALTER TABLE (NOT NULL needs a default on SQLite; a batch operation would rebuild
    # the threads table and lose its full-text triggers). Every row is set below; the default
    # is dropped where the database can.
    op.add_column(
        "threads",
        sa.Column("dat_key", sa.BigInteger(), nullable=False, server_default="0"),
    )
    bind = op.get_bind()
    rows = bind.execute(
        sa.select(_threads.c.id, _threads.c.board_id, _threads.c.created_at).order_by(
            _threads.c.board_id, _threads.c.created_at, _threads.c.id
        )
    ).all()
    taken: dict[int, set[int]] = {}
    for thread_id, board_id, created_at in rows:
        used = taken.setdefault(board_id, set())
        key = _second(created_at)
        while key in used:
            key += 1
        used.add(key)
        bind.execute(sa.update(_threads).where(_threads.c.id == thread_id).values(dat_key=key))
    if bind.dialect.name != "sqlite":
        op.alter_column("threads", "dat_key", server_default=None)
    op.create_index("ix_threads_board_dat_key", "threads", ["board_id", "dat_key"], unique=True)


def downgrade() -> None:
    op.drop_index("ix_threads_board_dat_key", table_name="threads")
    op.drop_column("threads", "dat_key")
