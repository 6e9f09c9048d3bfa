"""search (SQLite): the posts' index moves to a file of its own beside the database

Revision ID: 0015_search_file
Revises: 0014_state_lz4

The indexer's batches wrote ``fts_posts`` in the database's own file, so each took the write
lock every post needs, and every post of that moment waited for it: about 8 % of the posts a
busy evening could post. The posts' index is now
``fts_posts`` in ``<database>-search`` (``app.archive.search.SearchFile``), which the server
makes and fills from the first post when it first indexes: its own transactions lock only
that file.

What stays in the database, for that file's indexer:

- ``fts_changes``: a row for every post changed (``body`` or ``hidden_at`` updated, or the
  post deleted) by the trigger ``fts_changes_update`` / ``fts_changes_delete``; the indexer
  indexes those posts again as they are now (one hidden: out of the index).
- ``fts_source``: a random token naming this database; the search file notes the token of the
  database it was made from (with the ``created_at`` of its last post and the post of its
  last change, which tell a restored backup of this same database apart), and one made from
  another is built again instead of answering with another database's posts.

Thread titles keep their index (``fts_threads``) and its triggers in the database: a title is
written once per thread, not once per post. PostgreSQL: nothing changes (its GIN index is kept
by the database).
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence

from alembic import op

revision: str = "0015_search_file"
down_revision: str | None = "0014_state_lz4"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

CHANGES_TRIGGERS = (
    """CREATE TRIGGER fts_changes_update AFTER UPDATE OF body, hidden_at ON posts
    BEGIN
        INSERT INTO fts_changes (post_id) VALUES (new.id);
    END""",
    """CREATE TRIGGER fts_changes_delete AFTER DELETE ON posts
    BEGIN
        INSERT INTO fts_changes (post_id) VALUES (old.id);
    END""",
)

# 0008_search_backlog's (and 0004_search's delete trigger), for the downgrade.
OLD_POSTS_TRIGGERS = (
    """CREATE TRIGGER fts_posts_update
    AFTER UPDATE OF body, hidden_at ON posts
    BEGIN
        DELETE FROM fts_posts WHERE rowid = old.id;
        INSERT INTO fts_posts(rowid, body) SELECT new.id, new.body
            WHERE new.hidden_at IS NULL
            AND new.id <= (SELECT last_id FROM fts_posts_done);
    END""",
    """CREATE TRIGGER fts_posts_delete AFTER DELETE ON posts
    BEGIN
        DELETE FROM fts_posts WHERE rowid = old.id;
    END""",
)


def upgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    op.execute("DROP TRIGGER fts_posts_update")
    op.execute("DROP TRIGGER fts_posts_delete")
    op.execute("DROP TABLE fts_posts")
    op.execute("DROP TABLE fts_posts_done")
    # Ids only grow (no AUTOINCREMENT needed: no row is ever deleted), in commit order.
    op.execute("CREATE TABLE fts_changes (id INTEGER PRIMARY KEY, post_id INTEGER NOT NULL)")
    op.execute(
        "CREATE TABLE fts_source (one INTEGER PRIMARY KEY CHECK (one = 1), token TEXT NOT NULL)"
    )
    op.execute(f"INSERT INTO fts_source (one, token) VALUES (1, '{secrets.token_hex(16)}')")
    for statement in CHANGES_TRIGGERS:
        op.execute(statement)


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    op.execute("DROP TRIGGER fts_changes_update")
    op.execute("DROP TRIGGER fts_changes_delete")
    op.execute("DROP TABLE fts_changes")
    op.execute("DROP TABLE fts_source")
    op.execute("CREATE VIRTUAL TABLE fts_posts USING fts5(body, tokenize='trigram')")
    op.execute(
        "INSERT INTO fts_posts(rowid, body) SELECT id, body FROM posts WHERE hidden_at IS NULL"
    )
    op.execute(
        "CREATE TABLE fts_posts_done (one INTEGER PRIMARY KEY CHECK (one = 1), "
        "last_id INTEGER NOT NULL)"
    )
    op.execute(
        "INSERT INTO fts_posts_done (one, last_id) SELECT 1, COALESCE(max(id), 0) FROM posts"
    )
    for statement in OLD_POSTS_TRIGGERS:
        op.execute(statement)
