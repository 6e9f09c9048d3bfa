"""Engine and session factory.

SQLite: WAL, foreign keys on, and every transaction opened with ``BEGIN IMMEDIATE`` so that two
writers never both read a thread's post count and then race to write (the レス番 must have no gaps
and no duplicates). PostgreSQL: psycopg 3; writers lock what they number (a game with
``SELECT … FOR UPDATE``, a thread's レス番 with ``UPDATE … RETURNING``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker


def make_engine(url: str, **kwargs: Any) -> Engine:
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        connect_args = {"check_same_thread": False, "timeout": 30}
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
        cursor.execute("PRAGMA busy_timeout=30000")
        if engine.url.database not in (None, "", ":memory:"):
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        conn.exec_driver_sql("BEGIN IMMEDIATE")


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
