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
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker


def make_engine(url: str, **kwargs: Any) -> Engine:
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        connect_args: dict[str, Any] = {
            "check_same_thread": False,
            "timeout": BUSY_SECONDS,
            "factory": SerialisedConnection,
        }
        engine = create_engine(url, connect_args=connect_args, **kwargs)
        _configure_sqlite(engine)
        return engine
    if parsed.drivername == "postgresql":
        url = parsed.set(drivername="postgresql+psycopg").render_as_string(hide_password=False)
    return create_engine(url, pool_pre_ping=True, **kwargs)


def _configure_sqlite(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Take transaction control away from pysqlite so that BEGIN IMMEDIATE below is ours.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={BUSY_SECONDS * 1000}")
        if engine.url.database not in (None, "", ":memory:"):
            dbapi_connection.write_lock = _write_lock(engine.url.database)
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        conn.connection.dbapi_connection.begin_immediate()


BUSY_SECONDS = 30
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

    def begin_immediate(self) -> None:
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


class Database:
    """One engine and its session factory; created once per process from the settings."""

    def __init__(self, url: str, **engine_kwargs: Any) -> None:
        self.url = url
        self.engine = make_engine(url, **engine_kwargs)
        self.sessionmaker = sessionmaker(self.engine, expire_on_commit=False)

    @property
    def is_sqlite(self) -> bool:
        return self.engine.dialect.name == "sqlite"

    @contextmanager
    def session(self) -> Iterator[Session]:
        with self.sessionmaker() as session:
            yield session

    def dispose(self) -> None:
        self.engine.dispose()
