"""Forum services: validation, numbering, ordering, pagination (service tier)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.accounts import users as accounts
from app.db.engine import Database
from app.db.models import Post, Thread, User
from app.errors import Invalid, NotFound
from app.forum import service as forum
from tests.conftest import unique_name

SECRET = "s"


def talk(session: Session, thread_id: int, user: User, body: str) -> Post:
    return forum.add_post(
        session,
        thread_id,
        author=user,
        author_name=user.name,
        body=body,
        kind="talk",
        secret=SECRET,
    )


def test_seeded_boards_lobby_and_chat(session: Session) -> None:
    slugs = [b.slug for b in forum.list_boards(session)]
    assert slugs[:2] == ["lobby", "chat"]
    assert forum.get_board(session, "lobby").title == "ロビー"
    assert forum.get_board(session, "chat").title == "雑談"


def test_ensure_boards_is_idempotent(session: Session) -> None:
    before = len(forum.list_boards(session))
    forum.ensure_boards(session)
    assert len(forum.list_boards(session)) == before


def test_thread_starts_with_post_1(session: Session, user: User) -> None:
    board = forum.get_board(session, "lobby")
    thread, post = forum.create_thread(session, board, user, "題", "本文", SECRET)
    assert post.number == 1 and thread.post_count == 1
    assert post.author_name == user.name and post.kind == "talk"


def test_post_numbers_are_consecutive(session: Session, user: User) -> None:
    board = forum.get_board(session, "lobby")
    thread, _ = forum.create_thread(session, board, user, "題", "本文", SECRET)
    numbers = [talk(session, thread.id, user, f"{i}").number for i in range(5)]
    assert numbers == [2, 3, 4, 5, 6]
    assert [p.number for p in forum.list_posts(session, thread, 3, 2)] == [4, 5]


def test_a_post_taking_two_numbers_gets_the_first_and_the_next_post_the_third(
    session: Session, user: User
) -> None:
    """A command post takes its number and its reply's together (``take=2``; on PostgreSQL in
    the INSERT's own statement): the thread counts both, a thread object loaded in the
    session is kept current, and the next post comes after the reply's number."""
    board = forum.get_board(session, "lobby")
    thread, _ = forum.create_thread(session, board, user, "題", "本文", SECRET)
    before = thread.last_post_at
    later = before + timedelta(minutes=5)
    post = forum.add_post(
        session,
        thread.id,
        author=user,
        author_name=user.name,
        body="SET 主演 役者3",
        kind="command",
        secret=SECRET,
        now=later,
        take=2,
    )
    assert post.number == 2
    assert thread.post_count == 3 and thread.last_post_at == later
    session.expire(thread)
    assert thread.post_count == 3
    assert session.scalar(select(Post.number).where(Post.id == post.id)) == 2
    assert talk(session, thread.id, user, "次").number == 4


def test_postgres_refuses_a_name_longer_than_its_column(session: Session, user: User) -> None:
    """A name over the column's 64 characters is refused by the post's INSERT, never cut to
    fit."""
    if session.get_bind().dialect.name != "postgresql":
        pytest.skip("SQLite does not hold strings to their length")
    import psycopg
    from sqlalchemy.exc import DataError

    board = forum.get_board(session, "lobby")
    thread, _ = forum.create_thread(session, board, user, "題", "本文", SECRET)
    with pytest.raises(DataError) as refused:
        forum.add_post(
            session,
            thread.id,
            author=user,
            author_name="名" * 65,
            body="本文",
            kind="talk",
            secret=SECRET,
        )
    assert isinstance(refused.value.orig, psycopg.errors.StringDataRightTruncation)


def test_a_post_to_a_thread_that_does_not_exist_is_not_found_and_stores_nothing(
    session: Session, user: User
) -> None:
    count = session.scalar(select(func.count()).select_from(Post))
    with pytest.raises(NotFound, match="スレッド"):
        talk(session, 2**31 - 1, user, "本文")
    assert session.scalar(select(func.count()).select_from(Post)) == count


@pytest.mark.parametrize(
    ("title", "body", "message"),
    [
        ("", "本文", "タイトルが空"),
        ("   ", "本文", "タイトルが空"),
        ("t" * 101, "本文", "100文字"),
        ("題", "", "本文が空"),
        ("題", " \n\t", "本文が空"),
        ("題", "x" * 10_001, "10000文字"),
    ],
)
def test_bad_thread_input_stores_nothing(
    session: Session, user: User, title: str, body: str, message: str
) -> None:
    board = forum.get_board(session, "chat")
    count = session.scalar(select(func.count()).select_from(Thread))
    with pytest.raises(Invalid, match=message):
        forum.create_thread(session, board, user, title, body, SECRET)
    assert session.scalar(select(func.count()).select_from(Thread)) == count


def test_body_of_exactly_10000_chars_is_accepted(session: Session, user: User) -> None:
    board = forum.get_board(session, "chat")
    _, post = forum.create_thread(session, board, user, "t" * 100, "x" * 10_000, SECRET)
    assert len(post.body) == 10_000


def test_unknown_board_and_thread_are_not_found(session: Session) -> None:
    with pytest.raises(NotFound):
        forum.get_board(session, "no-such-board")
    with pytest.raises(NotFound):
        forum.get_thread(session, 2**40)


def test_empty_post_refused_and_count_unchanged(session: Session, user: User) -> None:
    board = forum.get_board(session, "chat")
    thread, _ = forum.create_thread(session, board, user, "題", "本文", SECRET)
    with pytest.raises(Invalid):
        talk(session, thread.id, user, "\n")
    assert thread.post_count == 1
    assert (
        session.scalar(select(func.count()).select_from(Post).where(Post.thread_id == thread.id))
        == 1
    )


def test_a_rolled_back_post_leaves_the_session(database: Database) -> None:
    """Posts are written by Core and attached as loaded rows (``attach_written``); a rollback
    must drop them, as it drops objects the session was to insert, so a later post in the
    same session is fine (on SQLite it may take the rolled-back post's id). The app's
    sessions, as ``Database`` makes them."""
    with database.session() as session:
        author = accounts.register(session, unique_name(), "password123")
        board = forum.list_boards(session)[0]
        thread, first = forum.create_thread(session, board, author, "巻き戻し", "1", SECRET)
        session.commit()
        assert first in session  # committed: stays, as a loaded post does
        gone = talk(session, thread.id, author, "消える")
        session.rollback()
        assert gone not in session and first in session
        kept = talk(session, thread.id, author, "残る")
        kept.mail = "sage"  # attached: a change is flushed like any loaded post's
        session.commit()
    with database.session() as session:
        stored = session.scalars(select(Post).where(Post.thread_id == thread.id)).all()
        assert [(p.number, p.body, p.mail) for p in stored] == [(1, "1", None), (2, "残る", "sage")]


def test_threads_ordered_by_last_post(session: Session, user: User) -> None:
    board = forum.get_board(session, "lobby")
    older, _ = forum.create_thread(session, board, user, "古い", "本文", SECRET)
    newer, _ = forum.create_thread(session, board, user, "新しい", "本文", SECRET)
    talk(session, older.id, user, "age")
    threads, _page = forum.list_threads(session, board, 1, 500)
    ids = [t.id for t in threads]
    assert ids.index(older.id) < ids.index(newer.id)


def test_thread_list_paginates(session: Session, user: User) -> None:
    board = forum.get_board(session, "chat")
    for i in range(5):
        forum.create_thread(session, board, user, f"t{i}", "本文", SECRET)
    first, page = forum.list_threads(session, board, 1, 2)
    second, _ = forum.list_threads(session, board, 2, 2)
    assert len(first) == 2 and page.count >= 3 and page.has_next
    assert not {t.id for t in first} & {t.id for t in second}


def test_daily_id_is_stable_for_a_day_and_changes_next_day() -> None:
    morning = datetime(2026, 11, 22, 0, 0, tzinfo=UTC)  # 09:00 in Tokyo
    evening = morning + timedelta(hours=14)  # 23:00 in Tokyo, same day
    tomorrow = morning + timedelta(hours=16)  # 01:00 next day in Tokyo
    assert forum.daily_id("k", "u1", morning) == forum.daily_id("k", "u1", evening)
    assert forum.daily_id("k", "u1", morning) != forum.daily_id("k", "u1", tomorrow)
    assert forum.daily_id("k", "u1", morning) != forum.daily_id("k", "u2", morning)
    assert len(forum.daily_id("k", "u1", morning)) == 8


def test_bbs_time_is_tokyo_with_weekday() -> None:
    when = datetime(2026, 11, 22, 1, 28, 9, 120000, tzinfo=UTC)
    assert forum.format_bbs_time(when) == "2026/11/22(日) 10:28:09.12"
