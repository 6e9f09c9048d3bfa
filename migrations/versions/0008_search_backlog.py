"""search (SQLite): new posts are indexed after their commit, not inside it

Revision ID: 0008_search_backlog
Revises: 0007_last_seq

The ``fts_posts_insert`` trigger made every post's transaction tokenise the post into trigrams
and write a new FTS5 segment at its commit: about a fifth of a command post's time, under the
one write lock. Posts are now indexed in batches by
``app.archive.search.index_backlog`` — every post with an id above ``fts_posts_done.last_id`` —
which the server runs in the background and every search runs first, so a search still finds
every post committed before it.

The update trigger puts a post back into the index only when the indexer has passed it (a
post shown again before it was indexed is picked up by the indexer). Post ids only grow:
bbsgm never deletes a post, and SQLite's rowids are handed out in commit order because one
writer runs at a time.

PostgreSQL: nothing changes (its GIN index is kept by the database).
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0008_search_backlog"
down_revision: str | None = "0007_last_seq"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

POSTS_UPDATE_TRIGGER = """CREATE TRIGGER fts_posts_update
    AFTER UPDATE OF body, hidden_at ON posts
    BEGIN
        DELETE FROM fts_posts WHERE rowid = old.id;
        INSERT INTO fts_posts(rowid, body) SELECT new.id, new.body
            WHERE new.hidden_at IS NULL
            AND new.id <= (SELECT last_id FROM fts_posts_done);
    END"""

# 0004_search's triggers, for the downgrade.
OLD_POSTS_INSERT_TRIGGER = """CREATE TRIGGER fts_posts_insert AFTER INSERT ON posts
    WHEN new.hidden_at IS NULL
    BEGIN
        INSERT INTO fts_posts(rowid, body) VALUES (new.id, new.body);
    END"""
OLD_POSTS_UPDATE_TRIGGER = """CREATE TRIGGER fts_posts_update
    AFTER UPDATE OF body, hidden_at ON posts
    BEGIN
        DELETE FROM fts_posts WHERE rowid = old.id;
        INSERT INTO fts_posts(rowid, body) SELECT new.id, new.body WHERE new.hidden_at IS NULL;
    END"""


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    op.execute("DROP TRIGGER fts_posts_insert")
    op.execute("DROP TRIGGER fts_posts_update")
    op.execute(
        "CREATE TABLE fts_posts_done (one INTEGER PRIMARY KEY CHECK (one = 1), "
        "last_id INTEGER NOT NULL)"
    )
    # Every post so far went through the insert trigger.
    op.execute(
        "INSERT INTO fts_posts_done (one, last_id) SELECT 1, COALESCE(max(id), 0) FROM posts"
    )
    op.execute(POSTS_UPDATE_TRIGGER)


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    op.execute(
        "INSERT INTO fts_posts(rowid, body) SELECT id, body FROM posts "
        "WHERE id > (SELECT last_id FROM fts_posts_done) AND hidden_at IS NULL"
    )
    op.execute("DROP TRIGGER fts_posts_update")
    op.execute("DROP TABLE fts_posts_done")
    op.execute(OLD_POSTS_INSERT_TRIGGER)
    op.execute(OLD_POSTS_UPDATE_TRIGGER)
