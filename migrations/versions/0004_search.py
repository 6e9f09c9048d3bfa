"""search: a trigram full-text index over thread titles and visible posts

Revision ID: 0004_search
Revises: 0003_moderation
Create Date: 2026-11-23 10:00:00

SQLite: FTS5 tables ``fts_posts`` (rowid = posts.id) and ``fts_threads`` (rowid =
threads.id) with the trigram tokenizer (SQLite 3.34 or later), filled from the existing rows
and kept in step by triggers on insert, update (posts.body / posts.hidden_at, threads.title)
and delete. A hidden post (あぼーん) is taken out of the index and put back when it is shown
again.

PostgreSQL: the pg_trgm extension and GIN trigram indexes on ``posts.body`` (only posts that
are not hidden) and ``threads.title``.

These objects are not in the models: migrations/env.py skips names starting with ``fts_``.
A later migration that rebuilds ``posts`` or ``threads`` on SQLite (batch mode copies the
table) drops the triggers with the old table and must create them again (see
``SQLITE_TRIGGERS`` here).
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0004_search"
down_revision: str | None = "0003_moderation"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

SQLITE_TABLES = (
    "CREATE VIRTUAL TABLE fts_posts USING fts5(body, tokenize='trigram')",
    "CREATE VIRTUAL TABLE fts_threads USING fts5(title, tokenize='trigram')",
)

SQLITE_FILL = (
    "INSERT INTO fts_posts(rowid, body) SELECT id, body FROM posts WHERE hidden_at IS NULL",
    "INSERT INTO fts_threads(rowid, title) SELECT id, title FROM threads",
)

SQLITE_TRIGGERS = (
    """CREATE TRIGGER fts_posts_insert AFTER INSERT ON posts WHEN new.hidden_at IS NULL
    BEGIN
        INSERT INTO fts_posts(rowid, body) VALUES (new.id, new.body);
    END""",
    """CREATE TRIGGER fts_posts_update AFTER UPDATE OF body, hidden_at ON posts
    BEGIN
        DELETE FROM fts_posts WHERE rowid = old.id;
        INSERT INTO fts_posts(rowid, body) SELECT new.id, new.body WHERE new.hidden_at IS NULL;
    END""",
    """CREATE TRIGGER fts_posts_delete AFTER DELETE ON posts
    BEGIN
        DELETE FROM fts_posts WHERE rowid = old.id;
    END""",
    """CREATE TRIGGER fts_threads_insert AFTER INSERT ON threads
    BEGIN
        INSERT INTO fts_threads(rowid, title) VALUES (new.id, new.title);
    END""",
    """CREATE TRIGGER fts_threads_update AFTER UPDATE OF title ON threads
    BEGIN
        DELETE FROM fts_threads WHERE rowid = old.id;
        INSERT INTO fts_threads(rowid, title) VALUES (new.id, new.title);
    END""",
    """CREATE TRIGGER fts_threads_delete AFTER DELETE ON threads
    BEGIN
        DELETE FROM fts_threads WHERE rowid = old.id;
    END""",
)

POSTGRES = (
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    "CREATE INDEX fts_posts_body_trgm ON posts USING gin (body gin_trgm_ops) "
    "WHERE hidden_at IS NULL",
    "CREATE INDEX fts_threads_title_trgm ON threads USING gin (title gin_trgm_ops)",
)


def upgrade() -> None:
    dialect = op.get_bind().dialect.name
    if dialect == "sqlite":
        for statement in (*SQLITE_TABLES, *SQLITE_FILL, *SQLITE_TRIGGERS):
            op.execute(statement)
    elif dialect == "postgresql":
        for statement in POSTGRES:
            op.execute(statement)


def downgrade() -> None:
    dialect = op.get_bind().dialect.name
    if dialect == "sqlite":
        for name in (
            "fts_posts_insert",
            "fts_posts_update",
            "fts_posts_delete",
            "fts_threads_insert",
            "fts_threads_update",
            "fts_threads_delete",
        ):
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
        op.execute("DROP TABLE IF EXISTS fts_posts")
        op.execute("DROP TABLE IF EXISTS fts_threads")
    elif dialect == "postgresql":
        # pg_trgm stays: other objects may use it.
        op.execute("DROP INDEX IF EXISTS fts_posts_body_trgm")
        op.execute("DROP INDEX IF EXISTS fts_threads_title_trgm")
