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
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import orjson
import psycopg
from sqlalchemy import (
    Engine,
    create_engine,
    event,
)
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import DisconnectionError, InvalidatePoolError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.orm.attributes import instance_state, set_committed_value
from sqlalchemy import JSON, Insert, Table, bindparam, func, insert, inspect, literal_column, select  # LEGACY


def make_engine(url: str, **kwargs: Any) -> Engine:
    parsed = make_url(url)
    # JSON columns (a game's state, a move, a reply's error) through orjson: the stdlib's
    # encoder and decoder were ~3 % of the server's time under the post benchmark
    #. The same values come back; text is stored as UTF-8, not
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
        conn.connection.dbapi_connection.begin_immediate()


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

    def begin_immediate(self) -> None:
        if _READ_ONLY.get():  # Database.read_session: a snapshot, no lock to wait for
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


_READ_ONLY: ContextVar[bool] = ContextVar("bbsgm_sqlite_read_only", default=False)


_AFTER_COMMIT = "bbsgm_after_commit"


def after_commit(session: Session, key: Hashable, action: Callable[[], None]) -> None:
    """Run ``action`` once the session's transaction commits, dropped if it rolls back; one
    action per ``key`` (a second one under the same key replaces the first). For sessions
    made by ``Database``'s factory, whose ``after_commit`` and ``after_rollback`` events
    (SQLAlchemy's session events, on this factory only) run or drop them."""
    session.info.setdefault(_AFTER_COMMIT, {})[key] = action


def is_pending(session: Session, key: Hashable) -> bool:
    """An ``after_commit`` action is waiting under ``key``."""
    return key in session.info.get(_AFTER_COMMIT, {})


def _run_after_commit(session: Session) -> None:
    for action in session.info.pop(_AFTER_COMMIT, {}).values():
        action()


def _drop_after_commit(session: Session) -> None:
    session.info.pop(_AFTER_COMMIT, None)


class Database:
    """One engine and its session factory; created once per process from the settings."""

    def __init__(self, url: str, **engine_kwargs: Any) -> None:
        self.url = url
        self.engine = make_engine(url, **engine_kwargs)
        self.sessionmaker = sessionmaker(self.engine, expire_on_commit=False)
        event.listen(self.sessionmaker, "after_commit", _run_after_commit)
        event.listen(self.sessionmaker, "after_rollback", _drop_after_commit)
        self._checkpoint_pages: int | None = None  # defer_checkpoints

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
        writers nor holds them up (the live streams' reads, app/live.py, which waited in
        line with the posts whose wake-ups they served). Nothing may be written in it: its
        writes would not be serialised with the others'. On PostgreSQL a plain session."""
        token = _READ_ONLY.set(True)
        try:
            with self.sessionmaker() as session:
                yield session
        finally:
            _READ_ONLY.reset(token)

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


# LEGACY-UNTIL-GM-MERGE
class Prepared:
    """A Core statement of the post path, compiled by SQLAlchemy once per dialect (and per set
    of parameter names: an INSERT or UPDATE without ``.values()`` writes the columns it is
    given), then run on the session's own DBAPI connection, in its transaction.

    ``Connection.execute`` costs about 100 µs a statement in Python on top of what the driver
    does (the execution context, parameter processing, events, the result object) — several
    times the statement itself, and a command post runs about ten. Here the
    parameters go through the types' own bind processors (a datetime becomes SQLite's text, a
    dict JSON) and straight to the driver's cursor. What this does not do, so statements run
    this way must not need it: Python-side column defaults (give every column), result
    processing (read back only integers and text), SQLAlchemy's execution events, and the
    wrapping of driver errors in ``sqlalchemy.exc``.

    ``by_params=False``: the statement names every column it writes (an INSERT from a SELECT,
    a data-modifying WITH), so the parameters' names are never taken for columns — a WITH's
    UPDATE would otherwise also set any of its table's columns named like a parameter.
    """

    compilations = 0  # forms compiled so far, all statements (tests/test_post_path.py)

    def __init__(self, statement: Any, *, by_params: bool = True) -> None:
        self.statement = statement
        self.by_params = by_params
        self._forms: dict[tuple[str, tuple[str, ...]], _Form] = {}
        self._rows_forms: dict[tuple[str, tuple[str, ...], int], _Form] = {}

    def _form(self, dialect: Any, names: tuple[str, ...]) -> _Form:
        key = (dialect.name, names)
        form = self._forms.get(key)
        if form is None:
            keys = list(names) if self.by_params else None
            form = self._forms[key] = _compile(self.statement, dialect, keys)
        return form

    def _rows_form(self, dialect: Any, names: tuple[str, ...], count: int) -> _Form:
        """The INSERT of ``count`` rows in one VALUES list, row i's ``name`` given as
        ``name__i``."""
        key = (dialect.name, names, count)
        form = self._rows_forms.get(key)
        if form is None:
            columns = self.statement.table.c
            rows = [
                {name: bindparam(f"{name}__{i}", type_=columns[name].type) for name in names}
                for i in range(count)
            ]
            form = self._rows_forms[key] = _compile(self.statement.values(rows), dialect, None)
        return form

    def run(self, session: Session, params: dict[str, Any]) -> list[Any]:
        """Executes with ``params``; returns the rows of its RETURNING clause, if any."""
        connection = session.connection()  # begins the session's transaction if need be
        form = self._form(connection.dialect, tuple(params))
        cursor = _cursor(connection, form)
        cursor.execute(form.sql, form.arguments(params))
        returns_rows = form.returns_rows
        if returns_rows is None:  # psycopg makes the description's columns at every reading
            returns_rows = form.returns_rows = cursor.description is not None
        return cursor.fetchall() if returns_rows else []

    def fetch(self, session: Session, params: dict[str, Any]) -> list[tuple[Any, ...]]:
        """Executes a SELECT with ``params``; returns its rows with every column's value
        made what SQLAlchemy would give (the types' result processors: SQLite's text
        becomes a datetime, a JSON document a dict)."""
        connection = session.connection()
        dialect = connection.dialect
        form = self._form(dialect, tuple(params))
        cursor = _cursor(connection, form)
        cursor.execute(form.sql, form.arguments(params))
        rows = cursor.fetchall()
        results = form.results
        if results is None:
            columns = self.statement.selected_columns
            results = form.results = [
                (index, process)
                for index, (column, described) in enumerate(
                    zip(columns, cursor.description, strict=True)
                )
                if (
                    process := column.type.dialect_impl(dialect).result_processor(
                        dialect, described[1]
                    )
                )
                is not None
            ]
        if not results:
            return [tuple(row) for row in rows]
        processed = []
        for row in rows:
            values = list(row)
            for index, process in results:
                values[index] = process(values[index])
            processed.append(tuple(values))
        return processed

    def run_many(self, session: Session, rows: Sequence[dict[str, Any]]) -> None:
        """Executes once per row (every row with the same keys); nothing is returned. On
        PostgreSQL an INSERT of up to ``ROWS_IN_ONE`` rows is one statement of as many VALUES:
        psycopg's executemany enters pipeline mode, which costs more than the round trips it
        saves for a few rows."""
        if len(rows) == 1:
            self.run(session, rows[0])
            return
        connection = session.connection()
        dialect = connection.dialect
        names = tuple(rows[0])
        if (
            dialect.name == "postgresql"
            and isinstance(self.statement, Insert)
            and len(rows) <= ROWS_IN_ONE
        ):
            form = self._rows_form(dialect, names, len(rows))
            params = {f"{k}__{i}": v for i, row in enumerate(rows) for k, v in row.items()}
            _cursor(connection, form).execute(form.sql, form.arguments(params))
            return
        form = self._form(dialect, names)
        _cursor(connection, form).executemany(form.sql, [form.arguments(row) for row in rows])


def insert_json_rows(table: Table, names: Sequence[str], parameter: str) -> Insert:
    """PostgreSQL: the INSERT into ``table`` of the rows given as one JSON parameter
    ``parameter`` — an array of objects with the columns ``names`` — read back as rows of the
    table by ``json_populate_recordset``. One parameter whatever the number of rows: a VALUES
    list of a dozen parameters a row went past psycopg's fifty parameters at three rows,
    beyond which it parses the query again at every execution, and made one form per number
    of rows. A time goes in as ISO text of ``in_utc``
    (app.models), as its column would bind it."""
    rows = func.json_populate_recordset(
        literal_column(f"NULL::{table.name}"), bindparam(parameter, type_=JSON())
    ).table_valued(*names)
    return insert(table).from_select(list(names), select(*(rows.c[n] for n in names)))


ROWS_IN_ONE = 8  # Prepared.run_many: rows an INSERT writes in one VALUES list on PostgreSQL


def _compile(statement: Any, dialect: Any, column_keys: list[str] | None) -> _Form:
    compiled = statement.compile(dialect=dialect, column_keys=column_keys)
    if getattr(compiled, "escaped_bind_names", None):
        raise ValueError("Prepared takes plain parameter names only")
    processors = {}
    defaults = {}  # literals in the statement (``hits + 1``) are parameters too
    for name, bind in compiled.binds.items():
        process = bind.type.dialect_impl(dialect).bind_processor(dialect)
        if process is not None:
            processors[name] = process
        if not bind.required:
            defaults[name] = bind.effective_value
    order = tuple(compiled.positiontup) if compiled.positional else None
    Prepared.compilations += 1
    return _Form(compiled.string, order, processors, defaults, compiled.binds)


def _cursor(connection: Any, form: _Form) -> Any:
    """One driver cursor per pooled connection and statement form, kept with the connection.
    A psycopg cursor makes a new transformer (its parameters' dumpers, its columns' loaders,
    each looked up in the adapters map) whenever it runs a query other than its last one: one
    cursor for every statement made each execution pay for the lookups again
   . ``Prepared.run`` fetches its rows before anything else
    runs."""
    pooled = connection.connection  # the pool's proxy; ``info`` lives with the DBAPI connection
    driver = pooled.driver_connection
    kept = pooled.info.get(_CURSORS)
    if kept is None or kept[0] is not driver:
        kept = pooled.info[_CURSORS] = (driver, {})
    cursor = kept[1].get(form)
    if cursor is None:
        cursor = kept[1][form] = driver.cursor()
    return cursor


_CURSORS = "bbsgm_prepared_cursors"


class _Form:
    __slots__ = ("defaults", "names", "order", "processors", "results", "returns_rows", "sql")

    def __init__(
        self,
        sql: str,
        order: tuple[str, ...] | None,
        processors: dict[str, Any],
        defaults: dict[str, Any],
        names: Iterable[str],
    ) -> None:
        self.sql = sql
        self.order = order
        self.processors = processors
        self.defaults = defaults
        self.names = frozenset(names)
        self.results: list[tuple[int, Any]] | None = None  # set by the first ``fetch``
        self.returns_rows: bool | None = None  # set by the first ``run``

    def arguments(self, params: dict[str, Any]) -> Any:
        if self.defaults:
            params = {**self.defaults, **params}
        processors = self.processors
        if processors:
            params = {
                name: processors[name](value) if name in processors else value
                for name, value in params.items()
            }
        if self.order is None:  # named parameters (psycopg): the driver would name a missing one
            missing = self.names - params.keys()
            if missing:
                raise KeyError(f"parameters not given: {sorted(missing)}")
            return params
        return tuple(params[name] for name in self.order)


def attach_as_loaded(session: Session, instance: Any, key: tuple[Any, ...]) -> None:
    """A new object of a mapped class, with every column in its ``__dict__`` as its row holds
    it, put in the session as the ORM's loader puts a row's new object
    (``sqlalchemy.orm.loading``): its identity ``key`` (``(cls, (primary key,), None)``, as
    ``sqlalchemy.orm.identity_key``), the session, the identity map — persistent, nothing to
    flush, its relationships read when first used. A column left out would read as None:
    expire it (``Session.expire``) to have it read from the database instead.
    ``make_transient_to_detached`` and ``Session.add`` did the same at three times the cost:
    they walk every attribute's state to expire the unloaded ones, and the relationships'
    save-update cascade."""
    state = instance_state(instance)
    state.key = key
    state.session_id = session.hash_key
    session.identity_map.add(state)


class Loading:
    """A SELECT of one mapped class's columns (``select(*table.c, *extra)``), run as a
    ``Prepared`` statement, whose rows become objects of the class in the session as if the
    ORM had loaded them: each is put in the identity map with every column loaded (but the
    ``deferred`` ones, below) and nothing to flush, its relationships left to load lazily
    when read. An object already in the session is returned in its place — with its columns
    brought up to date when ``refresh`` is set (the ORM's ``populate_existing``), untouched
    otherwise.

    The ORM's own SELECT spends most of a short query's time in Python (the query's context,
    the loading machinery); for the post path's three reads — the token's user, the game, its
    seats — this took a command post from 4.8 to 4.1 ms of CPU in process on PostgreSQL
   . Pending changes are flushed first, as the ORM's autoflush
    would. ``load`` returns, per row, the object and the extra columns. The class must have a
    one-column primary key and no inheritance (the identity key is built here).

    ``deferred`` columns are left out of the SELECT: a new object has them expired, and the
    ORM reads them (one SELECT) when they are first used — for a large value the post path
    does not need (a game's options: a card game's ~10 KB pool, read at START and UNDO). An
    object already in the session keeps what it has of them, refreshed or not.

    ``offset``: the class's columns start there in the SELECT (a join's second class), and
    the extra columns are the ones after them; see ``adopt``.
    """

    def __init__(
        self,
        entity: type[Any],
        statement: Any,
        *,
        refresh: bool,
        deferred: Iterable[str] = (),
        offset: int = 0,
    ) -> None:
        mapper = inspect(entity)
        columns = list(statement.selected_columns)[offset:]
        self.entity = entity
        self.offset = offset
        self.new_instance = mapper.class_manager.new_instance
        self.prepared = Prepared(statement)
        self.refresh = refresh
        self.keys: list[str] = []
        self.deferred = sorted(deferred)
        wanted = sorted(p.key for p in mapper.column_attrs if p.key not in self.deferred)
        for column in columns[: len(wanted)]:
            self.keys.append(mapper.get_property_by_column(column).key)
        if sorted(self.keys) != wanted:
            raise ValueError("Loading needs every column of the class but the deferred, first")
        self.width = len(self.keys)
        (self.primary_key,) = (
            self.keys.index(mapper.get_property_by_column(c).key) for c in mapper.primary_key
        )

    def load(self, session: Session, params: dict[str, Any]) -> list[tuple[Any, tuple[Any, ...]]]:
        """Per row, its object and the columns after the class's (the ``extra``)."""
        end = self.offset + self.width
        return [(self.adopt(session, row), row[end:]) for row in self.rows(session, params)]

    def rows(self, session: Session, params: dict[str, Any]) -> list[tuple[Any, ...]]:
        """The statement's rows as they are (for ``adopt``), pending changes flushed first."""
        if session.autoflush and (session.new or session.dirty or session.deleted):
            session.flush()
        return self.prepared.fetch(session, params)

    def adopt(self, session: Session, row: Sequence[Any]) -> Any:
        """The object of the class's columns in ``row`` (from ``offset``), as ``load`` makes
        it: for a SELECT of several classes' columns, one ``Loading`` per class, each built
        on the same statement with its class's ``offset``, each adopting its part of a row
        that one of them fetched (``rows``)."""
        start = self.offset
        values = row[start : start + self.width]
        key = (self.entity, (values[self.primary_key],), None)  # as orm.identity_key
        loaded = session.identity_map.get(key)
        if loaded is None:
            # As the ORM's loader does: the columns written into the new object's dict,
            # not set one by one through the constructor's attribute events.
            loaded = self.new_instance()
            loaded.__dict__.update(zip(self.keys, values, strict=True))
            attach_as_loaded(session, loaded, key)
            if self.deferred:  # read from the database when first used
                session.expire(loaded, self.deferred)
        elif self.refresh:
            for name, value in zip(self.keys, values, strict=True):
                set_committed_value(loaded, name, value)
        return loaded
