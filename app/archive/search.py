"""Full-text search over thread titles and posts, for Japanese (no spaces between words).

The index is made of trigrams (every run of three characters), so any substring of three or
more characters is found without scanning the posts:

- SQLite: FTS5 tables ``fts_posts`` (rowid = posts.id) and ``fts_threads`` (rowid =
  threads.id) with ``tokenize='trigram'``. Titles, and changes to posts (hidden, shown
  again), are kept in step by triggers (migrations 0004_search, 0008_search_backlog); new
  posts are indexed after their commit, in batches, by ``index_backlog`` — run in the
  background by the server and first thing by every search, so a search finds every post
  committed before it. Hidden posts (あぼーん) are kept out of the index.
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

import re
import unicodedata
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from markupsafe import Markup, escape
from sqlalchemy import ColumnElement, Select, func, or_, select, text
from sqlalchemy.orm import Session

from app.db import Database, is_postgres
from app.errors import Invalid
from app.forum.service import Page, page_of
from app.models import Board, Post, Thread

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

INDEX_BATCH = 50

_INDEXED_UP_TO = text("SELECT last_id FROM fts_posts_done")
_NEXT_BATCH = text(
    "SELECT count(*), max(id) FROM (SELECT id FROM posts WHERE id > :last ORDER BY id LIMIT :n)"
)
_INDEX_RANGE = text(
    "INSERT INTO fts_posts(rowid, body) SELECT id, body FROM posts "
    "WHERE id > :last AND id <= :upto AND hidden_at IS NULL"
)
_MARK_INDEXED = text("UPDATE fts_posts_done SET last_id = :upto")


def index_backlog(session: Session, batch: int = 2**62) -> int:
    """SQLite: puts up to ``batch`` posts committed since the last run into ``fts_posts``
    (hidden ones are passed over: the update trigger adds a post when it is shown again).
    Returns how many posts it passed; the caller commits. Nothing to do on PostgreSQL.

    A post's own transaction does not index it: tokenising it and writing a new FTS5 segment
    at every commit cost about a fifth of a command post (docs/benchmarks.md), while one
    segment for many posts costs little more than for one."""
    if is_postgres(session):
        return 0
    last = session.scalar(_INDEXED_UP_TO)
    count, upto = session.execute(_NEXT_BATCH, {"last": last, "n": batch}).one()
    if not count:
        return 0
    session.execute(_INDEX_RANGE, {"last": last, "upto": upto})
    session.execute(_MARK_INDEXED, {"upto": upto})
    return int(count)


def index_batch(database: Database) -> int:
    """One batch of the backlog (up to ``INDEX_BATCH`` posts) indexed and committed; returns
    how many posts it passed, 0 when nothing was left."""
    with database.session() as session:
        done = index_backlog(session, INDEX_BATCH)
        session.commit()
    return done


def index_pending(database: Database) -> int:
    """Every post not yet indexed, a batch per transaction, back to back; returns how many it
    passed. For scripts and the benchmarks: the server paces its batches among its posts
    (``app.main.index_run``)."""
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
    if not is_postgres(session) and any(t.indexed for t in terms):
        found = _fts_ids_newest(session, terms)
        mode, window = "index", None
    else:
        query = select(Post.id).where(Post.hidden_at.is_(None))
        mode, window = "index", None
        if not any(t.indexed for t in terms):
            mode, window = "scan", SHORT_SCAN_WINDOW
            newest = session.scalar(select(func.max(Post.id))) or 0
            query = query.where(Post.id > newest - SHORT_SCAN_WINDOW)
        # PostgreSQL: ILIKE on the long terms goes through the pg_trgm index (a bitmap scan of
        # the partial index on visible posts); the short ones only filter what it found.
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


def _fts_ids_newest(session: Session, terms: list[Term]) -> list[int]:
    """SQLite: driven from the FTS5 table (its rowids are post ids, so its order is the posts'
    order); the short terms filter the joined posts."""
    params: dict[str, Any] = {"match": fts_expression([t for t in terms if t.indexed])}
    filters = []
    for i, term in enumerate(t for t in terms if not t.indexed):
        alternatives = []
        for j, variant in enumerate(term.variants):
            params[f"s{i}_{j}"] = _like(variant)
            alternatives.append(f"p.body LIKE :s{i}_{j} ESCAPE '\\'")
        filters.append("(" + " OR ".join(alternatives) + ")")
    where = " AND ".join(["fts_posts MATCH :match", "p.hidden_at IS NULL", *filters])
    params["cap"] = MAX_HITS + 1
    rows = session.execute(
        text(
            "SELECT fts_posts.rowid FROM fts_posts JOIN posts AS p ON p.id = fts_posts.rowid "
            f"WHERE {where} ORDER BY fts_posts.rowid DESC LIMIT :cap"
        ),
        params,
    )
    return [int(r[0]) for r in rows]


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
    if index_backlog(session):  # every post committed before the search is found
        session.commit()
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
