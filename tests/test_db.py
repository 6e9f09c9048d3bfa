"""`app.db.engine`: the JSON columns, SQLite's write lock, read sessions and checkpoints, and the
PostgreSQL pool's handling of a server that went away."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Text, select, text
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

from app.db import engine as db_module
from app.db.engine import BUSY_SECONDS, Database
from app.db.models import Post, Thread, User
from app.forum import service as forum

_THREADS = Thread.__table__
_POSTS = Post.__table__


def _thread(session: Session, user: User) -> Thread:
    board = forum.get_board(session, "chat")
    thread, _post = forum.create_thread(session, board, user, "題", "一", "secret")
    return thread


def test_json_columns_keep_their_values_and_store_text_as_utf8(
    session: Session, user: User
) -> None:
    """JSON goes through orjson (app.db.engine.make_engine): the values read back are those written,
    keys that are not strings become strings as with the stdlib, and Japanese is stored as
    itself, not as \\u escapes."""
    thread = _thread(session, user)
    error = {"why": "役者が足りません", "legal": ["SET 主演 役者1", 2, 2.5, None, True], 7: "x"}
    post = forum.add_post(
        session,
        thread.id,
        author=user,
        author_name=user.name,
        body="本文",
        kind="talk",
        secret="secret",
        reply_error=error,  # type: ignore[arg-type]
    )
    session.expire_all()
    stored = session.get(Post, post.id)
    assert stored is not None
    assert stored.reply_error == {**{k: v for k, v in error.items() if k != 7}, "7": "x"}
    raw = session.scalar(select(_POSTS.c.reply_error.cast(Text)).where(_POSTS.c.id == post.id))
    assert "役者が足りません" in raw and "\\u" not in raw


@pytest.fixture
def sqlite_file(tmp_path: Path) -> Iterator[tuple[Database, Path]]:
    """A SQLite file of its own (whatever the suite's database), on a pool of one connection,
    so that each session below gets the connection the one before had."""
    path = tmp_path / "begin-now.db"
    database = Database(f"sqlite:///{path}", pool_size=1, max_overflow=0)
    with database.session() as session:
        session.execute(text("CREATE TABLE notes (body TEXT)"))
        session.commit()
    yield database, path
    database.dispose()


def _write_lock_of(database: Database) -> object:
    with database.engine.connect() as connection:
        lock = connection.connection.dbapi_connection.write_lock  # type: ignore[union-attr]
        connection.rollback()
    return lock


def _busy_timeout(database: Database) -> int:
    with database.session() as session:
        return int(session.scalar(text("PRAGMA busy_timeout")))


def test_read_session_reads_while_this_process_writes(sqlite_file: tuple[Database, Path]) -> None:
    """``Database.read_session`` (the live streams' reads): a transaction of this process
    holds the write lock with an uncommitted row; the read neither waits for it nor sees the
    row, and takes no lock of its own."""
    database, _ = sqlite_file
    with database.session() as session:
        session.execute(text("INSERT INTO notes VALUES ('前')"))
        session.commit()
    lock = _write_lock_of(database)
    writer = Database(database.url)  # another engine on the file shares the process's lock
    try:
        with writer.session() as busy:
            busy.execute(text("INSERT INTO notes VALUES ('途中')"))
            assert lock.locked()  # type: ignore[attr-defined]
            with database.read_session() as reader:
                assert reader.scalars(text("SELECT body FROM notes")).all() == ["前"]
                reader.commit()
            busy.commit()
        assert not lock.locked()  # type: ignore[attr-defined]
        with database.read_session() as reader:
            assert reader.scalars(text("SELECT body FROM notes")).all() == ["前", "途中"]
    finally:
        writer.dispose()
    with database.session() as session:  # sessions after it begin IMMEDIATE again
        session.execute(text("SELECT 1"))
        assert lock.locked()  # type: ignore[attr-defined]
        session.rollback()
    assert not lock.locked()  # type: ignore[attr-defined]


def test_read_session_reads_while_another_process_writes(
    sqlite_file: tuple[Database, Path],
) -> None:
    """Another process holds SQLite's own write lock: the read does not wait for it."""
    database, path = sqlite_file
    other = sqlite3.connect(path, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
        other.execute("INSERT INTO notes VALUES ('よそ')")
        with database.read_session() as reader:
            assert reader.scalars(text("SELECT body FROM notes")).all() == []
        other.execute("COMMIT")
        with database.read_session() as reader:
            assert reader.scalars(text("SELECT body FROM notes")).all() == ["よそ"]
    finally:
        other.close()


def _write_pages(database: Database, rows: int) -> None:
    """About a page (4 KB) a row, each row in a commit of its own."""
    for _ in range(rows):
        with database.session() as session:
            session.execute(text("INSERT INTO notes VALUES (:body)"), {"body": "x" * 4000})
            session.commit()


def _wal_pages(path: Path) -> int:
    wal = Path(f"{path}-wal")
    return (wal.stat().st_size - 32) // (4096 + 24) if wal.exists() else 0


def test_commits_checkpoint_on_their_own_unless_deferred(
    sqlite_file: tuple[Database, Path],
) -> None:
    """SQLite's default: a commit that finds the WAL past 1,000 pages copies it into the
    database file, and the next writer starts the WAL over, so it never grows much past
    that. Deferred (the server's checkpoint runner): the commits leave the WAL to grow up to
    the given pages, and ``checkpoint`` copies all of it."""
    database, path = sqlite_file
    with database.session() as session:
        assert session.scalar(text("PRAGMA wal_autocheckpoint")) == 1000
    _write_pages(database, 1500)
    assert _wal_pages(path) < 1200  # the commits checkpointed on their way
    database.checkpoint()

    database.defer_checkpoints(10_000)
    with database.session() as session:
        assert session.scalar(text("PRAGMA wal_autocheckpoint")) == 10_000
    _write_pages(database, 1500)
    busy, frames, copied = database.checkpoint()
    assert busy == 0 and frames > 1500 and copied == frames
    assert _wal_pages(path) > 1500
    _write_pages(database, 10)  # after a whole checkpoint, the next writer starts over
    assert database.checkpoint()[1] < 100
    with database.session() as session:
        assert session.scalar(text("SELECT count(*) FROM notes")) == 3010


def test_checkpoint_waits_for_no_writer(sqlite_file: tuple[Database, Path]) -> None:
    """The runner's checkpoint neither takes the process's write lock nor waits for the
    transaction that holds it: it copies what was committed and returns."""
    database, _ = sqlite_file
    database.defer_checkpoints(10_000)
    _write_pages(database, 20)
    lock = _write_lock_of(database)
    holder = Database(database.url)
    try:
        with holder.engine.connect() as held:
            held.begin()
            held.exec_driver_sql("INSERT INTO notes VALUES ('書きかけ')")
            assert lock.locked()  # type: ignore[attr-defined]
            busy, frames, copied = database.checkpoint()
            assert busy == 0 and copied == frames >= 20
            held.rollback()
    finally:
        holder.dispose()


@pytest.mark.parametrize("seconds", [0.05, 0.0])
def test_the_server_checkpoints_in_the_background(tmp_path: Path, seconds: float) -> None:
    """On a SQLite file the app's lifespan defers the commits' checkpoints and runs
    ``checkpoint`` every ``wal_checkpoint_seconds``; with 0 it leaves them to the commits."""
    import asyncio

    from app.config import Settings
    from app.db import migrate
    from app.main import CHECKPOINT_BACKSTOP_PAGES, create_app

    url = f"sqlite:///{tmp_path}/server.db"
    settings = Settings(database_url=url, secret_key="k" * 40, wal_checkpoint_seconds=seconds)
    database = Database(url)
    migrate.upgrade(settings, database.engine)
    calls = []
    checkpoint = database.checkpoint

    def counted() -> tuple[int, int, int]:
        calls.append(1)
        return checkpoint()

    database.checkpoint = counted  # type: ignore[method-assign]
    app = create_app(settings, database)

    async def serve() -> int:
        async with app.router.lifespan_context(app):
            if seconds:  # the runner's first checkpoint
                deadline = time.monotonic() + 20
                while not calls and time.monotonic() < deadline:
                    await asyncio.sleep(0.01)
            else:  # no runner: nothing calls it, however many turns the loop takes
                for _ in range(100):
                    await asyncio.sleep(0)
            with database.session() as session:
                return int(session.scalar(text("PRAGMA wal_autocheckpoint")))

    pages = asyncio.run(serve())
    database.dispose()
    assert pages == (CHECKPOINT_BACKSTOP_PAGES if seconds else 1000)
    assert bool(calls) == bool(seconds)


def test_postgres_connections_give_up_on_a_silent_server(database: Database) -> None:
    """A connection whose data goes unacknowledged for BUSY_SECONDS fails (503) instead of
    waiting out the kernel's retransmissions; idle ones are probed (keepalives); the URL's own
    settings win."""
    if database.is_sqlite:
        pytest.skip("PostgreSQL's connections")

    def options(of: Database) -> dict[str, str]:
        with of.engine.connect() as connection:
            info = connection.connection.driver_connection.pgconn.info
            return {o.keyword.decode(): o.val.decode() for o in info if o.val is not None}

    ours = options(database)
    assert ours["tcp_user_timeout"] == str(BUSY_SECONDS * 1000)
    assert ours["keepalives"] == "1" and ours["keepalives_idle"] == "30"
    own = Database(str(database.engine.url.update_query_dict({"keepalives_idle": "45"})))
    try:
        mine = options(own)
    finally:
        own.dispose()
    assert mine["keepalives_idle"] == "45" and mine["tcp_user_timeout"] == str(BUSY_SECONDS * 1000)


def _drop_a_pooled_backend(database: Database) -> int:
    """Terminates the backend of a connection now idle in ``database``'s pool; its pid."""
    with database.session() as session:
        dropped = session.connection().exec_driver_sql("SELECT pg_backend_pid()").scalar_one()
    other = Database(database.engine.url.render_as_string(hide_password=False))
    try:
        with other.engine.connect() as terminating:
            terminating.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": dropped})
            terminating.commit()
    finally:
        other.dispose()
    return int(dropped)


def test_a_postgres_connection_idle_for_a_second_is_pinged_and_replaced_if_its_server_dropped_it(
    database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pooled connection idle for ``PING_AFTER_IDLE_SECONDS`` is pinged at checkout; one
    whose backend is gone is replaced before a session uses it, and the session never sees
    the error (as ``pool_pre_ping``)."""
    if database.is_sqlite:
        pytest.skip("PostgreSQL's backends")
    dropped = _drop_a_pooled_backend(database)
    monkeypatch.setattr(db_module, "PING_AFTER_IDLE_SECONDS", 0.0)  # as if a second went by
    for _ in range(database.engine.pool.size() + 1):  # whichever pooled connection comes
        with database.session() as session:
            pid = session.connection().exec_driver_sql("SELECT pg_backend_pid()").scalar_one()
            assert pid != dropped


def _counted_pings(database: Database, monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The connections ``database``'s dialect pings from now on (each ping still sent)."""
    pings: list[object] = []
    ping = database.engine.dialect.do_ping

    def counted(dbapi_connection: object) -> bool:
        pings.append(dbapi_connection)
        return bool(ping(dbapi_connection))

    monkeypatch.setattr(database.engine.dialect, "do_ping", counted)
    return pings


def test_a_ping_that_finds_the_server_gone_renews_every_pooled_connection_at_once(
    database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a restart every pooled connection is dead: the first failed ping renews them all
    (as ``pool_pre_ping``), so the next requests connect anew without a ping of their own."""
    if database.is_sqlite:
        pytest.skip("PostgreSQL's backends")
    own = Database(database.engine.url.render_as_string(hide_password=False))
    try:
        with own.engine.connect() as a, own.engine.connect() as b, own.engine.connect() as c:
            pids = {x.exec_driver_sql("SELECT pg_backend_pid()").scalar_one() for x in (a, b, c)}
        with database.engine.connect() as terminating:
            for pid in pids:
                terminating.execute(text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
            terminating.commit()
        pings = _counted_pings(own, monkeypatch)
        monkeypatch.setattr(db_module, "PING_AFTER_IDLE_SECONDS", 0.0)
        for _ in range(3):
            with own.session() as session:
                pid = session.connection().exec_driver_sql("SELECT pg_backend_pid()").scalar_one()
                assert pid not in pids
        assert len(pings) == 1
    finally:
        own.dispose()


def test_a_postgres_connection_used_a_moment_ago_is_handed_out_without_a_ping(
    database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under load a ping per request would be a round trip per request: a connection checked
    in less than ``PING_AFTER_IDLE_SECONDS`` ago is not pinged; one idle longer is."""
    if database.is_sqlite:
        pytest.skip("PostgreSQL's pool")
    pings = _counted_pings(database, monkeypatch)
    for _ in range(3):
        with database.session() as session:
            session.execute(text("SELECT 1"))
    assert pings == []
    monkeypatch.setattr(db_module, "PING_AFTER_IDLE_SECONDS", 0.0)
    with database.session() as session:
        session.execute(text("SELECT 1"))
    assert len(pings) == 1


def test_a_postgres_connection_dropped_a_moment_ago_fails_one_session_then_the_pool_is_renewed(
    database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not pinged (used within the second), a connection whose backend is gone fails the one
    session that gets it with the driver's OperationalError (503, app/main.py); the pool then
    drops every connection as old as the failure, so the next sessions get new backends."""
    if database.is_sqlite:
        pytest.skip("PostgreSQL's backends")
    monkeypatch.setattr(db_module, "PING_AFTER_IDLE_SECONDS", 3600.0)
    dropped = _drop_a_pooled_backend(database)
    failed = 0
    for _ in range(database.engine.pool.size() + 2):
        try:
            with database.session() as session:
                pid = session.connection().exec_driver_sql("SELECT pg_backend_pid()").scalar_one()
        except OperationalError as error:
            assert error.connection_invalidated
            failed += 1
            continue
        assert pid != dropped
    assert failed == 1
