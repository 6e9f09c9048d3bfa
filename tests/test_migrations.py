"""Migrations are the only way the schema changes: after `upgrade head` the database matches
the models exactly."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import insert, select, text
from sqlalchemy.orm import Session, load_only

from app import migrate
from app.archive.search import is_search_object
from app.config import Settings
from app.db import Database
from app.forum import service as forum
from app.models import Base, User
from tests.test_forum_service import talk


def test_models_and_migrations_agree(database: Database) -> None:
    with database.engine.connect() as conn:
        context = MigrationContext.configure(
            conn,
            opts={
                "compare_type": True,
                "include_name": lambda name, _type, _parents: not is_search_object(name),
            },
        )
        diff = compare_metadata(context, Base.metadata)
    assert diff == []


def test_search_backlog_migration_keeps_every_post_findable(tmp_path: Path) -> None:
    """0008_search_backlog (SQLite): the posts indexed by the old insert trigger count as
    indexed; going back indexes what the indexer had not reached and restores the trigger."""
    url = f"sqlite:///{tmp_path / 'backlog.db'}"
    settings = Settings(database_url=url, secret_key="k", tick_seconds=0, deliver_seconds=0)
    database = Database(url)
    try:
        migrate.upgrade(settings, database.engine, "0007_last_seq")
        with database.session() as session:
            forum.ensure_boards(session)
            # The account as 0007's users table holds it: the models know later columns.
            session.execute(
                insert(User).values(name="migrator", password_hash="-", email_notify=False)
            )
            user = session.scalars(
                select(User).options(load_only(User.id, User.name, User.is_admin))
            ).one()
            board = forum.get_board(session, "chat")
            thread, first = forum.create_thread(session, board, user, "題", "旧索引", "s")
            session.commit()
        migrate.upgrade(settings, database.engine)
        with database.session() as session:
            assert session.scalar(text("SELECT last_id FROM fts_posts_done")) == first.id
            later = talk(session, thread.id, user, "新索引")
            session.commit()
            assert _fts_ids(session) == [first.id]
        command.downgrade(migrate.alembic_config(settings, database.engine), "0007_last_seq")
        with database.session() as session:
            assert _fts_ids(session) == [first.id, later.id]
            newest = talk(session, thread.id, user, "三つ目")
            session.commit()
            assert _fts_ids(session) == [first.id, later.id, newest.id]  # the trigger again
    finally:
        database.dispose()


def _fts_ids(session: Session) -> list[int]:
    return list(session.scalars(text("SELECT rowid FROM fts_posts ORDER BY rowid")))


def test_eitsuku_games_stored_before_edition_2_keep_edition_1(tmp_path: Path) -> None:
    """0013_eitsuku_edition: every えいつく game already stored is marked edition 1 (it goes on,
    and replays, by the rules it was made with); other kinds are left alone; going back
    removes the mark."""
    from app.gm import service as gm
    from app.models import Game

    url = f"sqlite:///{tmp_path / 'edition.db'}"
    settings = Settings(database_url=url, secret_key="k", tick_seconds=0, deliver_seconds=0)
    database = Database(url)
    try:
        migrate.upgrade(settings, database.engine, "0012_notify_base_url")
        with database.session() as session:
            forum.ensure_boards(session)
            gm.ensure_game_boards(session)
            session.execute(
                insert(User).values(name="migrator", password_hash="-", email_notify=False)
            )
            user = session.scalars(select(User).options(load_only(User.id, User.name))).one()
            old = gm.create_game(session, user, "eitsuku", "旧卓", {}, "s")
            other = gm.create_game(session, user, "eleusis", "別卓", {"rounds": 2}, "s")
            session.execute(text("UPDATE games SET options = '{}' WHERE id = :id"), {"id": old.id})
            session.commit()
            ids, before = (old.id, other.id), dict(other.options)
        migrate.upgrade(settings, database.engine)
        with database.session() as session:
            stored = {g.id: g.options for g in session.scalars(select(Game))}
            assert stored[ids[0]] == {"edition": 1}
            assert stored[ids[1]] == before
        command.downgrade(migrate.alembic_config(settings, database.engine), "0012_notify_base_url")
        with database.session() as session:
            assert session.get(Game, ids[0]).options == {}  # type: ignore[union-attr]
    finally:
        database.dispose()
