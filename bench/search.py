"""Benchmark: the trigram-indexed search against a plain table scan, on 100,000 posts.

    python bench/search.py            # SQLite (a temporary file)
    BBSGM_TEST_DATABASE_URL=postgresql+psycopg://postgres@127.0.0.1:55432/postgres \\
        python bench/search.py        # SQLite, then PostgreSQL (a temporary database)

Builds the posts through the migrations (so the FTS5 triggers / pg_trgm indexes are the real
ones), then for each query times ``app.archive.search.search`` (count + first page + snippets
+ title hits) against the two queries it replaces done by scanning (``LIKE '%q%'`` on SQLite,
``strpos(lower(body), lower(q)) > 0`` on PostgreSQL, which no index can serve): count + first
page of ids. Best of 5 each. Prints one line per query and backend, and last
``search_ratio <x>``: total scan time / total indexed time, the smaller over the backends run.
"""

from __future__ import annotations

import itertools
import os
import random
import secrets
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import create_engine, insert, text
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.archive.search import MAX_HITS, index_pending, search
from app.config import Settings
from app.db import migrate
from app.db.engine import Database
from app.db.models import Board, Post, Thread, User

POSTS = 100_000
POSTS_PER_THREAD = 100
REPEATS = 5
VOCABULARY = 3000
RARE = "幻の名作ゴジラ対メカ"  # planted in five posts
THEMED = [
    "役者",
    "脚本家",
    "音楽家",
    "演出家",
    "主演",
    "助演",
    "予算",
    "公開",
    "映画",
    "スカウト",
    "興行収入",
    "撮影",
    "監督",
    "ロケ地",
    "台本",
    "初日",
    "舞台挨拶",
    "試写会",
    "特撮",
    "怪獣",
    "時代劇",
    "恋愛もの",
    "続編",
    "リメイク",
    "宣伝",
    "配給",
    "劇場",
]
CHARACTERS = (
    "アイウエオカキクケコサシスセソタチツテトナニヌネノハヒフヘホマミムメモヤユヨラリルレロワン"
    "山川海空雨雪花草木森林石岩金銀銅鉄火水土風雷光影音声色形星月日年時分秒春夏秋冬東西南北"
)
PARTICLES = ("が", "の", "を", "で", "と", "、", "は", "に")
TALK = ("よろしくお願いします", "今週はどうしようかな", "なるほど", "草", "うーん悩む")
COMMANDS = ("SET 主演 役者3", "SCOUT 役者", "DRAW", "END", "RELEASE", "CHOOSE 2")
SHORT_QUERIES = ("主演", "草")


def vocabulary(rng: random.Random) -> list[str]:
    """Themed words first (the most frequent), then made-up words of 2-4 characters."""
    words = list(THEMED)
    seen = set(words)
    while len(words) < VOCABULARY:
        word = "".join(rng.choice(CHARACTERS) for _ in range(rng.randint(2, 4)))
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words


WORDS = vocabulary(random.Random(7))
# Zipf: the word of rank r is used in proportion to 1 / r.
CUMULATIVE = list(itertools.accumulate(1 / (rank + 1) for rank in range(len(WORDS))))
QUERIES = (
    RARE,  # five posts
    "ゴジラ対メカ",  # the same, part of a word
    WORDS[1],  # the second most frequent word
    WORDS[300] if len(WORDS[300]) >= 3 else WORDS[300] + "の",  # middle of the vocabulary
    next(w for w in WORDS[2500:] if len(w) >= 3),  # a rare word
    "興行収入 舞台挨拶",  # two frequent words, AND
    "SET 主演",  # ASCII command and a short word (filter)
    "存在しない語句",  # no hit at all
)


def make_body(rng: random.Random, index: int) -> str:
    chosen = rng.choices(WORDS, cum_weights=CUMULATIVE, k=rng.randint(6, 20))
    parts = [word + rng.choice(PARTICLES) for word in chosen]
    if rng.random() < 0.3:
        parts.append("\n" + rng.choice(COMMANDS))
    parts.append("\n" + rng.choice(TALK))
    if index % (POSTS // 5) == 7:
        parts.insert(3, RARE)
    return "".join(parts)


def fill(database: Database) -> None:
    rng = random.Random(20261122)
    start = datetime(2026, 1, 1, tzinfo=UTC)
    with database.session() as session:
        user = User(name="bench", password_hash="x")
        board = Board(slug="bench", title="ベンチ", description="")
        session.add_all([user, board])
        session.flush()
        threads = POSTS // POSTS_PER_THREAD
        session.execute(
            insert(Thread),
            [
                {
                    "board_id": board.id,
                    "title": f"第{n}回 {rng.choice(WORDS)}{rng.choice(WORDS)}の卓",
                    "author_id": user.id,
                    "created_at": start + timedelta(minutes=n),
                    "last_post_at": start + timedelta(minutes=n),
                    "post_count": POSTS_PER_THREAD,
                }
                for n in range(threads)
            ],
        )
        thread_ids = [row[0] for row in session.execute(text("SELECT id FROM threads ORDER BY id"))]
        batch: list[dict[str, object]] = []
        for index in range(POSTS):
            thread_id = thread_ids[index // POSTS_PER_THREAD]
            batch.append(
                {
                    "thread_id": thread_id,
                    "number": index % POSTS_PER_THREAD + 1,
                    "author_id": user.id,
                    "author_name": "bench",
                    "daily_id": "benchID0",
                    "body": make_body(rng, index),
                    "kind": "talk",
                    "created_at": start + timedelta(seconds=index),
                }
            )
            if len(batch) == 5000:
                session.execute(insert(Post), batch)
                batch = []
        if batch:
            session.execute(insert(Post), batch)
        session.commit()


def best(action: Callable[[], object]) -> float:
    times = []
    for _ in range(REPEATS):
        began = time.perf_counter()
        action()
        times.append(time.perf_counter() - began)
    return min(times)


def scan(session: Session, query: str, postgres: bool) -> tuple[int, list[int]]:
    """The plain scan the index replaces: every term tested against every visible post."""
    terms = query.split()
    params = {f"t{i}": term for i, term in enumerate(terms)}
    if postgres:
        tests = [f"strpos(lower(body), lower(:t{i})) > 0" for i in range(len(terms))]
    else:
        params = {k: f"%{v}%" for k, v in params.items()}
        tests = [f"body LIKE :t{i}" for i in range(len(terms))]
    where = " AND ".join(["hidden_at IS NULL", *tests])
    hits = f"SELECT id FROM posts WHERE {where} ORDER BY id DESC"
    total = session.execute(
        text(f"SELECT count(*) FROM ({hits} LIMIT {MAX_HITS + 1}) AS hits"), params
    ).scalar_one()
    ids = session.scalars(text(f"{hits} LIMIT 20"), params).all()
    return min(int(total), MAX_HITS), list(ids)


def run(name: str, database: Database) -> float:
    postgres = database.engine.dialect.name == "postgresql"
    began = time.perf_counter()
    fill(database)
    index_pending(database)  # SQLite indexes new posts after their commit (a no-op on PostgreSQL)
    if postgres:
        with database.engine.connect() as conn:
            conn.execute(text("ANALYZE posts"))
            conn.execute(text("ANALYZE threads"))
            conn.commit()
    print(f"{name}: {POSTS:,} posts written in {time.perf_counter() - began:.1f}s")
    indexed_total = scanned_total = 0.0
    with database.session() as session:
        for query in QUERIES:
            result = search(session, query)
            count, _ids = scan(session, query, postgres)
            if result.total != count:
                raise SystemExit(f"{name}: {query!r}: index found {result.total}, scan {count}")
            indexed = best(lambda q=query: search(session, q))
            scanned = best(lambda q=query: scan(session, q, postgres))
            indexed_total += indexed
            scanned_total += scanned
            print(
                f"{name}: {query!r}: {count} hits ({result.mode}), index {indexed * 1000:.2f} ms, "
                f"scan {scanned * 1000:.2f} ms, x{scanned / indexed:.1f}"
            )
        for query in SHORT_QUERIES:
            result = search(session, query)
            took = best(lambda q=query: search(session, q))
            print(
                f"{name}: {query!r} (short: newest {result.window:,} posts scanned): "
                f"{result.total} hits, {took * 1000:.2f} ms"
            )
        session.rollback()
    ratio = scanned_total / indexed_total
    print(f"{name}: search_ratio {ratio:.1f}")
    return ratio


@contextmanager
def sqlite_database() -> Iterator[Database]:
    with tempfile.TemporaryDirectory() as directory:
        settings = Settings(database_url=f"sqlite:///{directory}/bench.db", secret_key="bench")
        database = Database(settings.database_url)
        migrate.upgrade(settings, database.engine)
        try:
            yield database
        finally:
            database.dispose()


@contextmanager
def postgres_database(server: str) -> Iterator[Database]:
    url = make_url(server).set(drivername="postgresql+psycopg")
    name = f"bbsgm_bench_{os.getpid()}_{secrets.token_hex(3)}"
    admin = create_engine(url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    target = url.set(database=name).render_as_string(hide_password=False)
    settings = Settings(database_url=target, secret_key="bench")
    database = Database(target)
    try:
        migrate.upgrade(settings, database.engine)
        yield database
    finally:
        database.dispose()
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def main() -> None:
    ratios = []
    with sqlite_database() as database:
        ratios.append(run("sqlite", database))
    server = os.environ.get("BBSGM_TEST_DATABASE_URL")
    if server:
        with postgres_database(server) as database:
            ratios.append(run("postgresql", database))
    print(f"search_ratio {min(ratios):.1f}")


if __name__ == "__main__":
    main()
