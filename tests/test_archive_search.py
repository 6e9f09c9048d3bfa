"""Full-text search over thread titles and posts (docs/archive.md, "Search"): Japanese partial
words through a trigram index, the short-query fallback, あぼーん and sealed commands."""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import event, insert, select, text, update
from sqlalchemy.orm import Session

from app import main as app_main
from app.archive import search as archive_search
from app.archive.search import MAX_HITS, SHORT_SCAN_WINDOW, search
from app.config import Settings
from app.db import migrate
from app.db.engine import Database, _write_lock
from app.db.models import Post, SealedCommand, Thread, User
from app.errors import Invalid
from app.forum import service as forum
from app.forum.moderation import set_hidden
from app.web import archive_pages
from tests.conftest import ApiUser
from tests.test_archive_helpers import SECRET, make_user, play, unique_words
from tests.test_forum_service import talk
from tests.test_pages import register


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
    # Two of the 33 test kanji may be in another test's committed titles (found in CI): the
    # sealed command must add nothing to what the short word finds, whatever that is.
    short_before = search(session, word[:2]).total
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
    assert search(session, word[:2]).total == short_before


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


def test_the_search_uses_the_index(session: Session, tmp_path: Path) -> None:
    """The search is an index lookup, not a scan of the posts table."""
    if session.get_bind().dialect.name == "sqlite":
        database = _own_database(tmp_path)
        try:
            found = archive_search.search_file(database)
            assert found is not None
            found.made()
            with found.engine.begin() as connection:
                plan = connection.execute(
                    text(
                        "EXPLAIN QUERY PLAN SELECT fts_posts.rowid FROM fts_posts "
                        "JOIN bbs.posts AS p ON p.id = fts_posts.rowid "
                        "WHERE fts_posts MATCH :m AND p.hidden_at IS NULL "
                        "ORDER BY fts_posts.rowid DESC LIMIT 1001"
                    ),
                    {"m": '("幻の名作")'},
                ).all()
        finally:
            database.dispose()
        details = " | ".join(str(row[-1]) for row in plan)
        assert "VIRTUAL TABLE INDEX" in details and "SCAN p" not in details, details
    else:
        session.execute(text("SET LOCAL enable_seqscan = off"))
        plan = session.execute(
            text("EXPLAIN SELECT id FROM posts WHERE hidden_at IS NULL AND body ILIKE '%幻の名作%'")
        ).all()
        details = " | ".join(str(row[0]) for row in plan)
        assert "fts_posts_body_trgm" in details, details


def test_the_posts_beyond_the_index_are_read_through_the_primary_key(own: Database) -> None:
    """SQLite: the LIKE over the posts the indexer has not reached (and the changed ones)
    reads those ranges of ``posts``, not the whole table."""
    word = unique_words()
    thread, _posts = _thread(own, f"{word} 1", f"{word} 2")
    archive_search.index_pending(own)
    _hide(own, thread, 1, True)
    _hide(own, thread, 1, False)  # changed since the index had it
    _thread(own, f"{word} 3")  # beyond the index
    seen: list[tuple[str, Any]] = []

    def keep(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_args: Any) -> None:
        if "UNION ALL" in statement:
            seen.append((statement, parameters))

    event.listen(own.engine, "before_cursor_execute", keep)
    try:
        assert _numbers(own, word) == [1, 2, 1]
    finally:
        event.remove(own.engine, "before_cursor_execute", keep)
    assert len(seen) == 1
    statement, parameters = seen[0]
    with own.engine.connect() as connection:
        plan = connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {statement}", parameters).all()
    details = " | ".join(str(row[-1]) for row in plan)
    assert "SCAN p" not in details, details
    assert details.count("SEARCH p USING INTEGER PRIMARY KEY") == 2, details


# --- SQLite: the posts' index is a file of its own, filled after the posts' commits --------
# (migration 0015_search_file). These tests commit, so each has a database file of its own:
# the shared one's test sessions are rolled back, and the search file reads what is committed.


def _own_database(tmp_path: Path, name: str = "own.db") -> Database:
    url = f"sqlite:///{tmp_path / name}"
    settings = Settings(database_url=url, secret_key=SECRET, tick_seconds=0, deliver_seconds=0)
    database = Database(url)
    migrate.upgrade(settings, database.engine)
    with database.session() as session:
        forum.ensure_boards(session)
        session.commit()
    return database


@pytest.fixture
def own(session: Session, tmp_path: Path) -> Iterator[Database]:
    """A SQLite file of the test's own, migrated, with the boards (skipped on PostgreSQL, whose
    index the database keeps inside the post's own transaction)."""
    if session.get_bind().dialect.name != "sqlite":
        pytest.skip("PostgreSQL's trigram index is kept by the database, inside the transaction")
    database = _own_database(tmp_path)
    yield database
    database.dispose()


def _indexed(database: Database, post_id: int) -> int:
    """How many rows of the search file's index hold this post."""
    found = archive_search.search_file(database)
    assert found is not None
    found.made()
    with found.engine.begin() as connection:
        count = connection.scalar(
            text("SELECT count(*) FROM fts_posts WHERE rowid = :id"), {"id": post_id}
        )
    return int(count or 0)


def _numbers(database: Database, query: str) -> list[int]:
    with database.session() as session:
        return [hit.number for hit in search(session, query).posts]


def _hide(database: Database, thread: Thread, number: int, hidden: bool) -> None:
    with database.session() as session:
        set_hidden(session, thread.id, number, _admin(session), hidden)
        session.commit()


def _thread(database: Database, *bodies: str) -> tuple[Thread, list[Post]]:
    with database.session() as session:
        user = make_user(session)
        thread = new_thread(session, user, "スレ", *bodies)
        posts = list(
            session.scalars(select(Post).where(Post.thread_id == thread.id).order_by(Post.number))
        )
        session.commit()
    return thread, posts


def test_a_post_is_indexed_after_its_transaction_and_a_search_finds_it_at_once(
    own: Database,
) -> None:
    word = unique_words()
    _made, posts = _thread(own, "一つ目", f"あとで{word}")
    assert _indexed(own, posts[1].id) == 0  # the post's own transaction leaves the index alone
    assert _numbers(own, word) == [2]  # found beyond the index
    assert _indexed(own, posts[1].id) == 0  # and the search wrote nothing
    assert archive_search.index_pending(own) == 2
    assert _indexed(own, posts[1].id) == 1
    assert _numbers(own, word) == [2]  # once, through the index now
    assert archive_search.index_batch(own) == 0


def test_the_indexer_works_in_batches_and_passes_hidden_posts_over(own: Database) -> None:
    word = unique_words()
    thread, posts = _thread(own, *(f"{word} {n}" for n in range(1, 6)))
    _hide(own, thread, 3, True)
    assert archive_search.index_batch(own, batch=3) == 1 + 2  # 3's change, posts 1–2
    assert archive_search.index_batch(own, batch=3) == 3  # posts 3 (passed over), 4, 5
    assert archive_search.index_batch(own, batch=3) == 0
    assert [_indexed(own, p.id) for p in posts] == [1, 1, 0, 1, 1]
    assert _numbers(own, word) == [5, 4, 2, 1]


def test_a_post_hidden_after_it_was_indexed_is_never_found_and_leaves_the_index(
    own: Database,
) -> None:
    word = unique_words()
    thread, posts = _thread(own, "一つ目", f"消して戻す{word}")
    archive_search.index_pending(own)
    _hide(own, thread, 2, True)
    assert _indexed(own, posts[1].id) == 1  # until the next batch…
    assert _numbers(own, word) == []  # …but never found
    archive_search.index_pending(own)
    assert _indexed(own, posts[1].id) == 0
    _hide(own, thread, 2, False)
    assert _numbers(own, word) == [2]  # shown again: found at once
    archive_search.index_pending(own)
    assert _indexed(own, posts[1].id) == 1
    assert _numbers(own, word) == [2]


def test_a_post_passed_over_while_hidden_comes_back_when_shown(own: Database) -> None:
    word = unique_words()
    thread, posts = _thread(own, "一つ目", f"戻る{word}")
    _hide(own, thread, 2, True)
    archive_search.index_pending(own)  # passes it over
    assert _indexed(own, posts[1].id) == 0
    _hide(own, thread, 2, False)
    assert _numbers(own, word) == [2]
    archive_search.index_pending(own)
    assert _indexed(own, posts[1].id) == 1


def test_an_edited_post_is_found_by_its_new_words_only(own: Database) -> None:
    """A post's body rewritten (a deadline notice, app/gm/deadlines.py) after the indexer had
    it: the old words no longer find it, the new ones do, before the next batch and after."""
    old, new = unique_words(), unique_words()
    _made, posts = _thread(own, "一つ目", f"旧{old}")
    archive_search.index_pending(own)
    with own.session() as session:
        session.execute(update(Post).where(Post.id == posts[1].id).values(body=f"新{new}"))
        session.commit()
    assert (_numbers(own, old), _numbers(own, new)) == ([], [2])
    archive_search.index_pending(own)
    assert (_numbers(own, old), _numbers(own, new)) == ([], [2])


def test_a_batch_of_the_indexer_never_holds_a_post_up(own: Database) -> None:
    """The indexer's transaction locks the search file only: in the middle of a real batch
    (as it puts the new posts in), a post writes and commits (were the database's write lock
    held by the indexer, the post, in the same thread, could never take it)."""
    word = unique_words()
    thread, _posts = _thread(own, "一つ目")
    found = archive_search.search_file(own)
    assert found is not None
    posted: list[bool] = []

    def post_meanwhile(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if statement.startswith("INSERT INTO fts_posts(rowid, body) SELECT id, body"):
            with own.session() as session:
                talk(session, thread.id, make_user(session), f"同時に{word}")
                session.commit()
                posted.append(True)

    event.listen(found.engine, "before_cursor_execute", post_meanwhile)
    try:
        assert archive_search.index_batch(own) == 1
    finally:
        event.remove(found.engine, "before_cursor_execute", post_meanwhile)
    assert posted == [True]
    assert _numbers(own, word) == [2]
    assert archive_search.index_pending(own) == 1


def test_an_idle_indexer_writes_nothing(own: Database) -> None:
    """With every post indexed, a batch only reads: it neither waits for the search file's
    write lock (held here by another connection) nor takes it."""
    _thread(own, "一つ目", "二つ目")
    archive_search.index_pending(own)
    found = archive_search.search_file(own)
    assert found is not None
    holder = sqlite3.connect(found.path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    done: list[int] = []
    try:
        batch = threading.Thread(target=lambda: done.append(archive_search.index_batch(own)))
        batch.start()
        batch.join(timeout=10)
        assert done == [0], "the idle batch waited for the search file's write lock"
    finally:
        holder.execute("ROLLBACK")
        holder.close()
        batch.join()


def test_a_restored_backup_is_not_taken_for_the_database_the_index_was_made_from(
    own: Database, tmp_path: Path
) -> None:
    """A backup of the same database (the same ``fts_source`` token), restored after the
    index had gone further, and written to since up to the index's last post: the posts
    under those ids are others now, and the index is made again."""
    old_word, new_word = unique_words(), unique_words()
    _thread(own, "一つ目")
    backup = tmp_path / "backup.db"
    path = own.url.split("///")[1]
    live, copy = sqlite3.connect(path), sqlite3.connect(str(backup))
    try:
        live.backup(copy)
    finally:
        live.close()
        copy.close()
    _thread(own, f"{old_word} 1", f"{old_word} 2")
    archive_search.index_pending(own)  # the index is at post 3
    own.dispose()
    for suffix in ("-wal", "-shm"):
        Path(path + suffix).unlink(missing_ok=True)
    shutil.copy(backup, path)  # restored: post 1 only
    _thread(own, f"{new_word} 1", f"{new_word} 2")  # posts 2 and 3 again, other ones
    assert _numbers(own, old_word) == []
    assert _numbers(own, new_word) == [2, 1]
    archive_search.index_pending(own)
    assert (_numbers(own, old_word), _numbers(own, new_word)) == ([], [2, 1])
    assert [_indexed(own, post_id) for post_id in (1, 2, 3)] == [1, 1, 1]


def test_a_search_file_of_another_database_is_never_read_and_is_built_again(
    own: Database, tmp_path: Path
) -> None:
    """A database restored from a backup, or replaced, next to the search file of another:
    the search file notes which database it indexes (``fts_source``)."""
    theirs_word, ours_word = unique_words(), unique_words()
    other = _own_database(tmp_path, "other.db")
    try:
        _thread(other, *(f"{theirs_word} {n}" for n in range(5)))
        archive_search.index_pending(other)
        other_file = archive_search.search_file(other)
        assert other_file is not None
        ours_file = archive_search.search_file(own)
        assert ours_file is not None
        shutil.copy(other_file.path, ours_file.path)
    finally:
        other.dispose()
    _thread(own, *(f"{ours_word} {n}" for n in range(1, 7)))  # more posts than theirs
    assert _numbers(own, theirs_word) == []  # post ids 1–5 exist here too, not those words
    assert _numbers(own, ours_word) == [6, 5, 4, 3, 2, 1]
    assert archive_search.index_pending(own) == 6
    assert _numbers(own, theirs_word) == []
    assert _numbers(own, ours_word) == [6, 5, 4, 3, 2, 1]
    assert [_indexed(own, post_id) for post_id in range(1, 7)] == [1] * 6


def test_a_deleted_search_file_is_built_again_from_the_first_post(own: Database) -> None:
    word = unique_words()
    _thread(own, f"{word} 1", f"{word} 2")
    archive_search.index_pending(own)
    found = archive_search.search_file(own)
    assert found is not None
    for suffix in ("", "-wal", "-shm"):
        Path(found.path + suffix).unlink(missing_ok=True)
    assert _numbers(own, word) == [2, 1]  # beyond the (empty) index
    assert archive_search.index_pending(own) == 2
    assert _numbers(own, word) == [2, 1]
    assert _indexed(own, 1) == 1


def test_the_server_indexes_new_posts_in_the_background(
    client: httpx.Client, alice: ApiUser, database: Database
) -> None:
    """SQLite: without any search, a running server puts a new post into the index within
    moments (BBSGM_SEARCH_INDEX_SECONDS, 1 s by default)."""
    found = archive_search.search_file(database)
    if found is None:
        pytest.skip("PostgreSQL's trigram index is kept by the database, inside the transaction")
    word = unique_words(8)
    made = alice.post("/api/boards/chat/threads", {"title": "背景", "body": f"裏で{word}"})
    assert made.status_code == 201, made.text
    match = {"m": f'"{word}"'}
    deadline = time.monotonic() + 60
    while True:
        found.made()
        with found.engine.begin() as connection:
            hits = connection.scalar(
                text("SELECT count(*) FROM fts_posts WHERE fts_posts MATCH :m"), match
            )
        if hits:
            break
        assert time.monotonic() < deadline, "the background indexer never indexed the post"
        time.sleep(0.05)
    assert hits == 1


def test_a_run_of_the_background_indexer_stops_at_a_short_batch() -> None:
    """The posts stored while a run worked off the backlog wait for the next run, instead of
    a small batch each as they come."""
    full = archive_search.INDEX_BATCH
    counts = iter([full, full - 1, full, full])
    calls: list[int] = []

    def batch(_database: Database) -> int:
        calls.append(1)
        return next(counts)

    total = asyncio.run(app_main.index_run(Database("sqlite://"), batch))
    assert (len(calls), total) == (2, 2 * full - 1)


def test_a_run_of_the_background_indexer_indexes_the_whole_backlog(own: Database) -> None:
    """The real batches (a few posts each, so that it takes several), committed as the server
    commits them: every post stored before the run is in the index after it."""
    word = unique_words(8)
    size = 7
    count = size * 2 + 5
    _thread(own, *(f"{word} {i}" for i in range(count)))

    def batch(database: Database) -> int:
        done = archive_search.index_batch(database, batch=size)
        return archive_search.INDEX_BATCH if done == size else done

    asyncio.run(app_main.index_run(own, batch))
    assert archive_search.index_batch(own) == 0
    found = archive_search.search_file(own)
    assert found is not None
    with found.engine.begin() as connection:
        query = text("SELECT count(*) FROM fts_posts WHERE fts_posts MATCH :m")
        assert connection.scalar(query, {"m": f'"{word}"'}) == count


def test_a_signed_in_search_page_holds_no_write_lock_while_it_searches(
    client: httpx.Client, database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite: the page reads its user in the request's session (``BEGIN IMMEDIATE``, the
    write lock every post needs); that transaction ends before the search, which may scan
    for a tenth of a second."""
    if database.engine.dialect.name != "sqlite":
        pytest.skip("SQLite's write lock")
    lock = _write_lock(str(database.engine.url.database))
    held: list[bool] = []

    def searching(*args: Any, **kwargs: Any) -> Any:
        held.append(lock.locked())
        return search(*args, **kwargs)

    monkeypatch.setattr(archive_pages, "search", searching)
    name = register(client)
    page = client.get("/search", params={"q": unique_words()})
    assert page.status_code == 200 and f"{name} さん" in page.text  # signed in
    assert held == [False]
