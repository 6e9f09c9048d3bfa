"""Full-text search over thread titles and posts (docs/archive.md, "Search"): Japanese partial
words through a trigram index, the short-query fallback, あぼーん and sealed commands."""

from __future__ import annotations

import asyncio
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from sqlalchemy import insert, text
from sqlalchemy.orm import Session

from app import main as app_main
from app import migrate
from app.api.turns import write_line
from app.archive import search as archive_search
from app.archive.search import MAX_HITS, SHORT_SCAN_WINDOW, search
from app.config import Settings
from app.db import Database
from app.errors import Invalid
from app.forum import service as forum
from app.models import Post, SealedCommand, Thread, User
from app.moderation import set_hidden
from tests.conftest import ApiUser
from tests.test_archive_helpers import SECRET, make_user, play, unique_words
from tests.test_forum_service import talk


def new_thread(session: Session, user: User, title: str, *bodies: str) -> Thread:
    board = forum.get_board(session, "chat")
    thread, _first = forum.create_thread(session, board, user, title, bodies[0], SECRET)
    for body in bodies[1:]:
        talk(session, thread.id, user, body)
    return thread


def _admin(session: Session) -> User:
    admin = make_user(session, "admin")
    admin.is_admin = True
    return admin


def test_a_japanese_word_is_found_from_its_middle(session: Session) -> None:
    user = make_user(session)
    word = unique_words(8)
    thread = new_thread(
        session, user, "雑談スレ", "はじめまして", f"昨日の{word}はすごかった\n二行目"
    )
    part = word[2:6]  # no spaces in Japanese: a word is found from any of its substrings
    result = search(session, part)
    assert result.mode == "index" and result.total == 1
    hit = result.posts[0]
    assert (hit.thread_id, hit.number, hit.author) == (thread.id, 2, user.name)
    assert hit.url == f"/threads/{thread.id}#2"
    assert f"<mark>{part}</mark>" in str(hit.snippet)
    assert "二行目" in str(hit.snippet)


def test_every_word_must_occur(session: Session) -> None:
    user = make_user(session)
    first, second = unique_words(), unique_words()
    new_thread(session, user, "スレ", f"{first}だけ", f"{first}と{second}の両方", f"{second}だけ")
    both = search(session, f"{first}　{second}")  # an ideographic space separates words too
    assert [h.number for h in both.posts] == [2]
    assert {h.number for h in search(session, first).posts} == {1, 2}


def test_thread_titles_are_searched(session: Session) -> None:
    user = make_user(session)
    word = unique_words()
    thread = new_thread(session, user, f"第三回{word}大会", "本文には出てこない")
    result = search(session, word[1:5])
    assert result.posts == []
    assert [t.thread_id for t in result.threads] == [thread.id]
    assert f"<mark>{word[1:5]}</mark>" in str(result.threads[0].title)


def test_results_are_newest_first_and_link_to_their_page(session: Session) -> None:
    user = make_user(session)
    word = unique_words()
    thread = new_thread(session, user, "長いスレ", *[f"{n}: {word}" for n in range(1, 4)])
    numbers = [h.number for h in search(session, word).posts]
    assert numbers == [3, 2, 1]
    assert archive_search.post_url(thread.id, 150, 100) == f"/threads/{thread.id}?page=2#150"


def test_full_width_query_finds_the_normalised_text(session: Session) -> None:
    user = make_user(session)
    word = unique_words(4)
    new_thread(session, user, "スレ", f"SET 主演 役者3 {word}")
    assert [h.number for h in search(session, f"ＳＥＴ {word}").posts] == [1]


@pytest.mark.parametrize("query", ['"', "%", "_", "*", "a OR b", "NEAR(", "(", "^", "\\"])
def test_query_syntax_is_taken_literally(session: Session, query: str) -> None:
    user = make_user(session)
    word = unique_words()
    new_thread(session, user, "スレ", f"{word}{query}{word}")
    assert [h.number for h in search(session, f"{word}{query}{word}").posts] == [1]
    search(session, query)  # never an error


def test_short_queries_scan_only_the_newest_posts(session: Session) -> None:
    user = make_user(session)
    word = unique_words(2)
    new_thread(session, user, "スレ", f"ここに{word}がある")
    result = search(session, word)
    assert result.mode == "scan" and result.window == SHORT_SCAN_WINDOW
    assert [h.number for h in result.posts][:1] == [1]
    # A long word goes through the index; a short one beside it only filters.
    long_word = unique_words(5)
    new_thread(session, user, "スレ", f"{long_word}と{word}", f"{long_word}だけ")
    mixed = search(session, f"{long_word} {word}")
    assert mixed.mode == "index" and [h.number for h in mixed.posts] == [1]


def test_hidden_posts_are_not_found_and_come_back_when_shown(session: Session) -> None:
    user = make_user(session)
    admin = _admin(session)
    word = unique_words()
    thread = new_thread(session, user, "スレ", "一つ目", f"消される{word}")
    assert search(session, word).total == 1
    set_hidden(session, thread.id, 2, admin, True)
    assert search(session, word).total == 0
    short = search(session, word[:2])  # the scanning fallback hides them too
    assert short.mode == "scan" and (thread.id, 2) not in {
        (h.thread_id, h.number) for h in short.posts
    }
    set_hidden(session, thread.id, 2, admin, False)
    assert search(session, word).total == 1


def test_sealed_commands_are_never_searchable(session: Session) -> None:
    played = play(session, stop_after=1)
    word = unique_words()
    session.add(
        SealedCommand(
            game_id=played.game.id,
            user_id=played.players[0].id,
            author_name=played.players[0].name,
            body=f"RULE {word}",
            ok=True,
            reply="",
        )
    )
    session.flush()
    assert search(session, word).total == 0
    assert search(session, word[:2]).total == 0


def test_a_renamed_thread_is_found_by_its_new_title(session: Session) -> None:
    user = make_user(session)
    old, new = unique_words(), unique_words()
    thread = new_thread(session, user, old, "本文")
    thread.title = new
    session.flush()
    assert search(session, old).threads == []
    assert [t.thread_id for t in search(session, new).threads] == [thread.id]


def test_counting_stops_after_the_cap(session: Session) -> None:
    user = make_user(session)
    word = unique_words()
    thread = new_thread(session, user, "多いスレ", "一")
    now = datetime.now(UTC)
    session.execute(
        insert(Post),
        [
            {
                "thread_id": thread.id,
                "number": n,
                "author_name": user.name,
                "daily_id": "x",
                "body": f"{n} {word}",
                "kind": "talk",
                "created_at": now,
            }
            for n in range(2, MAX_HITS + 3)
        ],
    )
    result = search(session, word, page=10_000)
    assert result.total == MAX_HITS and result.more
    assert result.page.number == result.page.count == MAX_HITS // 20


def test_bad_queries_are_invalid(session: Session) -> None:
    with pytest.raises(Invalid):
        search(session, "あ" * 201)
    with pytest.raises(Invalid):
        search(session, " ".join(f"語{n}" for n in range(9)))
    assert search(session, "   ").mode == "empty"


def test_the_search_uses_the_index(session: Session) -> None:
    """The search is an index lookup, not a scan of the posts table."""
    if session.get_bind().dialect.name == "sqlite":
        plan = session.execute(
            text(
                "EXPLAIN QUERY PLAN SELECT fts_posts.rowid FROM fts_posts JOIN posts AS p "
                "ON p.id = fts_posts.rowid WHERE fts_posts MATCH :m AND p.hidden_at IS NULL "
                "ORDER BY fts_posts.rowid DESC LIMIT 1001"
            ),
            {"m": '("幻の名作")'},
        ).all()
        details = " | ".join(str(row[-1]) for row in plan)
        assert "VIRTUAL TABLE INDEX" in details and "SCAN p" not in details, details
    else:
        session.execute(text("SET LOCAL enable_seqscan = off"))
        plan = session.execute(
            text("EXPLAIN SELECT id FROM posts WHERE hidden_at IS NULL AND body ILIKE '%幻の名作%'")
        ).all()
        details = " | ".join(str(row[0]) for row in plan)
        assert "fts_posts_body_trgm" in details, details


# --- SQLite: posts are indexed after their commit (migration 0008_search_backlog) -----------


def _indexed(session: Session, post_id: int) -> int:
    """How many rows of the SQLite index hold this post."""
    found = session.scalar(
        text("SELECT count(*) FROM fts_posts WHERE rowid = :id"), {"id": post_id}
    )
    return int(found or 0)


def _only_sqlite(session: Session) -> None:
    if session.get_bind().dialect.name != "sqlite":
        pytest.skip("PostgreSQL's trigram index is kept by the database, inside the transaction")


def test_a_post_is_indexed_after_its_transaction_and_a_search_finds_it_at_once(
    session: Session,
) -> None:
    _only_sqlite(session)
    user = make_user(session)
    word = unique_words()
    thread = new_thread(session, user, "スレ", "一つ目")
    post = talk(session, thread.id, user, f"あとで{word}")
    assert _indexed(session, post.id) == 0  # the post's own transaction leaves the index alone
    assert [h.number for h in search(session, word).posts] == [2]  # the search indexes first
    assert _indexed(session, post.id) == 1
    assert archive_search.index_backlog(session) == 0


def test_the_indexer_works_in_batches_and_passes_hidden_posts_over(session: Session) -> None:
    _only_sqlite(session)
    user = make_user(session)
    admin = _admin(session)
    archive_search.index_backlog(session)  # whatever other tests left
    word = unique_words()
    thread = new_thread(session, user, "スレ", f"{word} 1")
    posts = [talk(session, thread.id, user, f"{word} {n}") for n in range(2, 6)]
    set_hidden(session, thread.id, 3, admin, True)
    assert archive_search.index_backlog(session, batch=3) == 3  # the thread's post, 2 and 3
    assert archive_search.index_backlog(session, batch=3) == 2
    assert archive_search.index_backlog(session, batch=3) == 0
    assert [_indexed(session, p.id) for p in posts] == [1, 0, 1, 1]
    assert [h.number for h in search(session, word).posts] == [5, 4, 2, 1]


def test_a_post_hidden_and_shown_again_before_it_was_indexed_is_indexed_once(
    session: Session,
) -> None:
    _only_sqlite(session)
    user = make_user(session)
    admin = _admin(session)
    word = unique_words()
    thread = new_thread(session, user, "スレ", "一つ目")
    post = talk(session, thread.id, user, f"消して戻す{word}")
    set_hidden(session, thread.id, 2, admin, True)
    set_hidden(session, thread.id, 2, admin, False)
    assert _indexed(session, post.id) == 0  # not yet passed by the indexer: it adds the post
    assert search(session, word).total == 1
    assert _indexed(session, post.id) == 1
    set_hidden(session, thread.id, 2, admin, True)  # once indexed, the trigger takes it out
    assert _indexed(session, post.id) == 0
    assert search(session, word).total == 0


def test_a_post_passed_over_while_hidden_comes_back_when_shown(session: Session) -> None:
    _only_sqlite(session)
    user = make_user(session)
    admin = _admin(session)
    word = unique_words()
    thread = new_thread(session, user, "スレ", "一つ目")
    post = talk(session, thread.id, user, f"戻る{word}")
    set_hidden(session, thread.id, 2, admin, True)
    assert search(session, word).total == 0  # the indexer has passed it over now
    assert _indexed(session, post.id) == 0
    set_hidden(session, thread.id, 2, admin, False)
    assert _indexed(session, post.id) == 1
    assert search(session, word).total == 1


def test_the_server_indexes_new_posts_in_the_background(
    client: httpx.Client, alice: ApiUser, database: Database
) -> None:
    """SQLite: without any search, a running server puts a new post into the index within
    moments (BBSGM_SEARCH_INDEX_SECONDS, 1 s by default)."""
    if database.engine.dialect.name != "sqlite":
        pytest.skip("PostgreSQL's trigram index is kept by the database, inside the transaction")
    word = unique_words(8)
    made = alice.post("/api/boards/chat/threads", {"title": "背景", "body": f"裏で{word}"})
    assert made.status_code == 201, made.text
    match = {"m": f'"{word}"'}
    deadline = time.monotonic() + 60
    while True:
        with database.session() as session:
            found = session.scalar(
                text("SELECT count(*) FROM fts_posts WHERE fts_posts MATCH :m"), match
            )
        if found:
            break
        assert time.monotonic() < deadline, "the background indexer never indexed the post"
        time.sleep(0.05)
    assert found == 1


class _Batches:
    """Stands in for ``index_batch`` in ``app.main.index_run``: returns ``counts`` in turn and
    notes, at each call, whether the event loop's line of writes was held and what had
    happened before (``events``)."""

    def __init__(self, counts: list[int], line: asyncio.Lock, seconds: float = 0.0) -> None:
        self.counts = counts
        self.line = line
        self.seconds = seconds
        self.events: list[str] = []
        self.line_held: list[bool] = []
        self.calls = 0

    def __call__(self, database: Database) -> int:
        self.line_held.append(self.line.locked())
        self.events.append("batch")
        time.sleep(self.seconds)
        self.calls += 1
        return self.counts[self.calls - 1]


class _Pauses:
    """Stands in for ``asyncio.sleep`` in ``app.main.index_run``: each pause is noted with
    whether the line of writes was held meanwhile, and not slept."""

    def __init__(self, line: asyncio.Lock) -> None:
        self.line = line
        self.slept: list[float] = []
        self.line_held: list[bool] = []

    async def __call__(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.line_held.append(self.line.locked())
        await asyncio.sleep(0)


def _index_run(counts: list[int], seconds: float = 0.0) -> tuple[_Batches, _Pauses, int]:
    """``index_run`` with stand-ins for its batches and pauses, in an event loop of its own."""

    async def run() -> tuple[_Batches, _Pauses, int]:
        batches, pauses = _Batches(counts, write_line(), seconds), _Pauses(write_line())
        total = await app_main.index_run(Database("sqlite://"), batches, pauses)
        return batches, pauses, total

    return asyncio.run(run())


def test_each_batch_of_the_background_indexer_takes_its_turn_in_the_line_of_writes() -> None:
    """A batch runs while it holds the event loop's line of writes, and lets it go before the
    next one: a post that came during a batch is done before the next batch begins."""
    full = archive_search.INDEX_BATCH

    async def run() -> tuple[_Batches, int]:
        loop = asyncio.get_running_loop()
        batches = _Batches([full, full, 3], write_line())
        asked = threading.Event()

        async def post() -> None:
            asked.set()
            async with write_line():
                batches.events.append("post")

        def first_batch_with_a_post_coming(database: Database) -> int:
            if batches.calls == 0:
                loop.call_soon_threadsafe(lambda: loop.create_task(post()))
                assert asked.wait(10), "the post never started"
            return batches(database)

        pauses = _Pauses(write_line())
        total = await app_main.index_run(
            Database("sqlite://"), first_batch_with_a_post_coming, pauses
        )
        return batches, total

    batches, total = asyncio.run(run())
    assert total == 2 * full + 3
    assert batches.line_held == [True, True, True]
    assert batches.events == ["batch", "post", "batch", "batch"]


def test_the_background_indexer_leaves_the_line_to_the_posts_four_times_as_long_as_it_held_it() -> (
    None
):
    held = 0.02
    full = archive_search.INDEX_BATCH
    _batches, pauses, _total = _index_run([full, full, full - 1], seconds=held)
    assert app_main.INDEX_YIELD == 4
    assert len(pauses.slept) == 2  # after each full batch; none after the short one
    assert all(pause >= 4 * held for pause in pauses.slept)
    assert pauses.line_held == [False, False]  # the posts have the line meanwhile


def test_a_pause_of_the_background_indexer_is_at_most_a_second() -> None:
    """A batch that waited long for the write lock (another process writing) does not make
    the indexer wait four times that: the backlog would grow meanwhile."""
    full = archive_search.INDEX_BATCH
    held = app_main.INDEX_PAUSE_MAX / app_main.INDEX_YIELD + 0.05
    _batches, pauses, _total = _index_run([full, 0], seconds=held)
    assert pauses.slept == [app_main.INDEX_PAUSE_MAX] == [1.0]


def test_a_run_of_the_background_indexer_stops_at_a_short_batch() -> None:
    """The posts stored while a run worked off the backlog wait for the next run, instead of
    a small batch each as they come."""
    full = archive_search.INDEX_BATCH
    batches, _pauses, total = _index_run([full, full - 1, full, full])
    assert (batches.calls, total) == (2, 2 * full - 1)


def test_a_run_of_the_background_indexer_indexes_the_whole_backlog(
    settings: Settings, tmp_path: Path
) -> None:
    """The real batches, committed as the server commits them, on a SQLite file of the test's
    own (no other indexer at work on it): every post stored before the run is in the index
    after it."""
    own = settings.model_copy(update={"database_url": f"sqlite:///{tmp_path / 'own.db'}"})
    database = Database(own.database_url)
    try:
        migrate.upgrade(own, database.engine)
        word = unique_words(8)
        count = archive_search.INDEX_BATCH * 2 + 5
        with database.session() as session:
            forum.ensure_boards(session)
            user = make_user(session, "indexrun")
            new_thread(session, user, "溜まった", *(f"{word} {i}" for i in range(count)))
            session.commit()
        assert asyncio.run(app_main.index_run(database)) == count
        with database.session() as session:
            assert archive_search.index_backlog(session) == 0
            match = {"m": f'"{word}"'}
            query = text("SELECT count(*) FROM fts_posts WHERE fts_posts MATCH :m")
            assert session.scalar(query, match) == count
    finally:
        database.dispose()
