"""Migrations are the only way the schema changes: after `upgrade head` the database matches
the models exactly."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import column as sa_column
from sqlalchemy import insert, inspect, select, text
from sqlalchemy import table as sa_table
from sqlalchemy.orm import Session, load_only

from app.archive.search import index_pending, is_search_object, search
from app.config import Settings
from app.db import migrate
from app.db.engine import Database
from app.db.models import Base, Post, Thread, User, utcnow
from app.forum import service as forum
from tests.conftest import _create_pg_database, _drop_pg_database


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
            user, thread, first = _thread_of_old(session, "旧索引")
            session.commit()
        migrate.upgrade(settings, database.engine, "0014_state_lz4")
        with database.session() as session:
            assert session.scalar(text("SELECT last_id FROM fts_posts_done")) == first.id
            later = _old_post(session, thread.id, user, "新索引")
            session.commit()
            assert _fts_ids(session) == [first.id]
        command.downgrade(migrate.alembic_config(settings, database.engine), "0007_last_seq")
        with database.session() as session:
            assert _fts_ids(session) == [first.id, later.id]
            newest = _old_post(session, thread.id, user, "三つ目")
            session.commit()
            assert _fts_ids(session) == [first.id, later.id, newest.id]  # the trigger again
    finally:
        database.dispose()


def _thread_of_old(session: Session, body: str) -> tuple[User, Thread, Any]:
    """The boards, an account and a thread with its first post, in a database migrated to a
    revision from 0007 on (the account as 0007's users table holds it: the models know later
    columns, so only those every such revision has are written and read)."""
    forum.ensure_boards(session)
    session.execute(insert(User).values(name="migrator", password_hash="-", email_notify=False))
    user = session.scalars(select(User).options(load_only(User.id, User.name, User.is_admin))).one()
    board = forum.get_board(session, "chat")
    now = utcnow()
    thread_id = _insert_present(
        session,
        Thread.__table__,
        {
            "board_id": board.id,
            "title": "題",
            "author_id": user.id,
            "created_at": now,
            "last_post_at": now,
            "post_count": 0,
        },
    )
    thread = session.get(Thread, thread_id, options=[load_only(Thread.id, Thread.board_id)])
    assert thread is not None
    return user, thread, _old_post(session, thread_id, user, body)


def _insert_present(session: Session, table: Any, values: dict[str, Any]) -> int:
    """A row of ``table`` with those of ``values`` whose columns the database has now."""
    present = {column["name"] for column in inspect(session.connection()).get_columns(table.name)}
    written = {name: value for name, value in values.items() if name in present}
    # The columns written, and no others: a later column's Python default (threads.dat_key)
    # must not join the INSERT either.
    only = sa_table(table.name, *(sa_column(name) for name in {"id", *written}))
    return int(session.execute(insert(only).values(written).returning(only.c.id)).scalar_one())


def _old_post(session: Session, thread_id: int, user: User, body: str) -> Any:
    """A talk post as the forum writes it, in a database of an older revision (the columns
    added since, such as ``board_at``, left out)."""
    now = utcnow()
    number = forum.reserve_numbers(session, thread_id, 1, now)
    values = forum.post_row(
        thread_id,
        author=user,
        author_name=user.name,
        body=body,
        kind="talk",
        secret="s",
        now=now,
        number=number,
    )
    return SimpleNamespace(id=_insert_present(session, Post.__table__, values), number=number)


def _fts_ids(session: Session) -> list[int]:
    return list(session.scalars(text("SELECT rowid FROM fts_posts ORDER BY rowid")))


def test_search_file_migration_keeps_every_post_findable(tmp_path: Path) -> None:
    """0015_search_file (SQLite): the posts' index leaves the database for the search file,
    which the first batch fills from the first post (a search finds every post meanwhile);
    going back makes the database's own index again, of every visible post."""
    url = f"sqlite:///{tmp_path / 'file.db'}"
    settings = Settings(database_url=url, secret_key="k", tick_seconds=0, deliver_seconds=0)
    database = Database(url)
    try:
        migrate.upgrade(settings, database.engine, "0014_state_lz4")
        with database.session() as session:
            user, thread, first = _thread_of_old(session, "移る索引")
            hidden = _old_post(session, thread.id, user, "移る隠れ")
            session.execute(
                text("UPDATE posts SET hidden_at = CURRENT_TIMESTAMP WHERE id = :id"),
                {"id": hidden.id},
            )
            session.commit()
        migrate.upgrade(settings, database.engine)
        with database.session() as session:
            names = set(session.scalars(text("SELECT name FROM sqlite_master")))
            assert {"fts_posts", "fts_posts_done", "fts_posts_update"}.isdisjoint(names)
            assert {"fts_changes", "fts_source", "fts_changes_update"} <= names
            assert len(session.scalar(text("SELECT token FROM fts_source")) or "") == 32
            assert [hit.number for hit in search(session, "移る索引").posts] == [1]
            assert [hit.number for hit in search(session, "移る隠れ").posts] == []
        assert index_pending(database) == 2
        with database.session() as session:
            assert [hit.number for hit in search(session, "移る索引").posts] == [1]
            assert [hit.number for hit in search(session, "移る隠れ").posts] == []
        command.downgrade(migrate.alembic_config(settings, database.engine), "0014_state_lz4")
        with database.session() as session:
            assert _fts_ids(session) == [first.id]
            assert session.scalar(text("SELECT last_id FROM fts_posts_done")) == hidden.id
            session.execute(
                text("UPDATE posts SET hidden_at = NULL WHERE id = :id"), {"id": hidden.id}
            )
            session.commit()
            assert _fts_ids(session) == [first.id, hidden.id]  # 0008's trigger again
    finally:
        database.dispose()


def _game_master(session: Session) -> User:
    """The boards and a user to make games with, in a database migrated to any revision from
    0012 on (only the user's columns every such revision has are read)."""
    from app.gm import service as gm

    forum.ensure_boards(session)
    gm.ensure_game_boards(session)
    session.execute(insert(User).values(name="migrator", password_hash="-", email_notify=False))
    return session.scalars(select(User).options(load_only(User.id, User.name))).one()


def test_eitsuku_games_stored_before_edition_2_keep_edition_1(tmp_path: Path) -> None:
    """0013_eitsuku_edition: every えいつく game already stored is marked edition 1 (it goes on,
    and replays, by the rules it was made with); other kinds are left alone; going back
    removes the mark."""
    from app.db.models import Game
    from app.gm import service as gm

    url = f"sqlite:///{tmp_path / 'edition.db'}"
    settings = Settings(database_url=url, secret_key="k", tick_seconds=0, deliver_seconds=0)
    database = Database(url)
    try:
        # The games are made by today's models, then the database goes back to 0012 (whose
        # tables lack the columns added since) as if they had been stored then.
        migrate.upgrade(settings, database.engine)
        with database.session() as session:
            user = _game_master(session)
            old = gm.create_game(session, user, "eitsuku", "旧卓", {}, "s")
            other = gm.create_game(session, user, "eleusis", "別卓", {"rounds": 2}, "s")
            session.commit()
            ids, before = (old.id, other.id), dict(other.options)
        command.downgrade(migrate.alembic_config(settings, database.engine), "0012_notify_base_url")
        with database.session() as session:
            session.execute(text("UPDATE games SET options = '{}' WHERE id = :id"), {"id": ids[0]})
            session.commit()
        migrate.upgrade(settings, database.engine)
        with database.session() as session:
            stored = {g.id: g.options for g in session.scalars(select(Game))}
            assert stored[ids[0]] == {"edition": 1}
            assert stored[ids[1]] == before
        command.downgrade(migrate.alembic_config(settings, database.engine), "0012_notify_base_url")
        with database.session() as session:
            assert session.scalar(select(Game.options).where(Game.id == ids[0])) == {}
    finally:
        database.dispose()


def test_games_started_before_wordings_were_kept_are_marked_wording_1(tmp_path: Path) -> None:
    """0023_game_wording: every game already started is marked wording 1 (its bot's posts are
    in the replies' words of before issue 43, which ``verify`` then does not compare word for
    word); a recruiting game is left unmarked and takes its kind's wording when it starts."""
    from app.db.models import Game
    from app.gm import service as gm

    url = f"sqlite:///{tmp_path / 'wording.db'}"
    settings = Settings(database_url=url, secret_key="k", tick_seconds=0, deliver_seconds=0)
    database = Database(url)
    try:
        migrate.upgrade(settings, database.engine)
        with database.session() as session:
            user = _game_master(session)
            started = gm.create_game(session, user, "populous", "始まった卓", {}, "s")
            waiting = gm.create_game(session, user, "populous", "募集中の卓", {}, "s")
            started.started_at = started.created_at
            session.commit()
            ids = (started.id, waiting.id)
        command.downgrade(migrate.alembic_config(settings, database.engine), "0022_tables")
        migrate.upgrade(settings, database.engine)
        with database.session() as session:
            marked = {g.id: g.wording for g in session.scalars(select(Game))}
            assert marked[ids[0]] == 1 and marked[ids[1]] is None
    finally:
        database.dispose()


def _lz4_supported(session: Session) -> bool:
    """Whether this PostgreSQL server can compress with lz4: 14 or later, built with it (its
    ``default_toast_compression`` then offers lz4)."""
    offered = session.scalar(
        text(
            "SELECT 'lz4' = ANY(enumvals) FROM pg_settings WHERE name = 'default_toast_compression'"
        )
    )
    return bool(offered)


def _state_compression(session: Session) -> str:
    """games.state's compression method as the table declares it ('' for the server's
    default, 'l' for lz4, 'p' for pglz; PostgreSQL 14 or later)."""
    method = session.scalar(
        text(
            "SELECT attcompression FROM pg_attribute "
            "WHERE attrelid = 'games'::regclass AND attname = 'state'"
        )
    )
    return str(method or "")


def test_a_games_state_is_compressed_with_lz4_on_postgresql() -> None:
    """0014_state_lz4: on a PostgreSQL server with lz4, a game's state written from then on is
    compressed with it (pglz was half of a card-game post's game row UPDATE,
    docs/performance.md); going back restores the server's default. On a server without lz4 (or
    before PostgreSQL 14, which has no per-column compression) the migration runs both ways and
    changes nothing."""
    from app.gm import service as gm

    server = os.environ.get("BBSGM_TEST_DATABASE_URL")
    if not server:
        pytest.skip("PostgreSQL only: BBSGM_TEST_DATABASE_URL names no server")
    url, name = _create_pg_database(server)
    settings = Settings(database_url=url, secret_key="k", tick_seconds=0, deliver_seconds=0)
    database = Database(url)
    try:
        migrate.upgrade(settings, database.engine)
        with database.session() as session:
            modern = int(session.scalar(text("SHOW server_version_num")) or 0) >= 140000
            lz4 = _lz4_supported(session)
            if modern:
                assert _state_compression(session) == ("l" if lz4 else "")
            user = _game_master(session)
            game = gm.create_game(session, user, "eitsuku", "圧縮", {}, "s")
            game.state = {"log": [f"手 {i}: SET 主演 役者{i % 6 + 1}" for i in range(400)]}
            session.commit()
            if modern:
                stored = session.scalar(
                    text("SELECT pg_column_compression(state) FROM games WHERE id = :id"),
                    {"id": game.id},
                )
                assert stored == ("lz4" if lz4 else "pglz")
        command.downgrade(migrate.alembic_config(settings, database.engine), "0013_eitsuku_edition")
        if modern:
            with database.session() as session:
                assert _state_compression(session) == ""
    finally:
        database.dispose()
        _drop_pg_database(server, name)
