"""A thread served like a static file (app/web/thread_cache.py, app/web/http_cache.py): the page,
its dat file and its feeds carry an ETag and answer a matching If-None-Match with 304; every
change of what a reader may see (a new post, あぼーん, a title, the viewer, the language, the
page) changes the bytes and the ETag; and a cached answer never shows anyone what only another
may see (a hidden post's text, another viewer's game panel or CSRF token).

Writes made straight in the database stand for another worker process: the server never saw
them, so only the version it reads back can tell its cache that they happened."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest
from sqlalchemy import select, update
from sqlalchemy.orm import Session

from app.accounts import users as accounts
from app.db.engine import Database
from app.db.models import Game, Thread, User
from app.errors import NotFound
from app.forum import moderation
from app.forum import service as forum
from app.gm import service as gm
from app.web import thread_cache
from tests.conftest import TEST_SECRET, ApiUser, LiveServer, unique_name
from tests.support.load_support import fast_users, session_cookie, started_eitsuku

TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')
LEGAL = re.compile(r'<div class="legal">.*?</div>', re.S)


@dataclass
class Table:
    """A started えいつく game (GM, two players), a site admin, someone logged in who plays
    no part, and a talk thread on the chat board."""

    server: LiveServer
    database: Database
    gm: ApiUser
    players: list[ApiUser]
    admin: ApiUser
    reader: ApiUser
    game_id: int
    game_thread: int
    talk_thread: int

    def browser(self, user: ApiUser | None = None) -> httpx.Client:
        """A new browser (its own CSRF cookie), logged in as ``user`` if given."""
        client = httpx.Client(base_url=self.server.url, timeout=30)
        if user is not None:
            client.cookies.set("bbsgm_session", session_cookie(self.database, user.name))
        return client


@pytest.fixture(scope="module")
def table(live_server: LiveServer, database: Database) -> Iterator[Table]:
    with httpx.Client(base_url=live_server.url, timeout=30) as web:
        gm, first, second, admin, reader = fast_users(database, 5, web, prefix="cache")
        with database.session() as session:
            moderation.set_admin(session, admin.name, True)
            session.commit()
        game = started_eitsuku(gm, [first, second], "キャッシュ卓")
        talk = reader.post(
            "/api/boards/chat/threads", {"title": "キャッシュの話", "body": "一つ目"}
        ).json()
        yield Table(
            live_server,
            database,
            gm,
            [first, second],
            admin,
            reader,
            game["id"],
            game["thread_id"],
            talk["id"],
        )


def get(client: httpx.Client, path: str, tag: str | None = None) -> httpx.Response:
    return client.get(path, headers={"If-None-Match": tag} if tag else {})


def tokens(page: httpx.Response) -> set[str]:
    return set(TOKEN.findall(page.text))


def new_talk_thread(user: ApiUser, body: str) -> int:
    made = user.post("/api/boards/chat/threads", {"title": unique_name("t"), "body": body})
    assert made.status_code == 201, made.text
    return int(made.json()["id"])


def post(user: ApiUser, thread_id: int, body: str) -> int:
    reply = user.post(f"/api/threads/{thread_id}/posts", {"body": body})
    assert reply.status_code == 201, reply.text
    return int(reply.json()["post"]["number"])


def hide_elsewhere(database: Database, thread_id: int, number: int, by: str, hidden: bool) -> None:
    """あぼーん (or undo it) as another worker would: straight in the database."""
    with database.session() as session:
        user = session.scalar(select(User).where(User.name == by))
        moderation.set_hidden(session, thread_id, number, user, hidden)
        session.commit()


# --- ETag and 304 ------------------------------------------------------------------------------


def test_a_page_read_twice_is_the_same_bytes_and_a_matching_tag_gets_304(table: Table) -> None:
    with table.browser() as browser:
        first = get(browser, f"/threads/{table.talk_thread}")
        hits = thread_cache.BLOCKS.hits
        again = get(browser, f"/threads/{table.talk_thread}")
        assert first.status_code == again.status_code == 200
        assert thread_cache.BLOCKS.hits > hits  # the posts came from the cache
        tag = first.headers["etag"]
        assert again.content == first.content and again.headers["etag"] == tag
        assert first.headers["cache-control"] == "private, no-cache"
        assert "cookie" in first.headers["vary"].lower()
        for sent in (tag, f"W/{tag}", f'"other", {tag}', "*"):
            unchanged = get(browser, f"/threads/{table.talk_thread}", sent)
            assert unchanged.status_code == 304, sent
            assert unchanged.content == b"" and unchanged.headers["etag"] == tag
        assert get(browser, f"/threads/{table.talk_thread}", '"other"').status_code == 200


def test_only_a_page_that_is_there_can_be_not_modified(table: Table) -> None:
    with table.browser() as browser:
        assert get(browser, "/threads/999999999", "*").status_code == 404


def test_a_new_post_changes_the_page(table: Table) -> None:
    thread = new_talk_thread(table.reader, "はじめ")
    with table.browser() as browser:
        before = get(browser, f"/threads/{thread}")
        post(table.players[0], thread, "あたらしい書き込み")
        after = get(browser, f"/threads/{thread}", before.headers["etag"])
        assert after.status_code == 200 and "あたらしい書き込み" in after.text
        assert after.headers["etag"] != before.headers["etag"]


def test_a_post_written_by_another_process_is_seen(table: Table) -> None:
    thread = new_talk_thread(table.reader, "はじめ")
    with table.browser() as browser:
        before = get(browser, f"/threads/{thread}")
        with table.database.session() as session:
            author = session.scalar(select(User).where(User.name == table.reader.name))
            assert author is not None
            forum.add_post(
                session,
                thread,
                author=author,
                author_name=author.name,
                body="よそのプロセスから",
                kind="talk",
                secret=TEST_SECRET,
            )
            session.commit()
        after = get(browser, f"/threads/{thread}", before.headers["etag"])
        assert after.status_code == 200 and "よそのプロセスから" in after.text


def test_an_edited_title_changes_the_page(table: Table) -> None:
    thread = new_talk_thread(table.reader, "題の話")
    with table.browser() as browser:
        before = get(browser, f"/threads/{thread}")
        retitle(table.database, thread, "新しい題")
        after = get(browser, f"/threads/{thread}", before.headers["etag"])
        assert after.status_code == 200 and "新しい題" in after.text
        assert after.headers["etag"] != before.headers["etag"]


def retitle(database: Database, thread_id: int, title: str) -> None:
    with database.session() as session:
        session.execute(update(Thread).where(Thread.id == thread_id).values(title=title))
        session.commit()


# --- あぼーん --------------------------------------------------------------------------------


def test_a_hidden_post_is_shown_to_nobody_but_an_admin(table: Table) -> None:
    secret = f"ないしょ{unique_name()}"
    thread = table.game_thread
    number = post(table.players[0], thread, secret)
    path = f"/threads/{thread}"
    viewers = {
        "anonymous": table.browser(),
        "reader": table.browser(table.reader),
        "player": table.browser(table.players[1]),
        "gm": table.browser(table.gm),
        "admin": table.browser(table.admin),
    }
    try:
        shown = {role: get(client, path) for role, client in viewers.items()}
        assert all(secret in page.text for page in shown.values())  # the caches are warm
        assert table.gm.post(f"/api/threads/{thread}/posts/{number}/hide", {}).status_code == 200
        for role, client in viewers.items():
            page = get(client, path, shown[role].headers["etag"])
            assert page.status_code == 200, role
            assert page.headers["etag"] != shown[role].headers["etag"], role
            if role == "admin":
                assert secret in page.text and "管理者には原文が見えています" in page.text
            else:
                assert secret not in page.text, role
                assert "あぼーん" in page.text, role
        # The admin's page is never kept: the readers after it still see あぼーん.
        for role in ("anonymous", "reader", "gm"):
            assert secret not in get(viewers[role], path).text, role
        # Shown again and hidden again (here by another worker): each time the page follows.
        assert table.gm.post(f"/api/threads/{thread}/posts/{number}/unhide", {}).status_code == 200
        assert secret in get(viewers["anonymous"], path).text
        hide_elsewhere(table.database, thread, number, table.gm.name, True)
        for role in ("anonymous", "reader", "player", "gm"):
            assert secret not in get(viewers[role], path).text, role
    finally:
        for client in viewers.values():
            client.close()


def test_a_moderators_buttons_carry_their_own_browsers_token(table: Table) -> None:
    """The GM's posts are kept with the あぼーん forms; each browser gets its own token in them."""
    path = f"/threads/{table.game_thread}"
    with table.browser(table.gm) as first, table.browser(table.gm) as second:
        one, two = get(first, path), get(second, path)
        assert 'action="/threads/' in one.text and "/hide" in one.text
        assert len(tokens(one)) == 1 and len(tokens(two)) == 1
        assert tokens(one) != tokens(two)
        assert one.headers["etag"] != two.headers["etag"]
    with table.browser(table.players[0]) as player:
        page = get(player, path)
        assert "/hide" not in page.text
        assert not (tokens(page) & (tokens(one) | tokens(two)))


# --- who reads, in which language, which page --------------------------------------------------


def test_logged_in_and_anonymous_readers_get_their_own_pages(table: Table) -> None:
    path = f"/threads/{table.talk_thread}"
    with (
        table.browser() as anonymous,
        table.browser(table.reader) as reader,
        table.browser(table.players[0]) as other,
    ):
        seen = get(reader, path)
        nobody = get(anonymous, path)
        someone_else = get(other, path)
    assert f"{table.reader.name} さん" in seen.text and tokens(seen)
    assert "さん</span>" not in nobody.text and not tokens(nobody)
    assert f"{table.reader.name} さん" not in someone_else.text
    assert not (tokens(someone_else) & tokens(seen))
    assert len({seen.headers["etag"], nobody.headers["etag"], someone_else.headers["etag"]}) == 3
    with table.browser() as anonymous:
        assert get(anonymous, path, seen.headers["etag"]).status_code == 200


WEEKDAYS_JA = re.compile(r"\((月|火|水|木|金|土|日)\)")


def test_english_and_japanese_pages_are_kept_apart(table: Table) -> None:
    path = f"/threads/{table.talk_thread}"
    with table.browser() as browser:
        japanese = get(browser, path)
        english = get(browser, f"{path}?lang=en", japanese.headers["etag"])
        assert english.status_code == 200 and '<html lang="en">' in english.text
        assert english.headers["etag"] != japanese.headers["etag"]
        times = re.findall(r"<time [^>]*>([^<]*)</time>", english.text)
        assert times and not any(WEEKDAYS_JA.search(t) for t in times)
        cookie_english = get(browser, path, english.headers["etag"])  # the cookie remembers
        assert cookie_english.status_code == 304
    with table.browser() as other:
        again = get(other, path)
        assert '<html lang="ja">' in again.text and again.content == japanese.content
        assert all(
            WEEKDAYS_JA.search(t) for t in re.findall(r"<time [^>]*>([^<]*)</time>", again.text)
        )


def test_each_player_sees_their_own_panel_and_nobody_elses(table: Table) -> None:
    path = f"/threads/{table.game_thread}"
    pages = {}
    for index, player in enumerate(table.players):
        with table.browser(player) as browser:
            pages[index] = get(browser, path)
        legal = player.get(f"/api/games/{table.game_id}/legal").json()["commands"]
        shown = "".join(LEGAL.findall(pages[index].text))
        for line in legal:
            assert f'data-line="{line}"' in shown, (index, line)
    with table.browser() as anonymous:
        public = get(anonymous, path)
    assert not LEGAL.findall(public.text)
    assert "あなたの視点の盤面" not in public.text
    assert pages[0].headers["etag"] != pages[1].headers["etag"] != public.headers["etag"]
    assert not (tokens(pages[0]) & tokens(pages[1]))
    if LEGAL.findall(pages[0].text) != LEGAL.findall(pages[1].text):
        assert "".join(LEGAL.findall(pages[0].text)) not in pages[1].text


def test_pages_of_a_long_thread_are_kept_apart(table: Table, database: Database) -> None:
    """Two full pages (100 posts each): the same number of posts, never the same posts."""
    thread = new_talk_thread(table.reader, "長いスレ")
    with database.session() as session:
        author = session.scalar(select(User).where(User.name == table.reader.name))
        assert author is not None
        for n in range(2, 201):
            forum.add_post(
                session,
                thread,
                author=author,
                author_name=author.name,
                body=f"書き込み{n}番 >>{n - 1}",
                kind="talk",
                secret=TEST_SECRET,
            )
        session.commit()
    with table.browser() as browser:
        first = get(browser, f"/threads/{thread}?page=1")
        second = get(browser, f"/threads/{thread}?page=2")
        assert "書き込み100番" in first.text and "書き込み101番" not in first.text
        assert "書き込み101番" in second.text and "書き込み100番 " not in second.text
        assert 'href="?page=1#100"' in second.text  # >>100 from page 2 leads to page 1
        assert 'href="#99"' in first.text  # >>99 from page 1 stays on it
        assert first.headers["etag"] != second.headers["etag"]
        assert get(browser, f"/threads/{thread}?page=2", second.headers["etag"]).status_code == 304
        post(table.reader, thread, "最後の書き込み")
        later = get(browser, f"/threads/{thread}?page=2", second.headers["etag"])
        assert later.status_code == 200 and "最後の書き込み" not in later.text
        assert "最後の書き込み" in get(browser, f"/threads/{thread}?page=3").text


# --- the thread version ------------------------------------------------------------------------


def test_the_version_moves_with_every_hide_and_unhide(session: Session, user: User) -> None:
    """The thread page's cache relies on it: set_hidden logs every change, and the log's count
    never goes back, so hiding a post again never finds the page that showed it."""
    board = forum.get_board(session, "chat")
    thread, _first = forum.create_thread(session, board, user, "版", "本文", TEST_SECRET)
    forum.add_post(
        session,
        thread.id,
        author=user,
        author_name=user.name,
        body="二",
        kind="talk",
        secret=TEST_SECRET,
    )
    moderation.set_admin(session, user.name, True)
    seen = [thread_cache.thread_version(session, thread, None)]
    for hidden in (True, False, True):
        moderation.set_hidden(session, thread.id, 2, user, hidden)
        seen.append(thread_cache.thread_version(session, thread, None))
    assert len(set(seen)) == len(seen)
    assert seen[1].post_count == seen[0].post_count == 2


# --- dat files and feeds ---------------------------------------------------------------------


def test_a_dat_file_has_an_etag_and_follows_posts_titles_and_abon(table: Table) -> None:
    thread = new_talk_thread(table.reader, "dat の一つ目")
    path = f"/chat/dat/{thread}.dat"
    with table.browser() as browser:
        first = get(browser, path)
        tag = first.headers["etag"]
        assert first.status_code == 200 and first.headers["cache-control"] == "no-cache"
        assert get(browser, path, tag).status_code == 304
        ranged = browser.get(path, headers={"Range": "bytes=10-", "If-None-Match": tag})
        assert ranged.status_code == 304
        assert browser.get(path, headers={"Range": "bytes=10-"}).status_code == 206
        secret = f"dat秘密{unique_name()}"
        number = post(table.reader, thread, secret)
        added = get(browser, path, tag)
        assert added.status_code == 200 and secret in added.content.decode("cp932")
        hide_elsewhere(table.database, thread, number, table.admin.name, True)
        hidden = get(browser, path, added.headers["etag"])
        assert hidden.status_code == 200
        text = hidden.content.decode("cp932")
        assert secret not in text and "あぼーん" in text
        retitle(table.database, thread, "dat の新しい題")
        titled = get(browser, path, hidden.headers["etag"])
        assert titled.status_code == 200 and "dat の新しい題" in titled.content.decode("cp932")
        listing = get(browser, "/chat/subject.txt")
        assert get(browser, "/chat/subject.txt", listing.headers["etag"]).status_code == 304


@pytest.mark.parametrize("feed", ["thread", "board"])
def test_feeds_have_an_etag_and_follow_posts_titles_and_abon(table: Table, feed: str) -> None:
    thread = new_talk_thread(table.reader, "フィードの一つ目")
    path = f"/threads/{thread}/feed.atom" if feed == "thread" else "/boards/chat/feed.atom"
    with table.browser() as browser:
        first = get(browser, path)
        tag = first.headers["etag"]
        assert first.status_code == 200 and first.headers["cache-control"] == "no-cache"
        assert get(browser, path, tag).status_code == 304
        secret = f"フィード秘密{unique_name()}"
        number = post(table.reader, thread, secret)
        added = get(browser, path, tag)
        assert added.status_code == 200 and secret in added.text
        assert table.admin.post(f"/api/threads/{thread}/posts/{number}/hide", {}).status_code == 200
        hidden = get(browser, path, added.headers["etag"])
        assert hidden.status_code == 200 and secret not in hidden.text
        assert (
            table.admin.post(f"/api/threads/{thread}/posts/{number}/unhide", {}).status_code == 200
        )
        assert secret in get(browser, path).text
        hide_elsewhere(table.database, thread, number, table.admin.name, True)
        assert secret not in get(browser, path).text
        before = get(browser, path)
        retitle(table.database, thread, f"フィードの新しい題{feed}")
        titled = get(browser, path, before.headers["etag"])
        assert titled.status_code == 200 and f"フィードの新しい題{feed}" in titled.text


# --- what the page reads before its posts --------------------------------------------------


def _eitsuku_with_a_move(session: Session, title: str, undo: bool) -> tuple[Game, User]:
    """A started えいつく game in which a player has made one move, taken back by the GM's
    UNDO if ``undo``."""
    master, *people = (
        accounts.register(session, unique_name("head"), "password123") for _ in range(3)
    )
    game = gm.create_game(session, master, "eitsuku", title, {}, TEST_SECRET)
    for person in people:
        gm.submit_post(session, game.thread_id, person, "JOIN", TEST_SECRET)
    gm.submit_post(session, game.thread_id, master, "START", TEST_SECRET)
    mover = next(p for p in people if gm.legal_lines(game, p))
    _post, replies = gm.submit_post(
        session, game.thread_id, mover, gm.legal_lines(game, mover)[0], TEST_SECRET
    )
    assert replies and "エラー" not in replies[0].body
    if undo:
        _post, replies = gm.submit_post(session, game.thread_id, master, "UNDO", TEST_SECRET)
        assert "取り消しました" in replies[0].body
    return game, master


def test_the_page_head_reads_the_version_as_thread_version_does(session: Session) -> None:
    """One statement reads the thread, its game and the version: the version of a thread whose
    game has an undone move counts that move, and another thread's counts none of it."""
    undone, _ = _eitsuku_with_a_move(session, "取り消した卓", undo=True)
    kept, _ = _eitsuku_with_a_move(session, "そのままの卓", undo=False)
    before = thread_cache.thread_version(session, kept.thread, kept)
    moderation.set_hidden(session, kept.thread_id, 2, kept.gm, True)
    session.commit()
    for game_id, undone_moves in ((undone.id, 1), (kept.id, 0)):
        session.expunge_all()
        game = gm.get_game(session, game_id)
        expected = thread_cache.thread_version(session, game.thread, game)
        session.expunge_all()
        _thread, _game, version = thread_cache.page_head(session, game.thread_id)
        assert version == expected and version.undone == undone_moves
    assert version.moderation[0] == before.moderation[0] + 1


def test_the_page_head_is_the_thread_its_board_and_its_game_with_gm_and_seats(
    session: Session, user: User
) -> None:
    game, master = _eitsuku_with_a_move(session, "頭の卓", undo=False)
    talk, _first = forum.create_thread(
        session, forum.get_board(session, "chat"), user, "話", "本文", TEST_SECRET
    )
    session.commit()
    talk_id = talk.id
    seats = [(p.seat, p.user_id, p.name) for p in game.players]
    game_id, thread_id, master_name = game.id, game.thread_id, master.name
    board_slug = game.thread.board.slug
    session.expunge_all()
    thread, loaded, version = thread_cache.page_head(session, thread_id)
    assert loaded is not None and loaded.id == game_id and loaded.thread is thread
    assert thread.board.slug == board_slug
    assert loaded.gm is not None and loaded.gm.name == master_name
    assert [(p.seat, p.user_id, p.name) for p in loaded.players] == seats
    assert loaded.state is not None and version.post_count == thread.post_count
    thread, none, _version = thread_cache.page_head(session, talk_id)
    assert none is None and thread.board.slug == "chat" and thread.title == "話"
    session.execute(update(Game).where(Game.id == game_id).values(gm_id=None))
    session.expunge_all()
    _thread, gone, _version = thread_cache.page_head(session, thread_id)
    assert gone is not None and gone.gm is None


@pytest.mark.parametrize("thread_id", [0, -1, 2**31, 999_999_999])
def test_the_page_head_of_no_thread_is_not_found(session: Session, thread_id: int) -> None:
    with pytest.raises(NotFound):
        thread_cache.page_head(session, thread_id)


def test_an_undo_marks_the_post_on_the_page_read_before(table: Table) -> None:
    game = started_eitsuku(table.gm, table.players, "取り消しの印")
    posts = f"/api/threads/{game['thread_id']}/posts"
    mover = next(
        p for p in table.players if p.get(f"/api/games/{game['id']}/legal").json()["commands"]
    )
    line = mover.get(f"/api/games/{game['id']}/legal").json()["commands"][0]
    assert mover.post(posts, {"body": line}).json()["replies"][0]["ok"]
    with table.browser() as browser:
        before = get(browser, f"/threads/{game['thread_id']}")
        assert "取り消し済み" not in before.text
        assert table.gm.post(posts, {"body": "UNDO"}).json()["replies"][0]["ok"]
        after = get(browser, f"/threads/{game['thread_id']}")
        assert after.text.count('<span class="undone-mark">') == 1


def test_the_page_head_reads_afresh_what_the_session_already_holds(session: Session) -> None:
    """A thread and game already in the session (a preview's or a refused post's page is
    read after the session used them) are brought up to date, not kept as they were."""
    game, _master = _eitsuku_with_a_move(session, "古い卓", undo=False)
    session.commit()
    thread = forum.get_thread(session, game.thread_id)
    assert thread.title and game.title == "古い卓"
    # As another transaction would: the session's objects are not told.
    threads, games = Thread.__table__, Game.__table__
    session.execute(update(threads).where(threads.c.id == thread.id).values(title="新しいスレ"))
    session.execute(
        update(games).where(games.c.id == game.id).values(title="新しい卓", paused=True)
    )
    assert (thread.title, game.title) != ("新しいスレ", "新しい卓")
    head, loaded, _version = thread_cache.page_head(session, game.thread_id)
    assert head is thread and loaded is game
    assert (head.title, loaded.title, loaded.paused) == ("新しいスレ", "新しい卓", True)
