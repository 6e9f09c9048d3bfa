"""`app.db.Prepared`: a Core statement compiled once and run on the session's DBAPI connection
(docs/benchmarks.md, round 4) stores what SQLAlchemy's own execution would, in the session's
transaction."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import bindparam, insert, select, update
from sqlalchemy.orm import Session

from app.db import Prepared
from app.forum import service as forum
from app.models import Post, Thread, User
from tests.conftest import unique_name

_THREADS = Thread.__table__
_POSTS = Post.__table__


def _thread(session: Session, user: User) -> Thread:
    board = forum.get_board(session, "chat")
    thread, _post = forum.create_thread(session, board, user, "題", "一", "secret")
    return thread


def test_values_go_through_the_column_types(session: Session, user: User) -> None:
    """A datetime, a JSON value and JSON's "nothing" (SQL NULL) read back through the ORM as
    they went in."""
    thread = _thread(session, user)
    when = datetime(2026, 11, 23, 12, 34, 56, 789000, tzinfo=UTC)
    statement = Prepared(insert(_POSTS).returning(_POSTS.c.id))
    values = {
        "thread_id": thread.id,
        "number": 2,
        "author_id": user.id,
        "author_name": user.name,
        "daily_id": "abcdefgh",
        "body": "本文",
        "kind": "talk",
        "created_at": when,
        "reply_to": None,
        "reply_ok": False,
        "reply_error": {"line": 1, "why": "理由"},
        "hidden_at": None,
        "hidden_by": None,
    }
    ((first,),) = statement.run(session, values)
    ((second,),) = statement.run(session, {**values, "number": 3, "reply_error": None})
    session.expire_all()
    stored = session.get(Post, first)
    assert stored is not None
    assert stored.created_at.replace(tzinfo=UTC) == when
    assert stored.reply_error == {"line": 1, "why": "理由"} and stored.reply_ok is False
    assert session.scalar(select(_POSTS.c.reply_error.is_(None)).where(_POSTS.c.id == second))


def test_literals_in_the_statement_are_sent_and_rows_come_back(
    session: Session, user: User
) -> None:
    thread = _thread(session, user)
    statement = Prepared(
        update(_THREADS)
        .where(_THREADS.c.id == bindparam("thread_id"))
        .values(post_count=_THREADS.c.post_count + 10)
        .returning(_THREADS.c.post_count)
    )
    assert [tuple(r) for r in statement.run(session, {"thread_id": thread.id})] == [(11,)]
    assert statement.run(session, {"thread_id": -1}) == []


def test_it_runs_in_the_session_transaction(session: Session, user: User) -> None:
    thread = _thread(session, user)
    statement = Prepared(update(_THREADS).where(_THREADS.c.id == bindparam("thread_id")))
    savepoint = session.begin_nested()
    statement.run(session, {"thread_id": thread.id, "title": "変えた"})
    assert session.scalar(select(_THREADS.c.title).where(_THREADS.c.id == thread.id)) == "変えた"
    savepoint.rollback()
    assert session.scalar(select(_THREADS.c.title).where(_THREADS.c.id == thread.id)) == "題"


def test_one_form_per_set_of_names(session: Session, user: User) -> None:
    thread = _thread(session, user)
    statement = Prepared(update(_THREADS).where(_THREADS.c.id == bindparam("thread_id")))
    before = Prepared.compilations
    for title in ("一", "二"):
        statement.run(session, {"thread_id": thread.id, "title": title})
    statement.run(session, {"thread_id": thread.id, "title": "三", "post_count": 5})
    assert Prepared.compilations == before + 2


def test_a_missing_parameter_is_an_error_not_a_default(session: Session, user: User) -> None:
    """Python-side defaults are not applied: every column an INSERT names must be given."""
    statement = Prepared(
        update(_THREADS)
        .where(_THREADS.c.id == bindparam("thread_id"))
        .values(title=bindparam("title"))
    )
    with pytest.raises(KeyError):
        statement.run(session, {"title": unique_name()})
