"""えいつく games made before its rules' edition 2 keep edition 1

Edition 2 of えいつく's rules (docs/rules/eitsuku.md, "Editions") deals the starting budget cards
without taking them out of the piles. A game replays from its seed and its options, so every
えいつく game already stored is marked ``edition: 1`` in its options: it goes on, and replays,
by the rules it was made with. Games made from now on get the current edition by default.

Revision ID: 0013_eitsuku_edition
Revises: 0012_notify_base_url
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0013_eitsuku_edition"
down_revision: str | None = "0012_notify_base_url"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

GAMES = sa.table(
    "games",
    sa.column("id", sa.Integer),
    sa.column("kind", sa.String),
    sa.column("options", sa.JSON),
)


def _options(value: Any) -> dict[str, Any]:
    if isinstance(value, str):  # a driver that hands JSON back as text
        value = json.loads(value)
    return dict(value or {})


def upgrade() -> None:
    bind = op.get_bind()
    rows = bind.execute(sa.select(GAMES.c.id, GAMES.c.options).where(GAMES.c.kind == "eitsuku"))
    for game_id, options in list(rows):
        chosen = _options(options)
        if "edition" in chosen:
            continue
        chosen["edition"] = 1
        bind.execute(GAMES.update().where(GAMES.c.id == game_id).values(options=chosen))


def downgrade() -> None:
    bind = op.get_bind()
    rows = bind.execute(sa.select(GAMES.c.id, GAMES.c.options).where(GAMES.c.kind == "eitsuku"))
    for game_id, options in list(rows):
        chosen = _options(options)
        if chosen.pop("edition", None) == 1:
            bind.execute(GAMES.update().where(GAMES.c.id == game_id).values(options=chosen))
