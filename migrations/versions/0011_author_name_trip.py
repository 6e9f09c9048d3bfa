"""posts.author_name holds the 名前欄 with its tripcode: VARCHAR(32) → VARCHAR(64)

A post shows a name of up to 32 characters and, with a key, `` ◆`` and a trip of up to 12
(``名前 ◆XXXXXXXXXXXX``, app/forum/names.py): 46 characters, more than the 32 the column had.

Revision ID: 0011_author_name_trip
Revises: 0010_card_registry
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011_author_name_trip"
down_revision: str | None = "0010_card_registry"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

WIDE, NARROW = 64, 32


# PostgreSQL: a plain ALTER COLUMN TYPE (widening a varchar rewrites nothing). SQLite has no
# ALTER COLUMN, and a batch operation would rebuild the posts table and lose its full-text
# triggers; it never enforces a VARCHAR length either, so only the declared type in the
# table's schema text changes, in place — SQLite's documented procedure for a change that
# leaves the stored rows as they are (https://sqlite.org/lang_altertable.html, "writable
# schema"): the column keeps its TEXT affinity, and no row, index or trigger is touched.


def _sqlite_declared_length(length: int) -> None:
    bind = op.get_bind()
    (sql,) = bind.exec_driver_sql(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'posts'"
    ).one()
    declared = re.compile(r'(\bauthor_name"?\s+)VARCHAR\(\d+\)', re.IGNORECASE)
    changed, count = declared.subn(rf"\g<1>VARCHAR({length})", sql)
    if count != 1:
        raise RuntimeError(f"posts.author_name not found once in the schema of posts: {sql}")
    (version,) = bind.exec_driver_sql("PRAGMA schema_version").one()
    bind.exec_driver_sql("PRAGMA writable_schema = ON")
    try:
        bind.exec_driver_sql(
            "UPDATE sqlite_master SET sql = ? WHERE type = 'table' AND name = 'posts'",
            (changed,),
        )
        bind.exec_driver_sql(f"PRAGMA schema_version = {int(version) + 1}")
    finally:
        bind.exec_driver_sql("PRAGMA writable_schema = OFF")
    (check,) = bind.exec_driver_sql("PRAGMA quick_check").one()
    if check != "ok":
        raise RuntimeError(f"the database is not well after the change: {check}")


def upgrade() -> None:
    if op.get_bind().dialect.name == "sqlite":
        _sqlite_declared_length(WIDE)
        return
    op.alter_column(
        "posts",
        "author_name",
        existing_type=sa.String(length=NARROW),
        type_=sa.String(length=WIDE),
        existing_nullable=False,
    )


def downgrade() -> None:
    """Back to 32: a longer name keeps its first 32 characters (its trip is cut)."""
    if op.get_bind().dialect.name == "sqlite":
        op.execute(
            f"UPDATE posts SET author_name = substr(author_name, 1, {NARROW}) "
            f"WHERE length(author_name) > {NARROW}"
        )
        _sqlite_declared_length(NARROW)
        return
    op.alter_column(
        "posts",
        "author_name",
        existing_type=sa.String(length=WIDE),
        type_=sa.String(length=NARROW),
        existing_nullable=False,
        postgresql_using=f"left(author_name, {NARROW})",
    )
