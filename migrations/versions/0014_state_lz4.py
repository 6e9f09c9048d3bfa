"""PostgreSQL: a game's state is compressed with lz4, not pglz

Every command post writes the game's whole state (``games.state``, JSON: 5 KB for えいつく, about
10 KB for the card games). PostgreSQL compresses a value that large before storing it, with
pglz unless told otherwise, and pglz was half of the game row's UPDATE under the post
benchmark's card-game load: 720–730 µs a post against 340–400 µs with lz4. Only values
written from now on are compressed the new way; those stored stay readable as they are.

lz4 needs PostgreSQL 14 or later built with it (Debian's and the official packages are). A
server without it keeps pglz, which stores the same values, more slowly. SQLite: nothing
changes.

Revision ID: 0014_state_lz4
Revises: 0013_eitsuku_edition
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0014_state_lz4"
down_revision: str | None = "0013_eitsuku_edition"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _set_compression(method: str) -> None:
    # EXECUTE: before PostgreSQL 14, SET COMPRESSION is not even parsed.
    op.execute(
        f"""
        DO $$
        BEGIN
            IF current_setting('server_version_num')::integer >= 140000 THEN
                EXECUTE 'ALTER TABLE games ALTER COLUMN state SET COMPRESSION {method}';
            END IF;
        EXCEPTION WHEN feature_not_supported THEN
            NULL;  -- a server built without lz4: its default stays
        END
        $$
        """
    )


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        _set_compression("lz4")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        _set_compression("DEFAULT")
