"""Where a post's transaction runs on PostgreSQL (app/api/turns.py): in the event loop when the
server is on this host, in a worker thread when it is elsewhere or when a statement in the
event loop would wait for a row lock — the event loop never waits for one, and the attempt is
counted once."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any, cast

import httpx
import pytest
from fastapi import Request
from sqlalchemy import select, text
from sqlalchemy.exc import DBAPIError, OperationalError

from app.api import turns
from app.config import Settings
from app.db import (
    LOOP_LOCK_TIMEOUT_MS,
    LOOP_STATEMENT_TIMEOUT_MS,
    Database,
    gave_up_waiting,
    is_local_server,
)
from app.gm import service as gm
from app.models import RateLimit
from tests.conftest import LiveServer, api_user


@pytest.mark.parametrize(
    ("url", "local"),
    [
        ("postgresql+psycopg://u@127.0.0.1:5432/bbsgm", True),
        ("postgresql+psycopg://u@127.8.9.10/bbsgm", True),
        ("postgresql+psycopg://u@localhost/bbsgm", True),
        ("postgresql+psycopg://u@[::1]:5432/bbsgm", True),
        ("postgresql+psycopg:///bbsgm", True),  # libpq's default: the Unix socket
        ("postgresql+psycopg:///bbsgm?host=/var/run/postgresql", True),
        ("postgresql+psycopg://u@db.example.org/bbsgm", False),
        ("postgresql+psycopg://u@10.0.0.5/bbsgm", False),
        ("postgresql+psycopg:///bbsgm?host=10.0.0.5", False),
        ("postgresql+psycopg:///bbsgm?host=/tmp,db.example.org", False),  # libpq's list
        ("postgresql+psycopg:///bbsgm?host=/tmp,127.0.0.1", True),
        ("postgresql+psycopg://u@db.example.org/bbsgm?hostaddr=127.0.0.1", True),
        ("postgresql+psycopg://u@localhost/bbsgm?hostaddr=10.0.0.5", False),
    ],
)
def test_auto_writes_in_the_event_loop_only_when_the_server_is_on_this_host(
    url: str, local: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PGHOST", raising=False)
    monkeypatch.delenv("PGHOSTADDR", raising=False)
    assert is_local_server(url) is local
    assert Settings(database_url=url).pg_writes_run_in_loop is local
    assert Settings(database_url=url, pg_writes_in_loop="on").pg_writes_run_in_loop
    assert not Settings(database_url=url, pg_writes_in_loop="off").pg_writes_run_in_loop


def test_pghost_counts_when_the_url_names_no_host(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PGHOST", "db.example.org")
    assert not is_local_server("postgresql+psycopg:///bbsgm")
    monkeypatch.setenv("PGHOST", "/run/postgresql")
    assert is_local_server("postgresql+psycopg:///bbsgm")


def test_sqlite_settings_never_take_the_postgresql_way() -> None:
    assert not Settings(database_url="sqlite:///x.db", pg_writes_in_loop="on").pg_writes_run_in_loop


def _in_event_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


@pytest.fixture
def where_posts_ran(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """For each call of the game master's post, whether it ran in the event loop."""
    calls: list[bool] = []
    submit = gm.submit_post

    def recorded(*args: Any, **kwargs: Any) -> Any:
        calls.append(_in_event_loop())
        return submit(*args, **kwargs)

    monkeypatch.setattr(gm, "submit_post", recorded)
    return calls


def _server(settings: Settings, database: Database) -> Iterator[httpx.Client]:
    server = LiveServer(settings, database)
    server.start()
    try:
        with httpx.Client(base_url=server.url, timeout=30) as client:
            yield client
    finally:
        server.stop()


@pytest.fixture(params=["auto", "off"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def served(settings: Settings, database: Database, mode: str) -> Iterator[httpx.Client]:
    if database.is_sqlite:
        pytest.skip("PostgreSQL's way; SQLite's is tests/test_db.py's begin_now")
    yield from _server(settings.model_copy(update={"pg_writes_in_loop": mode}), database)


def test_a_post_to_a_postgresql_server_on_this_host_is_written_in_the_event_loop(
    served: httpx.Client, mode: str, where_posts_ran: list[bool]
) -> None:
    """The test server is on loopback: "auto" writes in the event loop, "off" in a thread."""
    alice = api_user(served)
    thread_id = alice.post("/api/boards/chat/threads", {"title": "t", "body": "1"}).json()["id"]
    answer = alice.post(f"/api/threads/{thread_id}/posts", {"body": "2"})
    assert answer.status_code == 201, answer.text
    assert answer.json()["post"]["number"] == 2
    assert where_posts_ran == [mode == "auto"]


@pytest.fixture
def limited(settings: Settings, database: Database) -> Iterator[httpx.Client]:
    if database.is_sqlite:
        pytest.skip("row locks and lock_timeout are PostgreSQL's")
    limits = settings.model_copy(update={"rate_limits": True, "pg_writes_in_loop": "auto"})
    yield from _server(limits, database)


def test_a_post_in_the_event_loop_that_would_wait_for_a_lock_is_done_in_a_thread_once(
    limited: httpx.Client,
    database: Database,
    where_posts_ran: list[bool],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The thread's row is held by another transaction: the post's statement in the event loop
    gives up after ``LOOP_LOCK_TIMEOUT_MS``, the post is done again in a worker thread and waits
    there for the lock; meanwhile the event loop answers other requests. Once the lock is free
    the post is written, and its attempt was counted once."""
    caplog.set_level(logging.INFO, logger="bbsgm.turns")
    alice = api_user(limited)
    thread_id = alice.post("/api/boards/chat/threads", {"title": "t", "body": "1"}).json()["id"]
    key = f"post:user:{alice.client.get('/api/me', headers=alice.headers).json()['id']}"
    answers: list[httpx.Response] = []
    with database.engine.connect() as other:
        other.begin()
        other.execute(text("SELECT id FROM threads WHERE id = :id FOR UPDATE"), {"id": thread_id})
        path = f"/api/threads/{thread_id}/posts"
        poster = threading.Thread(target=lambda: answers.append(alice.post(path, {"body": "2"})))
        poster.start()
        deadline = time.monotonic() + 10
        while len(where_posts_ran) < 2 and time.monotonic() < deadline:  # the second try began
            time.sleep(LOOP_LOCK_TIMEOUT_MS / 1000)
        assert where_posts_ran == [True, False]
        # The event loop is free while the post waits in its thread.
        assert limited.get("/api/boards", timeout=5).status_code == 200
        assert poster.is_alive() and not answers
        other.rollback()
    poster.join(30)
    assert answers and answers[0].status_code == 201, answers and answers[0].text
    assert answers[0].json()["post"]["number"] == 2
    with database.session() as session:
        hits = session.scalars(select(RateLimit.hits).where(RateLimit.key == key)).all()
    assert sum(hits) == 2  # the thread's first post, and this one once
    said = [r.getMessage() for r in caplog.records if r.name == "bbsgm.turns"]
    assert said == [
        f"POST /api/threads/{thread_id}/posts gave up waiting in the event loop"
        " (LockNotAvailable): done again in a thread"
    ]


def test_a_statement_in_the_event_loop_gives_up_after_its_time(database: Database) -> None:
    """The event loop's sessions wait for a row lock ``LOOP_LOCK_TIMEOUT_MS`` at most and run a
    statement ``LOOP_STATEMENT_TIMEOUT_MS`` at most; both errors send the write to a thread
    (``gave_up_waiting``), any other does not."""
    if database.is_sqlite:
        pytest.skip("PostgreSQL's settings")
    with database.loop_session() as session:
        assert session.execute(text("SHOW lock_timeout")).scalar() == f"{LOOP_LOCK_TIMEOUT_MS}ms"
        assert (
            session.execute(text("SHOW statement_timeout")).scalar()
            == f"{LOOP_STATEMENT_TIMEOUT_MS}ms"
        )
        with pytest.raises(OperationalError) as slow:
            session.execute(text("SELECT pg_sleep(:s)"), {"s": LOOP_STATEMENT_TIMEOUT_MS / 500})
        assert gave_up_waiting(slow.value)
        session.rollback()
        with pytest.raises(DBAPIError) as wrong:
            session.execute(text("SELECT 1 / 0"))
        assert not gave_up_waiting(wrong.value)
        session.rollback()
    with database.session() as session:  # the pool's own sessions are not limited
        assert session.execute(text("SHOW lock_timeout")).scalar() == "0"


def test_when_the_event_loops_connection_is_refused_the_process_writes_in_threads(
    served: httpx.Client,
    mode: str,
    where_posts_ran: list[bool],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A connection pooler that refuses the loop's ``options``, say: the post is written in a
    worker thread, and so is every later one, without asking again."""
    if mode != "auto":
        pytest.skip("the event loop's way only")
    asked: list[int] = []

    class Refused:
        def connection(self) -> None:
            asked.append(1)
            raise OperationalError("connect", {}, Exception("unsupported startup parameter"))

    @contextlib.contextmanager
    def refusing(_self: Database) -> Iterator[Any]:
        yield Refused()

    monkeypatch.setattr(Database, "loop_session", refusing)
    alice = api_user(served)
    thread_id = alice.post("/api/boards/chat/threads", {"title": "t", "body": "1"}).json()["id"]
    for number in (2, 3):
        answer = alice.post(f"/api/threads/{thread_id}/posts", {"body": str(number)})
        assert answer.status_code == 201, answer.text
        assert answer.json()["post"]["number"] == number
    assert where_posts_ran == [False, False]
    assert asked == [1]


def test_a_write_in_the_event_loop_lets_what_arrived_before_it_go_first(
    database: Database,
) -> None:
    """Fairness: a write about to run in the event loop first yields to the loop (here: a
    callback queued before it runs first), so that under uvloop the requests that arrived
    are taken in before the write holds the loop for its whole transaction — on SQLite
    before it takes its place in the line of writes, or the writes of one turn of the loop
    went one after another and the same clients came last every turn."""
    order: list[str] = []

    def work(session: Any, in_loop: bool) -> bytes:
        order.append("write")
        assert in_loop
        return b""

    async def main() -> None:
        state = SimpleNamespace(database=database, pg_writes_in_loop=True)
        request = cast(Request, SimpleNamespace(app=SimpleNamespace(state=state)))
        asyncio.get_running_loop().call_soon(order.append, "arrived")
        await turns.in_turn(request, work)

    asyncio.run(main())
    assert order == ["arrived", "write"]
