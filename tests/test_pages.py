"""Server-rendered pages: accounts, forms with CSRF, posting, rendering, bad input (HTTP)."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from sqlalchemy import event

from app.db.engine import READ_ONLY, Database
from tests.conftest import LiveServer, unique_name

TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')


def csrf(page: httpx.Response) -> str:
    match = TOKEN.search(page.text)
    assert match, "form without a CSRF token"
    return match.group(1)


@pytest.fixture
def browser(live_server: LiveServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live_server.url, timeout=30) as c:
        yield c


def register(browser: httpx.Client, name: str | None = None) -> str:
    name = name or unique_name()
    token = csrf(browser.get("/register"))
    reply = browser.post(
        "/register", data={"name": name, "password": "password123", "csrf_token": token}
    )
    assert reply.status_code == 303, reply.text
    return name


def new_thread(browser: httpx.Client, board: str, title: str, body: str) -> str:
    page = browser.get(f"/boards/{board}")
    reply = browser.post(
        f"/boards/{board}/threads", data={"title": title, "body": body, "csrf_token": csrf(page)}
    )
    assert reply.status_code == 303, reply.text
    return str(reply.headers["location"])


def test_index_lists_boards_in_japanese(browser: httpx.Client) -> None:
    page = browser.get("/")
    assert page.status_code == 200
    assert '<html lang="ja">' in page.text and "ロビー" in page.text and "雑談" in page.text
    assert 'name="viewport"' in page.text


def test_csp_without_inline_scripts(browser: httpx.Client) -> None:
    page = browser.get("/")
    policy = page.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy
    assert re.search(r"<script(?![^>]*\bsrc=)", page.text) is None
    assert " style=" not in page.text


def test_register_sets_httponly_lax_session_cookie(browser: httpx.Client) -> None:
    token = csrf(browser.get("/register"))
    reply = browser.post(
        "/register", data={"name": unique_name(), "password": "password123", "csrf_token": token}
    )
    assert reply.status_code == 303
    cookie = next(h for h in reply.headers.get_list("set-cookie") if "bbsgm_session" in h)
    assert "HttpOnly" in cookie and "samesite=lax" in cookie.lower()
    assert "ログアウト" in browser.get("/").text


def test_login_logout_cycle(live_server: LiveServer) -> None:
    with httpx.Client(base_url=live_server.url) as first:
        name = register(first)
    with httpx.Client(base_url=live_server.url) as browser:
        token = csrf(browser.get("/login"))
        wrong = browser.post(
            "/login", data={"name": name, "password": "bad-password", "csrf_token": token}
        )
        assert wrong.status_code == 401
        assert "名前かパスワードが違います" in wrong.text
        assert f'value="{name}"' in wrong.text  # what was typed is kept
        ok = browser.post(
            "/login",
            data={
                "name": name,
                "password": "password123",
                "csrf_token": token,
                "next": "/boards/chat",
            },
        )
        assert ok.status_code == 303 and ok.headers["location"] == "/boards/chat"
        page = browser.get("/")
        assert f"{name} さん" in page.text
        out = browser.post("/logout", data={"csrf_token": csrf(page)})
        assert out.status_code == 303
        assert "ログイン" in browser.get("/").text and f"{name} さん" not in browser.get("/").text


def test_login_next_cannot_leave_the_site(browser: httpx.Client) -> None:
    name = register(browser)
    token = csrf(browser.get("/login"))
    reply = browser.post(
        "/login",
        data={
            "name": name,
            "password": "password123",
            "csrf_token": token,
            "next": "//evil.example/",
        },
    )
    assert reply.headers["location"] == "/"


def test_post_and_see_number_name_id_and_anchor(browser: httpx.Client) -> None:
    name = register(browser)
    location = new_thread(browser, "chat", "テスト", "一番目の投稿")
    page = browser.get(location)
    reply = browser.post(
        f"{location}/posts",
        data={"body": ">>1 見たよ <b>太字</b>\nhttps://example.com/", "csrf_token": csrf(page)},
    )
    assert reply.status_code == 303 and reply.headers["location"].endswith("#2")
    page = browser.get(reply.headers["location"])
    assert 'id="2"' in page.text and name in page.text and "ID:" in page.text
    assert '<a class="anchor" href="#1" data-anchor="1">&gt;&gt;1</a>' in page.text
    assert "&lt;b&gt;太字&lt;/b&gt;" in page.text
    assert 'rel="nofollow noopener"' in page.text
    assert '<textarea name="body"' in page.text


def test_post_without_csrf_token_403_form_kept(browser: httpx.Client) -> None:
    register(browser)
    location = new_thread(browser, "chat", "t", "b")
    reply = browser.post(f"{location}/posts", data={"body": "消えないで"})
    assert reply.status_code == 403
    assert "もう一度送信" in reply.text and "消えないで" in reply.text
    wrong = browser.post(f"{location}/posts", data={"body": "x", "csrf_token": "forged.token"})
    assert wrong.status_code == 403
    assert "(1)" in browser.get(location).text  # still only the first post


def test_csrf_token_from_another_browser_is_refused(live_server: LiveServer) -> None:
    with httpx.Client(base_url=live_server.url) as attacker:
        stolen = csrf(attacker.get("/register"))
    with httpx.Client(base_url=live_server.url) as victim:
        victim.get("/")
        reply = victim.post(
            "/register",
            data={"name": unique_name(), "password": "password123", "csrf_token": stolen},
        )
        assert reply.status_code == 403


def test_posting_logged_out_401(browser: httpx.Client) -> None:
    with httpx.Client(base_url=browser.base_url) as author:
        register(author)
        location = new_thread(author, "chat", "t", "b")
    page = browser.get(location)
    assert "ログイン</a>してください" in page.text
    token = csrf(browser.get("/login"))
    reply = browser.post(f"{location}/posts", data={"body": "x", "csrf_token": token})
    assert reply.status_code == 401 and "ログインしてください" in reply.text


def test_empty_and_long_bodies_show_the_form_again(browser: httpx.Client) -> None:
    register(browser)
    location = new_thread(browser, "chat", "t", "b")
    page = browser.get(location)
    empty = browser.post(f"{location}/posts", data={"body": "  ", "csrf_token": csrf(page)})
    assert empty.status_code == 422 and "本文が空です" in empty.text
    long_body = "長" * 10_001
    too_long = browser.post(f"{location}/posts", data={"body": long_body, "csrf_token": csrf(page)})
    assert too_long.status_code == 422 and "10000文字以内" in too_long.text
    assert long_body in too_long.text


def test_bad_thread_form_keeps_typed_text(browser: httpx.Client) -> None:
    register(browser)
    page = browser.get("/boards/chat")
    reply = browser.post(
        "/boards/chat/threads", data={"title": "", "body": "大事な本文", "csrf_token": csrf(page)}
    )
    assert reply.status_code == 422
    assert "タイトルが空です" in reply.text and "大事な本文" in reply.text


def test_unknown_pages_are_404_pages(browser: httpx.Client) -> None:
    for path in ("/boards/nope", "/threads/999999999", "/threads/abc", "/no/such/page"):
        reply = browser.get(path)
        assert reply.status_code in (404, 422), path
        assert "<html" in reply.text


def test_error_pages_show_the_visitor_logged_in(browser: httpx.Client) -> None:
    """A 404, a 405 and a 422 page carry the same header as every other page: the name of
    whoever is logged in and a log-out button, not 「ログイン」."""
    name = register(browser)
    for method, path, status in (
        ("GET", "/threads/999999", 404),
        ("GET", "/no/such/page", 404),
        ("GET", "/threads/abc", 422),
        ("DELETE", "/", 405),
    ):
        reply = browser.request(method, path)
        assert reply.status_code == status, path
        assert f'<span class="whoami">{name} さん</span>' in reply.text, path
        assert 'action="/logout"' in reply.text and 'href="/login?' not in reply.text, path
        assert f"エラー {status}" in reply.text, path
    with httpx.Client(base_url=browser.base_url) as stranger:  # and nobody for a stranger
        reply = stranger.get("/threads/999999")
        assert reply.status_code == 404 and "whoami" not in reply.text
        assert 'href="/login?' in reply.text
    browser.cookies.set("bbsgm_session", "not-a-session")  # a stale cookie: logged out
    reply = browser.get("/threads/999999")
    assert reply.status_code == 404 and "whoami" not in reply.text


def test_register_taken_name_409_page(browser: httpx.Client) -> None:
    name = register(browser)
    with httpx.Client(base_url=browser.base_url) as other:
        token = csrf(other.get("/register"))
        reply = other.post(
            "/register", data={"name": name, "password": "password123", "csrf_token": token}
        )
        assert reply.status_code == 409 and "使われています" in reply.text


def test_thread_pages_paginate_and_anchor_crosses_pages(browser: httpx.Client) -> None:
    register(browser)
    location = new_thread(browser, "chat", "長いスレ", "1")
    token = csrf(browser.get(location))
    for i in range(2, 103):
        body = ">>1" if i == 102 else str(i)
        browser.post(f"{location}/posts", data={"body": body, "csrf_token": token})
    second = browser.get(f"{location}?page=2")
    assert 'id="101"' in second.text and 'id="1"' not in second.text
    assert 'href="?page=1#1"' in second.text
    assert 'rel="next"' in browser.get(location).text


def test_static_assets_served(browser: httpx.Client) -> None:
    assert browser.get("/static/app.js").status_code == 200
    assert browser.get("/static/style.css").status_code == 200


def test_unread_markers_count_posts_since_the_last_visit(live_server: LiveServer) -> None:
    with httpx.Client(base_url=live_server.url) as reader:
        register(reader)
        with httpx.Client(base_url=live_server.url) as writer:
            register(writer)
            location = new_thread(writer, "lobby", "新着テスト", "1")
            thread_id = location.rsplit("/", 1)[1]
            marker = f'href="/threads/{thread_id}">新着テスト</a>'
            board = reader.get("/boards/lobby").text
            row = board[board.index(marker) :].split("</li>")[0]
            assert "未読" in row
            reader.get(location)  # read up to post 1
            row = reader.get("/boards/lobby").text
            row = row[row.index(marker) :].split("</li>")[0]
            assert "未読" not in row and "新着" not in row.replace("新着テスト", "")
            token = csrf(writer.get(location))
            for body in ("2", "3"):
                writer.post(f"{location}/posts", data={"body": body, "csrf_token": token})
            row = reader.get("/boards/lobby").text
            row = row[row.index(marker) :].split("</li>")[0]
            assert "新着 2" in row and f"#{2}" in row


def test_the_post_form_commits_without_waiting_for_the_event_loop(
    browser: httpx.Client, live_server: LiveServer, database: Database
) -> None:
    """The form's post, its game's answer and their commit run in one worker thread
    (deps.unit_of_work_in_one_thread): no turn of the event loop comes between the first
    write and the commit, which on SQLite would hold the write lock for every other post
    while the loop serves others. Each write transaction, as it begins, holds the server's
    loop (a callback that blocks it until that transaction commits, 10 s at most): the
    commit must come while the loop is still held, not after it was let go."""
    register(browser)
    where = new_thread(browser, "chat", unique_name("t"), "一番目")
    page = browser.get(where)
    loop = live_server.server.servers[0].get_loop()
    late: list[bool] = []

    def hold(committed: threading.Event, let_go: threading.Event) -> None:
        committed.wait(timeout=10)
        let_go.set()

    def began(conn: Any) -> None:
        if not conn.get_execution_options().get(READ_ONLY, False):
            conn.info["held"] = held = (threading.Event(), threading.Event())
            loop.call_soon_threadsafe(hold, *held)

    def committed(conn: Any) -> None:
        if "held" in conn.info:
            done, let_go = conn.info.pop("held")
            late.append(let_go.is_set())
            done.set()

    event.listen(database.engine, "begin", began)
    event.listen(database.engine, "commit", committed)
    try:
        reply = browser.post(f"{where}/posts", data={"body": "二番目", "csrf_token": csrf(page)})
    finally:
        event.remove(database.engine, "begin", began)
        event.remove(database.engine, "commit", committed)
    assert reply.status_code == 303, reply.text
    assert late and not any(late), late
