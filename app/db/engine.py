"""Engine and session factory.

SQLite: WAL, foreign keys on, and every transaction opened with ``BEGIN IMMEDIATE`` so that two
writers never both read a thread's post count and then race to write (the レス番 must have no gaps
and no duplicates). PostgreSQL: psycopg 3; writers lock what they number (a game with
``SELECT … FOR UPDATE``, a thread's レス番 with ``UPDATE … RETURNING``).
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import orjson
import psycopg
from sqlalchemy import (
    Engine,
    create_engine,
    event,
)
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import DisconnectionError, InvalidatePoolError
from sqlalchemy.orm import Session, make_transient_to_detached, sessionmaker


def make_engine(url: str, **kwargs: Any) -> Engine:
    parsed = make_url(url)
    # JSON columns (a game's state, a move, a reply's error) through orjson: the stdlib's
    # encoder and decoder were ~3 % of the server's time under the post benchmark
    # . The same values come back; text is stored as UTF-8, not
    # \u escapes.
    kwargs.setdefault("json_deserializer", orjson.loads)
    if parsed.get_backend_name() == "sqlite":
        connect_args: dict[str, Any] = {
            "check_same_thread": False,
            "timeout": BUSY_SECONDS,
            "factory": SerialisedConnection,
        }
        kwargs.setdefault("json_serializer", _json_text)
        engine = create_engine(url, connect_args=connect_args, **kwargs)
        _configure_sqlite(engine)
        return engine
    if parsed.drivername == "postgresql":
        url = parsed.set(drivername="postgresql+psycopg").render_as_string(hide_password=False)
    kwargs.setdefault("json_serializer", _json_bytes)  # psycopg sends bytes as they are
    # The connections' keepalives, unless the URL or the caller says otherwise.
    connect_args = {k: v for k, v in PG_KEEPALIVES.items() if k not in parsed.query}
    connect_args |= kwargs.pop("connect_args", {})
    engine = create_engine(url, connect_args=connect_args, **kwargs)
    _ping_when_idle(engine)
    return engine


# A pooled PostgreSQL connection given back to the pool this long ago is pinged before it is
# handed out again, and replaced if its server is gone (a restart, a failover, an idle
# timeout), as ``pool_pre_ping`` would: a ping that finds the server gone renews every pooled
# connection at once. One given back more recently is handed out without: under load every
# request would otherwise pay a round trip for the ping, about a tenth of a millisecond of
# the worker's CPU. If the server dropped a connection within
# that second, the request using it fails (503, app/main.py) and the pool replaces every
# connection older than the failure (SQLAlchemy's optimistic disconnect handling).
PING_AFTER_IDLE_SECONDS = 1.0
_IDLE_SINCE = "bbsgm_idle_since"


def _ping_when_idle(engine: Engine) -> None:
    @event.listens_for(engine, "checkin")
    def _checked_in(dbapi_connection: Any, record: Any) -> None:
        if dbapi_connection is not None:
            record.info[_IDLE_SINCE] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _checked_out(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        since = record.info.pop(_IDLE_SINCE, None)
        if since is None or time.monotonic() - since < PING_AFTER_IDLE_SECONDS:
            return  # new, or in use a moment ago
        try:
            engine.dialect.do_ping(dbapi_connection)
        except Exception as error:
            # The pool reconnects this entry and tries again. A server gone: every pooled
            # connection is as old as this one, so all are replaced (InvalidatePoolError).
            dialect: Any = engine.dialect  # is_disconnect is typed for DBAPI modules' errors
            gone = isinstance(error, psycopg.Error) and dialect.is_disconnect(
                error, dbapi_connection, None
            )
            renew = InvalidatePoolError if gone else DisconnectionError
            raise renew(f"the pooled connection failed its ping: {error}") from error


def _json_bytes(value: Any) -> bytes:
    # Keys that are not strings become strings, as the stdlib's json.dumps makes them.
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)


def _json_text(value: Any) -> str:
    """SQLite keeps JSON as TEXT: bytes would be stored as a BLOB."""
    return _json_bytes(value).decode()


def is_postgres(session: Session) -> bool:
    """The session's database is PostgreSQL (else SQLite)."""
    return bool(session.get_bind().dialect.name == "postgresql")


def is_sqlite_file(url: str | URL) -> bool:
    """A SQLite database in a file (WAL, a write lock per file, checkpoints), not in memory."""
    parsed = make_url(url)
    return parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:")


def _configure_sqlite(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Take transaction control away from pysqlite so that BEGIN IMMEDIATE below is ours.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={BUSY_SECONDS * 1000}")
        if is_sqlite_file(engine.url):
            dbapi_connection.write_lock = _write_lock(str(engine.url.database))
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        read_only = bool(conn.get_execution_options().get(READ_ONLY, False))
        conn.connection.dbapi_connection.begin_transaction(read_only)


BUSY_SECONDS = 30
# PostgreSQL connections notice a server gone silent: probes after 30 s without traffic, and
# data left unacknowledged for BUSY_SECONDS fails the connection (503, app/main.py) — a
# request waiting for a dead peer's answer would otherwise wait out the kernel's
# retransmissions, a quarter of an hour, holding its worker thread and pooled connection.
PG_KEEPALIVES: dict[str, Any] = {
    "keepalives": 1,
    "keepalives_idle": 30,
    "keepalives_interval": 10,
    "keepalives_count": 3,
    "tcp_user_timeout": BUSY_SECONDS * 1000,  # ms
    "connect_timeout": 10,  # s
}
WAL_SIZE_LIMIT = 16 * 1024 * 1024  # bytes (Database.defer_checkpoints)
_WRITE_LOCKS: dict[str, threading.Lock] = {}
_WRITE_LOCKS_GUARD = threading.Lock()


def _write_lock(database: str) -> threading.Lock:
    """One lock per database file in this process (every engine on the file shares it)."""
    key = os.path.realpath(database)
    with _WRITE_LOCKS_GUARD:
        return _WRITE_LOCKS.setdefault(key, threading.Lock())


class SerialisedConnection(sqlite3.Connection):
    """A pysqlite connection whose transactions queue on a lock of this process first.

    Every transaction here is ``BEGIN IMMEDIATE``, so SQLite lets one at a time run. A
    connection that finds the file locked does not wait in line: SQLite's busy handler sleeps
    and retries (1, 2, 5, 10 … 100 ms), so a waiter wakes up to a millisecond after the
    holder finished, or later, and newcomers overtake it. Threads of one process therefore
    take this lock before BEGIN and give it back right after COMMIT or ROLLBACK: the next
    one starts as soon as the file is free. SQLite's own lock is still what keeps writers
    apart — other processes (``bbsgm tick``, a second worker) meet only that one.
    """

    write_lock: threading.Lock | None = None
    _holding = False
    _query_only = False

    def begin_transaction(self, read_only: bool) -> None:
        """``BEGIN IMMEDIATE`` in line for this process's write lock; for a reading
        transaction (``READ_ONLY``) a plain ``BEGIN``: a snapshot, no lock to wait for, and
        ``PRAGMA query_only`` on, so that a write there fails at once instead of slipping
        past the lock that keeps writers apart."""
        if read_only != self._query_only:
            self.execute(f"PRAGMA query_only={int(read_only)}")
            self._query_only = read_only
        if read_only:
            self.execute("BEGIN")
            return
        lock = self.write_lock
        if lock is not None and not self._holding:
            if not lock.acquire(timeout=BUSY_SECONDS):
                raise sqlite3.OperationalError("database is locked")
            self._holding = True
        try:
            self.execute("BEGIN IMMEDIATE")
        except BaseException:
            self._release()
            raise

    def commit(self) -> None:
        try:
            super().commit()
        finally:
            self._release()

    def rollback(self) -> None:
        try:
            super().rollback()
        finally:
            self._release()

    def close(self) -> None:
        try:
            super().close()
        finally:
            self._release()

    def _release(self) -> None:
        if self._holding:
            self._holding = False
            assert self.write_lock is not None
            self.write_lock.release()


# The execution option of a reading engine (``Database.read_engine``): its transactions only
# read. On SQLite they begin with a plain (deferred) ``BEGIN`` with ``PRAGMA query_only`` on;
# on PostgreSQL the reading engine also sets the dialect's ``postgresql_readonly`` (``SET
# TRANSACTION READ ONLY``), so a write there fails at once on both, instead of being lost
# when the session closes without a commit.
READ_ONLY = "bbsgm_read_only"


class RequestSession(Session):
    """A web request's session (app/web/deps.py). Its transactions read — through
    ``read_bind``, so on SQLite without the write lock — until ``begin_writes`` says the
    request writes (its unit of work). ``Session.get_bind`` is SQLAlchemy's documented place
    to choose the engine of each operation (its "custom vertical partitioning" recipe)."""

    def __init__(self, *args: Any, read_bind: Engine, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.read_bind = read_bind
        self.writes = False

    def get_bind(self, mapper: Any = None, **kwargs: Any) -> Any:
        if self.writes:
            return super().get_bind(mapper, **kwargs)
        return self.read_bind

    @contextmanager
    def reading(self) -> Iterator[None]:
        """A read of its own, through ``read_bind`` whatever the session's mode, ended
        (committed: it wrote nothing) at the block's end: the viewer's sign-in, which may
        come after the unit of work said the request writes, takes no write lock."""
        writes = self.writes
        if self.in_transaction():
            self.commit()
        self.writes = False
        try:
            yield
        finally:
            if self.in_transaction():
                self.commit()
            self.writes = writes

    def end_writes(self) -> None:
        """Give up the writes: roll them back, and read from here on (a route that answers a
        refusal on its form renders it without the write lock)."""
        self.rollback()
        self.writes = False

    def begin_writes(self) -> None:
        """From here on, this session's transactions write. A read still open is ended
        first (committed: it wrote nothing), so that no transaction spans both engines."""
        if self.writes:
            return
        if self.in_transaction():
            self.commit()
        self.writes = True


_AFTER_COMMIT = "bbsgm_after_commit"


def after_commit(session: Session, key: Hashable, action: Callable[[], None]) -> None:
    """Run ``action`` once the session's transaction commits, dropped if it rolls back; one
    action per ``key`` (a second one under the same key replaces the first). For sessions
    that ``follow_transactions`` (``Database``'s do), whose ``after_commit`` and
    ``after_rollback`` events run or drop them."""
    session.info.setdefault(_AFTER_COMMIT, {})[key] = action


def is_pending(session: Session, key: Hashable) -> bool:
    """An ``after_commit`` action is waiting under ``key``."""
    return key in session.info.get(_AFTER_COMMIT, {})


_WRITTEN = "bbsgm_written"


def attach_written(session: Session, instance: Any) -> None:
    """Attach ``instance``, whose row a Core statement of this transaction has just written
    (every column set, its primary key too), as persistent and clean — as if loaded:
    ``make_transient_to_detached``, then ``Session.add``. Changed later, it is flushed as an
    UPDATE like any loaded object. If the transaction rolls back it leaves the session, as an
    object the session had inserted would (sessions that ``follow_transactions``, as
    ``Database``'s do): its row is gone, and its id may go to the next row."""
    make_transient_to_detached(instance)
    session.add(instance)
    session.info.setdefault(_WRITTEN, []).append(instance)


def follow_transactions(target: sessionmaker[Any] | Session) -> None:
    """Listen to the commits and rollbacks of a session factory's sessions (``Database``'s
    own) or of one session made otherwise (the tests', inside a connection they roll back):
    what ``after_commit`` and ``attach_written`` need. SQLAlchemy's session events, on
    ``target`` only."""
    event.listen(target, "after_commit", _run_after_commit)
    event.listen(target, "after_rollback", _drop_after_commit)


def _run_after_commit(session: Session) -> None:
    session.info.pop(_WRITTEN, None)
    for action in session.info.pop(_AFTER_COMMIT, {}).values():
        action()


def _drop_after_commit(session: Session) -> None:
    session.info.pop(_AFTER_COMMIT, None)
    for instance in session.info.pop(_WRITTEN, []):
        if instance in session:
            session.expunge(instance)


class Database:
    """One engine and its session factory; created once per process from the settings."""

    def __init__(self, url: str, **engine_kwargs: Any) -> None:
        self.url = url
        self.engine = make_engine(url, **engine_kwargs)
        self.sessionmaker = sessionmaker(self.engine, expire_on_commit=False)
        # The same pool; its transactions only read (``READ_ONLY``).
        read_options: dict[str, Any] = {READ_ONLY: True}
        if self.engine.dialect.name == "postgresql":
            read_options["postgresql_readonly"] = True
        self.read_engine = self.engine.execution_options(**read_options)
        self.read_sessionmaker = sessionmaker(self.read_engine, expire_on_commit=False)
        self.request_sessionmaker = sessionmaker(
            self.engine,
            class_=RequestSession,
            read_bind=self.read_engine,
            expire_on_commit=False,
        )
        for factory in (self.sessionmaker, self.request_sessionmaker):
            follow_transactions(factory)
        self._checkpoint_pages: int | None = None  # defer_checkpoints
        # How many of this process's posts (the requests that do all their work in one
        # worker thread, app/web/deps.py ``write_lane``) may write at once, the others waiting
        # for their turn in the event loop: on SQLite one, as SQLite runs one write
        # transaction at a time (the write lock above keeps threads apart; this keeps the
        # posts waiting for it out of the worker threads); on PostgreSQL no limit.
        self.write_lane = anyio.CapacityLimiter(1) if self.is_sqlite else None

    @property
    def is_sqlite(self) -> bool:
        return self.engine.dialect.name == "sqlite"

    @contextmanager
    def session(self) -> Iterator[Session]:
        with self.sessionmaker() as session:
            yield session

    @contextmanager
    def read_session(self) -> Iterator[Session]:
        """A session that only reads. On SQLite its transactions begin with a plain
        (deferred) ``BEGIN``, taking neither this process's write lock nor SQLite's: in WAL
        mode a reader sees the database as of its first statement and neither waits for the
        writers nor holds them up (the live streams' reads, app/live/hub.py, which waited in
        line with the posts whose wake-ups they served). Nothing may be written in it: its
        writes would not be serialised with the others' (SQLite refuses them: ``query_only``).
        On PostgreSQL a plain session."""
        with self.read_sessionmaker() as session:
            yield session

    @property
    def is_sqlite_file(self) -> bool:
        return is_sqlite_file(self.engine.url)

    def defer_checkpoints(self, pages: int) -> None:
        """SQLite file: a commit copies the WAL's pages into the database file (a checkpoint)
        only once the WAL holds ``pages`` pages (SQLite's default: 1,000), so that
        ``checkpoint``, called often by a background runner, does it instead. A commit that
        checkpointed took about half of a post's commit, in the request and holding the
        write lock; the checkpoint of a runner runs in C
        without the GIL, beside the posts, and waits for none of them."""
        if not self.is_sqlite_file or self._checkpoint_pages == pages:
            return
        first = self._checkpoint_pages is None
        self._checkpoint_pages = pages
        if first:

            @event.listens_for(self.engine, "connect")
            def _on_connect(dbapi_connection: Any, _record: Any) -> None:
                dbapi_connection.execute(f"PRAGMA wal_autocheckpoint={self._checkpoint_pages}")
                # A WAL that grew while the checkpoints fell behind (a long reader) is cut
                # back to this when it starts over, not kept at its largest.
                dbapi_connection.execute(f"PRAGMA journal_size_limit={WAL_SIZE_LIMIT}")

        self.engine.dispose()  # the pooled connections come back with it

    def checkpoint(self) -> tuple[int, int, int]:
        """SQLite file: copies what the WAL holds into the database file as far as no
        reader still needs it (``PRAGMA wal_checkpoint(PASSIVE)``: waits for no reader or
        writer, takes no write lock); when it copied everything and no reader still reads
        the WAL, the next writer starts the WAL over. Returns
        SQLite's (busy, frames in the WAL, frames copied)."""
        if not self.is_sqlite_file:
            return (0, 0, 0)
        raw = self.engine.raw_connection()  # no transaction: the PRAGMA runs on its own
        try:
            driver: Any = raw.driver_connection
            busy, frames, copied = driver.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        finally:
            raw.close()
        return (int(busy), int(frames), int(copied))

    def dispose(self) -> None:
        self.engine.dispose()
