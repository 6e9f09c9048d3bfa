"""Full-text search over thread titles and posts, for Japanese (no spaces between words).

The index is made of trigrams (every run of three characters), so any substring of three or
more characters is found without scanning the posts:

- SQLite: FTS5 table ``fts_threads`` (rowid = threads.id, ``tokenize='trigram'``) in the
  database, kept in step by triggers (migration 0004_search); the posts' FTS5 table
  ``fts_posts`` (rowid = posts.id) in a file of its own beside the database (``SearchFile``,
  migration 0015_search_file), filled after the posts' commits, in batches, by
  ``index_batch`` — run in the background by the server. Changes to posts (hidden, shown
  again, edited) are noted by a trigger in ``fts_changes`` and applied by the same batches. A
  search reads the index as far as it has got and the posts beyond it (and the changed ones)
  with ``LIKE``, so it finds every post committed before it. Hidden posts (あぼーん) are kept
  out of the index, and every query requires ``hidden_at IS NULL`` of the post as it is now.
- PostgreSQL: ``pg_trgm`` GIN indexes on ``posts.body`` (partial: ``hidden_at IS NULL``) and
  ``threads.title``, used by ``ILIKE '%term%'``.

A query is split on whitespace into terms that must all occur (AND). Each term is searched as
typed and in its NFKC form (``ＳＥＴ`` also finds ``SET``). Terms of three or more characters go
through the index; shorter ones (a trigram index cannot look up one or two characters) only
filter what the long terms found. A query made only of short terms scans the newest
``SHORT_SCAN_WINDOW`` posts instead, and says so (docs/archive.md). Sealed commands are not
posts: nothing here can reach them.
"""

from __future__ import annotations

import os
import re
import sqlite3
import threading
import unicodedata
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from markupsafe import Markup, escape
from sqlalchemy import (
    URL,
    ColumnElement,
    Connection,
    Engine,
    Select,
    create_engine,
    event,
    func,
    or_,
    select,
    text,
)
from sqlalchemy.orm import Session
from sqlalchemy.pool import NullPool

from app.db.engine import BUSY_SECONDS, WAL_SIZE_LIMIT, Database, is_postgres, is_sqlite_file
from app.db.models import Board, Post, Thread
from app.errors import Invalid
from app.forum.service import Page, page_of

TRIGRAM = 3
SHORT_SCAN_WINDOW = 20_000
MAX_TERMS = 8
MAX_QUERY_CHARS = 200
THREAD_HITS = 10
MAX_HITS = 1000  # counted and listed at most; beyond it the page says "1,000件以上"
SEARCH_OBJECT_PREFIX = "fts_"
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def is_search_object(name: str | None) -> bool:
    """The search index's own tables, triggers and indexes (not in the models; migrations/env.py
    and tests/test_migrations.py leave them out of the model comparison)."""
    return bool(name) and str(name).startswith(SEARCH_OBJECT_PREFIX)


# --- indexing (SQLite) ----------------------------------------------------------------------

INDEX_BATCH = 500  # posts and changed posts a transaction of the indexer, at most
SEARCH_FILE_SUFFIX = "-search"  # bbsgm.db → bbsgm.db-search (and its -wal, -shm)
SEARCH_FILE_VERSION = 2  # PRAGMA user_version of the search file; another one is made anew

_POSTS_TABLE = "CREATE VIRTUAL TABLE fts_posts USING fts5(body, tokenize='trigram')"
_SEARCH_FILE_SCHEMA = (
    _POSTS_TABLE,
    # Where the indexer is: every post up to last_id went in (or was passed over, hidden), and
    # every fts_changes row up to last_change was applied. Which database it was: source is
    # its fts_source token, last_stamp the created_at of post last_id there and change_post
    # the post_id of change last_change (a backup of the same database, restored, has the
    # same token, and may have other posts under those ids by now).
    "CREATE TABLE fts_state (one INTEGER PRIMARY KEY CHECK (one = 1), "
    "last_id INTEGER NOT NULL, last_change INTEGER NOT NULL, source TEXT NOT NULL, "
    "last_stamp TEXT, change_post INTEGER)",
    "INSERT INTO fts_state (one, last_id, last_change, source) VALUES (1, 0, 0, '')",
)


class SearchFile:
    """SQLite: the posts' search index, in a file of its own beside the database
    (``<database>-search``), with the database attached to its connections as ``bbs``.

    Tokenising posts into trigrams takes the write lock of the file it writes. In the
    database's own file that lock is the posts' one: every batch of the indexer held up every
    post meanwhile, ~8 % of a busy evening's posts. In a file of
    its own, the indexer's transactions lock only it, and its C work runs beside the posts. The
    file holds nothing but what the database's posts make again: deleted (with its -wal and
    -shm) or found to be of another database, it is built again from the first post.

    Its connections are opened for each use (no pool: nothing to dispose of, whichever
    ``Database`` made them) and their transactions are plain ``BEGIN``: SQLite takes a file's
    write lock only where a statement writes, so the indexer never takes the database's
    (``BEGIN IMMEDIATE`` would take every attached file's).
    """

    def __init__(self, database_path: str) -> None:
        self.database_path = database_path
        self.path = database_path + SEARCH_FILE_SUFFIX
        self.engine = create_engine(URL.create("sqlite", database=self.path), poolclass=NullPool)
        event.listen(self.engine, "connect", self._on_connect)
        event.listen(self.engine, "begin", _plain_begin)

    def _on_connect(self, dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # BEGIN is ours (_plain_begin)
        dbapi_connection.execute(f"PRAGMA busy_timeout={BUSY_SECONDS * 1000}")
        dbapi_connection.execute("PRAGMA journal_mode=WAL")
        dbapi_connection.execute("PRAGMA synchronous=NORMAL")
        # The WAL a rebuild grew is cut back when it starts over, not kept at its largest.
        dbapi_connection.execute(f"PRAGMA journal_size_limit={WAL_SIZE_LIMIT}")
        dbapi_connection.execute("ATTACH DATABASE ? AS bbs", (self.database_path,))

    def made(self) -> None:
        """The file's tables, made if missing (a new file, or one deleted meanwhile) or made
        again if of another version: looked at first through a connection of its own (the
        engine's have the database attached, and ``BEGIN IMMEDIATE`` there would take its
        write lock too), then made in a transaction that holds the file's write lock from its
        start, so that two processes doing it at once take turns."""
        raw = sqlite3.connect(self.path, isolation_level=None, timeout=BUSY_SECONDS)
        try:
            if raw.execute("PRAGMA user_version").fetchone()[0] == SEARCH_FILE_VERSION:
                return
            raw.execute("PRAGMA journal_mode=WAL")
            raw.execute("BEGIN IMMEDIATE")
            if raw.execute("PRAGMA user_version").fetchone()[0] != SEARCH_FILE_VERSION:
                for table in ("fts_posts", "fts_state"):
                    raw.execute(f"DROP TABLE IF EXISTS {table}")
                for statement in _SEARCH_FILE_SCHEMA:
                    raw.execute(statement)
                raw.execute(f"PRAGMA user_version={SEARCH_FILE_VERSION}")
            raw.execute("COMMIT")
        finally:
            raw.close()


def _plain_begin(connection: Any) -> None:
    connection.connection.dbapi_connection.execute("BEGIN")


_SEARCH_FILES: dict[str, SearchFile] = {}
_SEARCH_FILES_GUARD = threading.Lock()


def search_file(bind: Database | Engine | Connection) -> SearchFile | None:
    """The search file of this SQLite database file; None on PostgreSQL and for an in-memory
    database (which has no index: its searches scan, ``_post_page``)."""
    engine = bind.engine
    if not is_sqlite_file(engine.url):
        return None
    key = os.path.realpath(str(engine.url.database))
    found = _SEARCH_FILES.get(key)
    if found is None:
        with _SEARCH_FILES_GUARD:
            found = _SEARCH_FILES.get(key)
            if found is None:
                found = _SEARCH_FILES[key] = SearchFile(key)
    return found


@dataclass(frozen=True)
class IndexState:
    last_id: int  # every post up to it is indexed (or passed over, hidden)
    last_change: int  # every fts_changes row up to it is applied
    valid: bool = True  # False: the file is another database's; read as empty


def _state(connection: Connection) -> IndexState:
    """What the search file holds, as far as it is of this database: a file made for another
    one, or for this one as it was (a database restored from a backup, or replaced), counts
    as empty (``valid`` False)."""
    last_id, last_change, source, last_stamp, change_post = connection.execute(_STATE).one()
    token = connection.scalar(_SOURCE)
    stamp = connection.scalar(_STAMP, {"id": last_id}) if last_id else None
    changed = connection.scalar(_CHANGE_POST, {"id": last_change}) if last_change else None
    if source != token or stamp != last_stamp or changed != change_post:
        return IndexState(0, 0, valid=False)
    return IndexState(int(last_id), int(last_change))


_STATE = text("SELECT last_id, last_change, source, last_stamp, change_post FROM fts_state")
_SOURCE = text("SELECT token FROM bbs.fts_source")
_STAMP = text("SELECT CAST(created_at AS TEXT) FROM bbs.posts WHERE id = :id")
_CHANGE_POST = text("SELECT post_id FROM bbs.fts_changes WHERE id = :id")
_NEWEST = text("SELECT (SELECT max(id) FROM bbs.posts), (SELECT max(id) FROM bbs.fts_changes)")
_TAKE_THE_WRITE_LOCK = text("UPDATE fts_state SET one = 1")
_CHANGES = text("SELECT id, post_id FROM bbs.fts_changes WHERE id > :last ORDER BY id LIMIT :n")
_NEXT_BATCH = text(
    "SELECT count(*), max(id) FROM (SELECT id FROM bbs.posts WHERE id > :last ORDER BY id LIMIT :n)"
)
_INDEX_RANGE = text(
    "INSERT INTO fts_posts(rowid, body) SELECT id, body FROM bbs.posts "
    "WHERE id > :last AND id <= :upto AND hidden_at IS NULL"
)
_MARK = text(
    "UPDATE fts_state SET last_id = :upto, last_change = :change, source = :source, "
    "last_stamp = :stamp, change_post = :change_post"
)


def _nothing_to_do(found: SearchFile) -> bool:
    """The index has every post and change already (read only: an idle indexer writes
    nothing)."""
    with found.engine.begin() as connection:
        state = _state(connection)
        newest_post, newest_change = connection.execute(_NEWEST).one()
    return (
        state.valid
        and state.last_id == (newest_post or 0)
        and state.last_change == (newest_change or 0)
    )


def index_batch(database: Database | Engine, batch: int = INDEX_BATCH) -> int:
    """SQLite: the next changes to posts the search file holds (hidden, shown again, edited)
    applied, and the next posts committed since the last batch put in (hidden ones passed
    over), ``batch`` of them in all, in one transaction of the search file. Returns how many
    posts and changes it passed: 0 when nothing was left, and always on PostgreSQL (whose
    index the database keeps).

    A post's own transaction does not index it: tokenising it and writing an FTS5 segment at
    every commit cost about a fifth of a command post, while one segment for many posts costs
    little more than for one."""
    found = search_file(database)
    if found is None:
        return 0
    found.made()
    if _nothing_to_do(found):
        return 0
    with found.engine.begin() as connection:
        # A write first: the transaction waits here for the search file's lock (another
        # process's indexer), never later for a snapshot that went stale meanwhile.
        connection.execute(_TAKE_THE_WRITE_LOCK)
        state = _state(connection)
        if not state.valid:
            # Made again rather than emptied: deleting an FTS5 table's rows tokenises each.
            connection.execute(text("DROP TABLE fts_posts"))
            connection.execute(text(_POSTS_TABLE))
        changes = connection.execute(_CHANGES, {"last": state.last_change, "n": batch}).all()
        last_change = changes[-1][0] if changes else state.last_change
        # Posts beyond last_id are indexed below as they are now; the others again.
        again = sorted({post_id for _id, post_id in changes if post_id <= state.last_id})
        if again:
            ids = ", ".join(str(int(post_id)) for post_id in again)
            connection.execute(text(f"DELETE FROM fts_posts WHERE rowid IN ({ids})"))
            connection.execute(
                text(
                    "INSERT INTO fts_posts(rowid, body) SELECT id, body FROM bbs.posts "
                    f"WHERE id IN ({ids}) AND hidden_at IS NULL"
                )
            )
        count, upto = 0, state.last_id
        if room := batch - len(changes):
            count, newest = connection.execute(
                _NEXT_BATCH, {"last": state.last_id, "n": room}
            ).one()
            if count:
                upto = newest
                connection.execute(_INDEX_RANGE, {"last": state.last_id, "upto": upto})
        connection.execute(
            _MARK,
            {
                "upto": upto,
                "change": last_change,
                "source": connection.scalar(_SOURCE),
                "stamp": connection.scalar(_STAMP, {"id": upto}) if upto else None,
                "change_post": (
                    connection.scalar(_CHANGE_POST, {"id": last_change}) if last_change else None
                ),
            },
        )
    return int(count) + len(changes)


def index_pending(database: Database | Engine) -> int:
    """Every post and change not yet in the search file, a batch per transaction, back to
    back; returns how many it passed (the server's runner does the same, ``app.main``)."""
    total = 0
    while done := index_batch(database):
        total += done
    return total


@dataclass(frozen=True)
class Term:
    variants: tuple[str, ...]  # as typed, and its NFKC form when that differs

    @property
    def indexed(self) -> bool:
        return all(len(v) >= TRIGRAM for v in self.variants)


def parse_query(query: str) -> list[Term]:
    cleaned = _CONTROL.sub(" ", query)
    if len(cleaned) > MAX_QUERY_CHARS:
        raise Invalid(f"検索語は{MAX_QUERY_CHARS}文字までです。", field="q")
    terms: list[Term] = []
    seen: set[str] = set()
    for word in cleaned.split():
        if word in seen:
            continue
        seen.add(word)
        normal = unicodedata.normalize("NFKC", word).strip()
        variants = (word,) if not normal or normal == word else (word, normal)
        terms.append(Term(variants))
    if len(terms) > MAX_TERMS:
        raise Invalid(f"検索語は{MAX_TERMS}語までです。", field="q")
    return terms


@dataclass(frozen=True)
class PostHit:
    thread_id: int
    thread_title: str
    board: str
    number: int
    author: str
    created_at: datetime
    snippet: Markup
    url: str


@dataclass(frozen=True)
class ThreadHit:
    thread_id: int
    title: Markup
    board: str
    post_count: int
    url: str


@dataclass
class SearchResult:
    query: str
    terms: list[Term]
    posts: list[PostHit]
    threads: list[ThreadHit]
    page: Page
    total: int
    mode: str  # "index", "scan" (short terms only: the newest posts), "empty" (no query)
    window: int | None = None
    more: bool = False  # more than MAX_HITS posts match; only the newest MAX_HITS are listed

    def to_json(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "mode": self.mode,
            "window": self.window,
            "total": self.total,
            "more": self.more,
            "page": self.page.number,
            "pages": self.page.count,
            "threads": [
                {
                    "thread_id": t.thread_id,
                    "title_html": str(t.title),
                    "board": t.board,
                    "post_count": t.post_count,
                    "url": t.url,
                }
                for t in self.threads
            ],
            "posts": [
                {
                    "thread_id": p.thread_id,
                    "thread_title": p.thread_title,
                    "board": p.board,
                    "number": p.number,
                    "author": p.author,
                    "created_at": p.created_at.isoformat(),
                    "snippet_html": str(p.snippet),
                    "url": p.url,
                }
                for p in self.posts
            ],
        }


# --- matching ----------------------------------------------------------------------------


def _like(value: str) -> str:
    return "%" + value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _contains(column: Any, term: Term) -> ColumnElement[bool]:
    return or_(*(column.ilike(_like(v), escape="\\") for v in term.variants))


def fts_expression(terms: list[Term]) -> str:
    """An FTS5 query: every term a quoted string (its variants OR-ed), all of them AND-ed."""
    parts = []
    for term in terms:
        quoted = ['"' + v.replace('"', '""') + '"' for v in term.variants]
        parts.append("(" + " OR ".join(quoted) + ")")
    return " AND ".join(parts)


def _fts_ids(session: Session, table: str, long_terms: list[Term]) -> Select[Any]:
    """Rowids of an FTS5 table matching the long terms (a subquery that FTS5 answers)."""
    match = fts_expression(long_terms)
    return (
        select(text("rowid"))
        .select_from(text(table))
        .where(text(f"{table} MATCH :match").bindparams(match=match))
    )


@dataclass(frozen=True)
class PostPage:
    ids: list[int]
    total: int  # at most MAX_HITS
    more: bool  # more than MAX_HITS posts match
    page: Page
    mode: str
    window: int | None = None


def _post_page(session: Session, terms: list[Term], page: int, per_page: int) -> PostPage:
    """One page of matching visible post ids, newest first. At most MAX_HITS (+1, to know that
    there are more) ids are fetched: a page is a slice of them."""
    found_file = search_file(session.get_bind())
    if found_file is not None and any(t.indexed for t in terms):
        found = _indexed_ids_newest(session, found_file, terms)
        mode, window = "index", None
    else:
        query = select(Post.id).where(Post.hidden_at.is_(None))
        mode, window = "index", None
        if not any(t.indexed for t in terms):
            mode, window = "scan", SHORT_SCAN_WINDOW
            newest = session.scalar(select(func.max(Post.id))) or 0
            query = query.where(Post.id > newest - SHORT_SCAN_WINDOW)
        # PostgreSQL: ILIKE on the long terms goes through the pg_trgm index (a bitmap scan of
        # the partial index on visible posts); the short ones only filter what it found. An
        # in-memory SQLite database has no index: it scans.
        hits = query.where(*(_contains(Post.body, t) for t in terms)).cte("hits")
        if is_postgres(session):
            # Found through the index first, then ordered: without MATERIALIZED the planner may
            # walk the primary key backwards and test every post on the way.
            hits = hits.prefix_with("MATERIALIZED")
        found = list(
            session.scalars(select(hits.c.id).order_by(hits.c.id.desc()).limit(MAX_HITS + 1))
        )
    total = min(len(found), MAX_HITS)
    current = page_of(total, per_page, page)
    start = (current.number - 1) * per_page
    ids = found[start : min(start + per_page, total)]
    return PostPage(ids, total, len(found) > MAX_HITS, current, mode, window)


def _like_filters(terms: list[Term], params: dict[str, Any], prefix: str) -> list[str]:
    """``p.body LIKE …`` for each term (its variants OR-ed), the patterns put in ``params``."""
    filters = []
    for i, term in enumerate(terms):
        alternatives = []
        for j, variant in enumerate(term.variants):
            params[f"{prefix}{i}_{j}"] = _like(variant)
            alternatives.append(f"p.body LIKE :{prefix}{i}_{j} ESCAPE '\\'")
        filters.append("(" + " OR ".join(alternatives) + ")")
    return filters


def _indexed_ids_newest(session: Session, found_file: SearchFile, terms: list[Term]) -> list[int]:
    """SQLite: the newest matching visible posts, from the search file's index as far as the
    indexer has got, and from the posts themselves (``LIKE``) beyond it: the posts committed
    since its last batch, and those changed since (shown again, edited). So a search finds
    every post committed before it without writing anything, and never waits for the
    indexer.

    The index is read where it has the posts (its rowids are post ids, so its order is
    theirs; the short terms filter the joined posts), leaving out the posts changed since it
    had them as the session sees them; what it found is checked against the session's view
    of the posts, as the posts beyond it are read there."""
    found_file.made()
    long_terms = [t for t in terms if t.indexed]
    short_terms = [t for t in terms if not t.indexed]
    cap = MAX_HITS + 1
    ids: list[int] = []
    with found_file.engine.begin() as connection:
        state = _state(connection)
        pending = "SELECT post_id FROM fts_changes WHERE id > :last_change"
        params: dict[str, Any] = {
            "last_id": state.last_id,
            "last_change": state.last_change,
            "cap": cap,
        }
        changed = sorted({int(i) for i in session.scalars(text(pending), params)})
        if state.last_id:  # 0: nothing indexed yet, or the file is another database's
            found_params: dict[str, Any] = {"match": fts_expression(long_terms), "cap": cap}
            where = " AND ".join(
                [
                    "fts_posts MATCH :match",
                    "p.hidden_at IS NULL",
                    f"fts_posts.rowid NOT IN ({', '.join(map(str, changed))})",
                    *_like_filters(short_terms, found_params, "s"),
                ]
            )
            indexed = connection.execute(
                text(
                    "SELECT fts_posts.rowid FROM fts_posts JOIN bbs.posts AS p "
                    f"ON p.id = fts_posts.rowid WHERE {where} "
                    "ORDER BY fts_posts.rowid DESC LIMIT :cap"
                ),
                found_params,
            )
            ids = [int(r[0]) for r in indexed]
    if ids:  # as the session sees them (a post hidden since the index's reading)
        visible = set(
            session.scalars(select(Post.id).where(Post.id.in_(ids), Post.hidden_at.is_(None)))
        )
        ids = [i for i in ids if i in visible]
    # Two ranges, each read through the primary key (``id > x OR id IN (…)`` scanned the
    # whole table): the posts beyond the index, and the changed ones within it.
    matching = " AND ".join(["p.hidden_at IS NULL", *_like_filters(terms, params, "t")])
    ranges = [f"SELECT p.id FROM posts AS p WHERE p.id > :last_id AND {matching}"]
    if changed:
        within = ", ".join(map(str, changed))
        ranges.append(
            f"SELECT p.id FROM posts AS p WHERE p.id IN ({within}) AND p.id <= :last_id "
            f"AND {matching}"
        )
    beyond = session.execute(
        text(f"SELECT id FROM ({' UNION ALL '.join(ranges)}) ORDER BY id DESC LIMIT :cap"),
        params,
    )
    ids.extend(int(r[0]) for r in beyond)
    return sorted(ids, reverse=True)[:cap]


def _thread_ids(session: Session, terms: list[Term]) -> list[int]:
    long_terms = [t for t in terms if t.indexed]
    short_terms = [t for t in terms if not t.indexed]
    query = select(Thread.id)
    if long_terms and not is_postgres(session):
        query = query.where(Thread.id.in_(_fts_ids(session, "fts_threads", long_terms)))
    else:
        query = query.where(*(_contains(Thread.title, t) for t in long_terms))
    query = query.where(*(_contains(Thread.title, t) for t in short_terms))
    return list(session.scalars(query.order_by(Thread.id.desc()).limit(THREAD_HITS)))


# --- showing -----------------------------------------------------------------------------


def _needle_pattern(terms: list[Term]) -> re.Pattern[str] | None:
    needles = sorted({v for t in terms for v in t.variants}, key=len, reverse=True)
    if not needles:
        return None
    return re.compile("|".join(re.escape(n) for n in needles), re.IGNORECASE)


def highlight(text_value: str, terms: list[Term]) -> Markup:
    """The whole text escaped, each hit in ``<mark>``."""
    pattern = _needle_pattern(terms)
    if pattern is None:
        return Markup(escape(text_value))
    out: list[str] = []
    pos = 0
    for match in pattern.finditer(text_value):
        out.append(str(escape(text_value[pos : match.start()])))
        out.append(f"<mark>{escape(match.group(0))}</mark>")
        pos = match.end()
    out.append(str(escape(text_value[pos:])))
    return Markup("".join(out))


def snippet(body: str, terms: list[Term], before: int = 40, length: int = 160) -> Markup:
    """About ``length`` characters around the first hit, line breaks shown as ``／``."""
    flat = body.replace("\n", " ／ ")
    pattern = _needle_pattern(terms)
    first = pattern.search(flat) if pattern is not None else None
    start = max(0, first.start() - before) if first is not None else 0
    end = min(len(flat), start + length)
    shown = highlight(flat[start:end], terms)
    return Markup(("…" if start > 0 else "") + shown + ("…" if end < len(flat) else ""))


def post_url(thread_id: int, number: int, posts_per_page: int) -> str:
    page = (number - 1) // posts_per_page + 1
    return (
        f"/threads/{thread_id}#{number}"
        if page == 1
        else f"/threads/{thread_id}?page={page}#{number}"
    )


def search(
    session: Session, query: str, *, page: int = 1, per_page: int = 20, posts_per_page: int = 100
) -> SearchResult:
    terms = parse_query(query)
    if not terms:
        return SearchResult(query, [], [], [], page_of(0, per_page, 1), 0, "empty")
    found = _post_page(session, terms, page, per_page)
    ids, current = found.ids, found.page
    rows = session.execute(
        select(Post, Thread.title, Board.slug)
        .join(Thread, Thread.id == Post.thread_id)
        .join(Board, Board.id == Thread.board_id)
        .where(Post.id.in_(ids))
    ).all()
    by_id = {post.id: (post, title, board) for post, title, board in rows}
    posts = []
    for post_id in ids:
        if post_id not in by_id:
            continue
        post, title, board = by_id[post_id]
        if post.hidden_at is not None:  # the index never holds them; never show one anyway
            continue
        posts.append(
            PostHit(
                thread_id=post.thread_id,
                thread_title=title,
                board=board,
                number=post.number,
                author=post.author_name,
                created_at=post.created_at,
                snippet=snippet(post.body, terms),
                url=post_url(post.thread_id, post.number, posts_per_page),
            )
        )
    threads = []
    thread_ids = _thread_ids(session, terms) if current.number == 1 else []
    if thread_ids:
        by_thread = {
            t.id: t for t in session.scalars(select(Thread).where(Thread.id.in_(thread_ids)))
        }
        threads = [
            ThreadHit(
                thread_id=t.id,
                title=highlight(t.title, terms),
                board=t.board.slug,
                post_count=t.post_count,
                url=f"/threads/{t.id}",
            )
            for t in (by_thread[i] for i in thread_ids if i in by_thread)
        ]
    return SearchResult(
        query, terms, posts, threads, current, found.total, found.mode, found.window, found.more
    )
