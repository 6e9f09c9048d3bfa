"""`app.db.Prepared`: a Core statement compiled once and run on the session's DBAPI connection
(docs/performance.md: building a statement can cost more than running it) stores what
SQLAlchemy's own execution would, in the session's transaction; `app.db.Loading` reads rows
into the session as the ORM would; `app.db.begin_now` begins a SQLite transaction only if it
need not wait."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import Text, bindparam, func, insert, select, text, update
from sqlalchemy import inspect as inspect_object
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

from app import db as db_module
from app.db import BUSY_SECONDS, ROWS_IN_ONE, Database, Loading, Prepared, begin_now
from app.forum import service as forum
from app.gm import service as gm
from app.models import Game, GamePlayer, Post, Thread, User
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


@pytest.mark.parametrize("count", [2, ROWS_IN_ONE, ROWS_IN_ONE + 3])
def test_run_many_writes_every_row_through_the_column_types(
    session: Session, user: User, count: int
) -> None:
    """Several rows at once (one VALUES list on PostgreSQL up to ROWS_IN_ONE rows, else one
    execution per row): each row stored with its own values, its datetime and JSON through
    the column types, JSON's "nothing" as SQL NULL; the form for a count is compiled once."""
    thread = _thread(session, user)
    when = datetime(2026, 11, 23, 12, 34, 56, 789000, tzinfo=UTC)
    statement = Prepared(insert(_POSTS))
    rows = [
        {
            "thread_id": thread.id,
            "number": 2 + i,
            "author_id": user.id if i % 2 else None,
            "author_name": f"名{i}",
            "daily_id": "abcdefgh",
            "body": f"本文{i}",
            "kind": "talk",
            "created_at": when,
            "reply_to": i,
            "reply_ok": bool(i % 2),
            "reply_error": {"line": i} if i % 2 else None,
            "hidden_at": None,
            "hidden_by": None,
        }
        for i in range(count)
    ]
    statement.run_many(session, rows)
    compiled = Prepared.compilations
    statement.run_many(session, [{**row, "number": row["number"] + 100} for row in rows])
    assert Prepared.compilations == compiled
    session.expire_all()
    stored = list(session.scalars(select(Post).where(Post.thread_id == thread.id, Post.number > 1)))
    assert len(stored) == 2 * count
    for post in stored:
        i = post.reply_to
        assert post.number in (2 + i, 102 + i) and post.body == f"本文{i}"
        assert post.author_id == (user.id if i % 2 else None) and post.reply_ok is bool(i % 2)
        assert post.reply_error == ({"line": i} if i % 2 else None)
        assert post.created_at.replace(tzinfo=UTC) == when
    assert session.scalar(
        select(func.count()).where(
            _POSTS.c.thread_id == thread.id, _POSTS.c.number > 1, _POSTS.c.reply_error.is_(None)
        )
    ) == 2 * (count - count // 2)


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


def test_each_form_runs_on_a_cursor_of_its_own_kept_with_the_connection(
    session: Session, user: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A psycopg cursor makes its transformer (the parameters' dumpers, the columns' loaders)
    again whenever it runs a statement other than its last: each form keeps a cursor of its
    own on the connection (the transformer was a measurable part of a post), made again for a
    new driver connection."""
    thread = _thread(session, user)
    title = Prepared(select(_THREADS.c.title).where(_THREADS.c.id == bindparam("thread_id")))
    count = Prepared(select(_THREADS.c.post_count).where(_THREADS.c.id == bindparam("thread_id")))
    used: list[object] = []
    real = db_module._cursor

    def recorded(connection: object, form: object) -> object:
        used.append(real(connection, form))
        return used[-1]

    monkeypatch.setattr(db_module, "_cursor", recorded)
    for statement in (title, count, title, count):
        assert statement.fetch(session, {"thread_id": thread.id})
    assert used[0] is used[2] and used[1] is used[3] and used[0] is not used[1]
    pooled = session.connection().connection
    driver, cursors = pooled.info[db_module._CURSORS]
    pooled.info[db_module._CURSORS] = (object(), cursors)  # as if the connection were new
    assert title.fetch(session, {"thread_id": thread.id}) == [("題",)]
    assert used[-1] is not used[0]
    assert pooled.info[db_module._CURSORS][0] is driver


def test_a_missing_parameter_is_an_error_not_a_default(session: Session, user: User) -> None:
    """Python-side defaults are not applied: every column an INSERT names must be given."""
    statement = Prepared(
        update(_THREADS)
        .where(_THREADS.c.id == bindparam("thread_id"))
        .values(title=bindparam("title"))
    )
    with pytest.raises(KeyError):
        statement.run(session, {"title": unique_name()})


_GAMES = Game.__table__
_SEATS = GamePlayer.__table__
_GAME_BY_ID = select(*_GAMES.c).where(_GAMES.c.id == bindparam("game_id"))


def _game(session: Session, user: User) -> Game:
    game = gm.create_game(session, user, "eitsuku", "題", {}, "secret")
    session.commit()
    return game


def test_loaded_rows_are_objects_as_the_orm_loads_them(session: Session, user: User) -> None:
    """Every column with its Python type (datetime, JSON, bool), in the identity map, nothing
    to flush; a relationship loads when read; a change is flushed."""
    made = _game(session, user)
    game_id, thread_id = made.id, made.thread_id
    session.expunge_all()
    loading = Loading(Game, _GAME_BY_ID, refresh=True)
    ((game, extra),) = loading.load(session, {"game_id": game_id})
    assert extra == ()
    expected = session.execute(select(*_GAMES.c).where(_GAMES.c.id == game_id)).one()._mapping
    for column in _GAMES.c:
        assert getattr(game, column.key) == expected[column], column.key
    assert isinstance(game.created_at, datetime) and isinstance(game.options, dict)
    assert game.paused is False and game.kind == "eitsuku"
    state = inspect_object(game)
    assert state.persistent and not state.modified and game not in session.dirty
    assert session.get(Game, game_id) is game
    assert game.thread.id == thread_id and game.gm is session.get(User, user.id)  # lazy loads
    assert loading.load(session, {"game_id": -1}) == []
    game.title = "変えた"  # tracked as the ORM's own objects are: flushed as an UPDATE
    assert game in session.dirty
    session.flush()
    stored = session.execute(select(_GAMES.c.title).where(_GAMES.c.id == game_id)).scalar_one()
    assert stored == "変えた" and not inspect_object(game).modified


def test_an_object_in_the_session_is_returned_refreshed_or_untouched(
    session: Session, user: User
) -> None:
    game = _game(session, user)
    session.execute(update(_GAMES).where(_GAMES.c.id == game.id).values(title="変わった"))
    untouched = Loading(Game, _GAME_BY_ID, refresh=False).load(session, {"game_id": game.id})
    assert untouched[0][0] is game and game.title == "題"
    refreshed = Loading(Game, _GAME_BY_ID, refresh=True).load(session, {"game_id": game.id})
    assert refreshed[0][0] is game and game.title == "変わった"
    assert not inspect_object(game).modified


def test_pending_changes_are_flushed_first_and_extra_columns_follow(
    session: Session, user: User
) -> None:
    game = _game(session, user)
    session.add(GamePlayer(game_id=game.id, seat=1, user_id=user.id, name=user.name))
    seats = Loading(
        GamePlayer,
        select(*_SEATS.c, _GAMES.c.title)
        .join(_GAMES, _GAMES.c.id == _SEATS.c.game_id)
        .where(_SEATS.c.game_id == bindparam("game_id")),
        refresh=False,
    ).load(session, {"game_id": game.id})
    assert [(seat.name, extra) for seat, extra in seats] == [(user.name, ("題",))]


def test_a_deferred_column_is_left_out_and_read_when_first_used(
    session: Session, user: User
) -> None:
    """The game's options (the post path's lock_game defers them): not in the SELECT, not in
    the loaded object, read by one SELECT of their own when used, and nothing to flush."""
    made = _game(session, user)
    game_id, options = made.id, dict(made.options)
    session.expunge_all()
    without = select(*(c for c in _GAMES.c if c.name != "options"))
    loading = Loading(
        Game, without.where(_GAMES.c.id == bindparam("game_id")), refresh=True, deferred=["options"]
    )
    ((game, _),) = loading.load(session, {"game_id": game_id})
    assert "options" not in game.__dict__ and game.title == "題"
    assert "options" in inspect_object(game).expired_attributes
    assert game.options == options and "options" in game.__dict__
    assert not inspect_object(game).modified
    with pytest.raises(ValueError):  # deferred, yet selected
        Loading(Game, _GAME_BY_ID, refresh=True, deferred=["options"])


def test_a_statement_without_every_column_first_is_refused() -> None:
    with pytest.raises(ValueError):
        Loading(Game, select(_GAMES.c.id, _GAMES.c.title), refresh=True)
    with pytest.raises(ValueError):
        Loading(Game, select(_GAMES.c.title, *_GAMES.c), refresh=True)


def test_json_columns_keep_their_values_and_store_text_as_utf8(
    session: Session, user: User
) -> None:
    """JSON goes through orjson (app.db.make_engine): the values read back are those written,
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


def test_begin_now_takes_the_write_lock_of_a_free_database(
    sqlite_file: tuple[Database, Path],
) -> None:
    database, _ = sqlite_file
    lock = _write_lock_of(database)
    with database.session() as session:
        assert begin_now(session)
        assert lock.locked()  # type: ignore[attr-defined]
        session.execute(text("INSERT INTO notes VALUES ('今')"))
        session.commit()
        assert not lock.locked()  # type: ignore[attr-defined]
    with database.session() as session:
        assert session.scalars(text("SELECT body FROM notes")).all() == ["今"]
    assert _busy_timeout(database) == BUSY_SECONDS * 1000


def test_begin_now_does_not_wait_for_a_transaction_of_this_process(
    sqlite_file: tuple[Database, Path],
) -> None:
    """Another thread's transaction holds the process's write lock: False at once, nothing
    begun; the session can still be used, waiting its turn as usual."""
    database, _ = sqlite_file
    holder = Database(database.url)  # another engine on the file shares the process's lock
    try:
        with holder.engine.connect() as held:
            held.begin()
            held.exec_driver_sql("SELECT 1")
            with database.session() as session:
                assert not begin_now(session)
                assert not session.in_transaction()
            held.rollback()
        with database.session() as session:
            session.execute(text("INSERT INTO notes VALUES ('後')"))
            session.commit()
    finally:
        holder.dispose()
    assert _busy_timeout(database) == BUSY_SECONDS * 1000


def test_begin_now_does_not_wait_for_another_process(sqlite_file: tuple[Database, Path]) -> None:
    """Another process (``bbsgm tick``, say) holds SQLite's own lock: False at once instead of
    SQLite's busy wait, this process's lock given back, the busy timeout as it was."""
    database, path = sqlite_file
    lock = _write_lock_of(database)
    other = sqlite3.connect(path, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
        with database.session() as session:
            assert not begin_now(session)
        assert not lock.locked()  # type: ignore[attr-defined]
        other.execute("ROLLBACK")
        with database.session() as session:
            assert begin_now(session)
            session.execute(text("INSERT INTO notes VALUES ('次')"))
            session.commit()
    finally:
        other.close()
    assert _busy_timeout(database) == BUSY_SECONDS * 1000


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

    from app import migrate
    from app.config import Settings
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
            await asyncio.sleep(0.5)
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
