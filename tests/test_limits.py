"""Limits, each a clear error: body and title sizes (422), request size (413), and posting,
registration and login rates per account and per address (429 with Retry-After), counted in
the database so that they hold across worker processes.

The rest of the suite runs with rate limits off (tests/conftest.py); here `bbsgm serve
--workers 2` of its own has small ones, so every count is shared by two processes. Every test
speaks from its own made-up address (X-Forwarded-For, which uvicorn trusts from 127.0.0.1) and
its own accounts, so counters never meet.
"""

from __future__ import annotations

import asyncio
import random
import re
import sqlite3
import time
from collections.abc import Iterator
from datetime import timedelta
from types import SimpleNamespace
from typing import Any

import httpx
import psycopg
import pytest
from sqlalchemy import event, select, text, update
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

from app import i18n
from app.accounts import ratelimit
from app.accounts import users as accounts
from app.accounts.ratelimit import (
    MINUTE,
    RateLimited,
    Rule,
    count,
    hit,
    in_flight_limit,
    retry_after,
)
from app.config import Settings
from app.db import engine as app_db
from app.db.engine import Database
from app.db.models import ApiToken, FeedToken, Game, RateLimit, SealedCommand, User, Webhook, utcnow
from app.errors import NotFound
from app.main import _unavailable, open_database
from app.notify import delivery, feeds
from tests.conftest import ApiUser, api_user, unique_name
from tests.support.load_support import (
    ServeProcess,
    fast_users,
    post_count,
    serve_env,
    session_cookie,
)

PER_ACCOUNT = 3
PER_ADDRESS = 5
REGISTRATIONS = 2
LOGINS_PER_ADDRESS = 4
LOGINS_PER_NAME = 2
TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')
ALERT = re.compile(r'role="alert">\s*([^<\s][^<]*)<')


def address() -> dict[str, str]:
    """A fresh client address (TEST-NET-2 and 10/8, never routed) for one test."""
    ip = f"10.{random.randrange(256)}.{random.randrange(256)}.{random.randrange(1, 255)}"
    return {"X-Forwarded-For": ip}


@pytest.fixture(scope="module")
def limited(
    settings: Settings, database: Database, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServeProcess]:
    """`bbsgm serve --workers 2` with small limits: every test here also checks that the
    counts hold across processes. (A process of its own: the test server's app is left as
    it is.)"""
    env = serve_env(
        settings.database_url,
        settings.resolved_secret_key(),
        rate_limits="true",
        posts_per_minute_per_account=str(PER_ACCOUNT),
        posts_per_minute_per_address=str(PER_ADDRESS),
        registrations_per_hour_per_address=str(REGISTRATIONS),
        logins_per_minute_per_address=str(LOGINS_PER_ADDRESS),
        logins_per_minute_per_account=str(LOGINS_PER_NAME),
    )
    server = ServeProcess(env, workers=2, log=tmp_path_factory.mktemp("limits") / "serve.log")
    server.start()
    yield server
    server.stop()


@pytest.fixture
def web(limited: ServeProcess) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=limited.url, timeout=30) as c:
        yield c


def new_thread(web: httpx.Client, database: Database) -> int:
    owner = fast_users(database, 1, web)[0]
    created = web.post(
        "/api/boards/chat/threads",
        json={"title": "制限", "body": "1"},
        headers={**owner.headers, **address()},
    )
    assert created.status_code == 201, created.text
    return int(created.json()["id"])


def assert_429(reply: httpx.Response, needle: str) -> int:
    assert reply.status_code == 429, reply.text
    wait = int(reply.headers["Retry-After"])
    assert 1 <= wait <= 2 * 3600
    text = reply.json()["detail"] if "json" in reply.headers["content-type"] else reply.text
    assert needle in text and f"{wait}秒後" in text
    return wait


def games_made_by(database: Database, name: str) -> list[str]:
    """The titles of the games this account is GM of."""
    with database.session() as session:
        found = select(Game.title).join(User, Game.gm_id == User.id).where(User.name == name)
        return list(session.scalars(found))


def sealed_count(database: Database, game_id: int) -> int:
    with database.session() as session:
        found = select(SealedCommand.id).where(SealedCommand.game_id == game_id)
        return len(session.scalars(found).all())


def active_game(client: httpx.Client, database: Database) -> tuple[int, ApiUser]:
    """An えいつく game under way, set up on the suite's own server (no rate limits, same
    database); and its GM, who plays too."""
    gm_user, player = fast_users(database, 2, client)
    made = gm_user.post("/api/games", {"kind": "eitsuku", "title": "封印", "options": {}})
    assert made.status_code == 201, made.text
    game = made.json()
    for who, line in [(player, "JOIN"), (gm_user, "JOIN"), (gm_user, "START")]:
        sent = who.post(f"/api/threads/{game['thread_id']}/posts", {"body": line})
        assert sent.status_code == 201, sent.text
    assert client.get(f"/api/games/{game['id']}").json()["status"] == "active"
    return int(game["id"]), gm_user


def log_in_page(web: httpx.Client, database: Database, user: ApiUser, path: str) -> str:
    """``web`` logged in as ``user`` (a session cookie); the CSRF token of the form at ``path``."""
    web.cookies.set("bbsgm_session", session_cookie(database, user.name))
    token = TOKEN.search(web.get(path, headers=address()).text)
    assert token is not None
    return token.group(1)


def use_up_posts(web: httpx.Client, database: Database, user: ApiUser) -> None:
    """The account's posts for this minute, each from an address of its own."""
    thread_id = new_thread(web, database)
    for i in range(PER_ACCOUNT):
        sent = web.post(
            f"/api/threads/{thread_id}/posts",
            json={"body": f"{i}"},
            headers={**user.headers, **address()},
        )
        assert sent.status_code == 201, sent.text


def alert(page: httpx.Response) -> str:
    """The page's error message (what the reader sees), or fail."""
    shown = ALERT.search(page.text)
    assert shown is not None, f"no message in the page ({page.status_code})"
    return shown.group(1)


# --- sizes ---------------------------------------------------------------------------------


def test_body_and_title_sizes_are_422_with_the_limit(web: httpx.Client, database: Database) -> None:
    user = fast_users(database, 1, web)[0]
    thread_id = new_thread(web, database)
    headers = {**user.headers, **address()}
    long_body = web.post(
        f"/api/threads/{thread_id}/posts", json={"body": "あ" * 10_001}, headers=headers
    )
    assert long_body.status_code == 422 and "10000文字以内" in long_body.json()["detail"]
    long_title = web.post(
        "/api/boards/chat/threads", json={"title": "t" * 101, "body": "x"}, headers=headers
    )
    assert long_title.status_code == 422 and "100文字以内" in long_title.json()["detail"]
    assert post_count(database, thread_id) == 1


def test_game_title_over_100_characters_is_422_and_makes_no_game(
    web: httpx.Client, database: Database
) -> None:
    """A game's title is its thread's title: 1–100 characters, by the API and by the
    /games/new form; a longer one is refused with the limit, and no game is made."""
    by_api, by_form = fast_users(database, 2, web)
    url = "/api/games"
    long_title = web.post(
        url,
        json={"kind": "eitsuku", "title": "あ" * 101},
        headers={**by_api.headers, **address()},
    )
    assert long_title.status_code == 422 and "100文字以内" in long_title.json()["detail"]
    huge = web.post(
        url,
        json={"kind": "eitsuku", "title": "t" * 10_001},
        headers={**by_api.headers, **address()},
    )
    assert huge.status_code == 422, huge.text
    [problem] = huge.json()["detail"]
    assert problem["loc"] == ["body", "title"] and "10000" in problem["msg"]
    assert games_made_by(database, by_api.name) == []
    just = web.post(
        url, json={"kind": "eitsuku", "title": "あ" * 100}, headers={**by_api.headers, **address()}
    )
    assert just.status_code == 201, just.text
    assert games_made_by(database, by_api.name) == ["あ" * 100]

    token = log_in_page(web, database, by_form, "/games/new")
    page = web.post(
        "/games",
        data={"kind": "eitsuku", "title": "い" * 101, "csrf_token": token},
        headers=address(),
    )
    assert page.status_code == 422
    assert "100文字以内" in alert(page)
    assert f'value="{"い" * 101}"' in page.text  # the form comes back with what was typed
    assert games_made_by(database, by_form.name) == []


def test_sealed_command_body_over_10000_characters_is_422_and_stores_nothing(
    web: httpx.Client, client: httpx.Client, database: Database
) -> None:
    """A sealed command's body is a post body: at most 10,000 characters, by the API and by
    the game page's form; a longer one is refused with the limit, and nothing is stored."""
    game_id, player = active_game(client, database)
    long_body = "あ" * 10_001
    api = web.post(
        f"/api/games/{game_id}/sealed",
        json={"body": long_body},
        headers={**player.headers, **address()},
    )
    assert api.status_code == 422 and "10000文字以内" in api.json()["detail"]
    assert sealed_count(database, game_id) == 0

    token = log_in_page(web, database, player, f"/games/{game_id}")
    page = web.post(
        f"/games/{game_id}/sealed", data={"body": long_body, "csrf_token": token}, headers=address()
    )
    assert page.status_code == 422
    assert "10000文字以内" in alert(page)
    assert long_body in page.text  # the form comes back with what was typed
    assert sealed_count(database, game_id) == 0


def test_request_body_over_256_kib_is_413(web: httpx.Client, database: Database) -> None:
    user = fast_users(database, 1, web)[0]
    thread_id = new_thread(web, database)
    big = "x" * (256 * 1024 + 1)
    declared = web.post(
        f"/api/threads/{thread_id}/posts",
        content=b'{"body": "' + big.encode() + b'"}',
        headers={**user.headers, **address(), "content-type": "application/json"},
    )
    assert declared.status_code == 413
    assert "256 KiB" in declared.json()["detail"]

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
        yield b'{"body": "'
        for _ in range(40):
            yield b"y" * 8192
        yield b'"}'

    chunked = web.post(
        f"/api/threads/{thread_id}/posts",
        content=chunks(),
        headers={**user.headers, **address(), "content-type": "application/json"},
    )
    assert chunked.status_code == 413 and "256 KiB" in chunked.json()["detail"]

    page = web.post(
        f"/threads/{thread_id}/posts",
        data={"body": big, "csrf_token": "x"},
        headers=address(),
    )
    assert page.status_code == 413 and "256 KiB" in page.text
    assert page.headers["content-type"].startswith("text/html")
    assert "content-security-policy" in page.headers
    assert post_count(database, thread_id) == 1

    # Just under the limit the request is read, and the body-length rule answers instead.
    # (Every request here speaks from an address of its own: 127.0.0.1's count is shared
    # with the rest of the module.)
    under = web.post(
        f"/api/threads/{thread_id}/posts",
        json={"body": "z" * 200_000},
        headers={**user.headers, **address()},
    )
    assert under.status_code == 422 and "長すぎます" in under.json()["detail"]


def test_413_page_speaks_the_readers_language(web: httpx.Client, database: Database) -> None:
    thread_id = new_thread(web, database)
    big = "x" * (256 * 1024 + 1)
    page = web.post(
        f"/threads/{thread_id}/posts",
        data={"body": big, "csrf_token": "x"},
        headers={**address(), "cookie": "bbsgm_lang=en"},
    )
    assert page.status_code == 413
    assert '<html lang="en">' in page.text and "too large (at most 256 KiB)" in page.text
    api = web.post(
        f"/api/threads/{thread_id}/posts",
        content=b'{"body": "' + big.encode() + b'"}',
        headers={**address(), "cookie": "bbsgm_lang=en", "content-type": "application/json"},
    )
    assert api.status_code == 413 and "大きすぎます" in api.json()["detail"]  # the API contract


# --- posting rates -------------------------------------------------------------------------


def test_posts_per_account(web: httpx.Client, database: Database) -> None:
    user = fast_users(database, 1, web)[0]
    thread_id = new_thread(web, database)
    url = f"/api/threads/{thread_id}/posts"
    for i in range(PER_ACCOUNT):  # each from another address: the account is what counts
        reply = web.post(url, json={"body": f"{i}"}, headers={**user.headers, **address()})
        assert reply.status_code == 201, reply.text
    refused = web.post(url, json={"body": "over"}, headers={**user.headers, **address()})
    assert_429(refused, "書き込みが多すぎます（1分間に3回まで）")
    assert post_count(database, thread_id) == 1 + PER_ACCOUNT
    # A new thread, a game, a sealed command count the same.
    thread = web.post(
        "/api/boards/chat/threads", json={"title": "t", "body": "b"}, headers=user.headers
    )
    assert_429(thread, "書き込み")
    game = web.post("/api/games", json={"kind": "eitsuku", "title": "t"}, headers=user.headers)
    assert_429(game, "書き込み")


def test_posts_per_address(web: httpx.Client, database: Database) -> None:
    users = fast_users(database, PER_ADDRESS + 1, web)
    thread_id = new_thread(web, database)
    shared = address()
    url = f"/api/threads/{thread_id}/posts"
    for user in users[:PER_ADDRESS]:
        sent = web.post(url, json={"body": "x"}, headers={**user.headers, **shared})
        assert sent.status_code == 201
    last = users[PER_ADDRESS]
    assert_429(
        web.post(url, json={"body": "x"}, headers={**last.headers, **shared}),
        "この接続元からの書き込み",
    )
    # The same account from elsewhere is fine: the address was full, not the account.
    elsewhere = web.post(url, json={"body": "x"}, headers={**last.headers, **address()})
    assert elsewhere.status_code == 201


def test_a_post_whose_token_signs_nobody_in_is_401_and_not_counted(
    web: httpx.Client, database: Database
) -> None:
    """Only a signed-in client's post is an attempt: one whose token is unknown, malformed or
    expired is answered 401 and leaves its address's counter as it was (on PostgreSQL the
    token is read and the attempt counted by one statement)."""
    users = fast_users(database, PER_ADDRESS + 1, web)
    expired = users.pop()
    with database.session() as session:
        session.execute(
            update(ApiToken)
            .where(ApiToken.token_hash == accounts.token_digest(expired.token))
            .values(expires_at=utcnow() - timedelta(minutes=1))
        )
        session.commit()
    thread_id = new_thread(web, database)
    shared = address()
    url = f"/api/threads/{thread_id}/posts"
    for token in ("nobody", "x" * 201, expired.token) * PER_ADDRESS:
        refused = web.post(
            url, json={"body": "x"}, headers={"Authorization": f"Bearer {token}", **shared}
        )
        assert refused.status_code == 401, refused.text
    for user in users:
        sent = web.post(url, json={"body": "x"}, headers={**user.headers, **shared})
        assert sent.status_code == 201, sent.text


def test_refused_posts_count_and_a_full_counter_answers_before_the_error(
    web: httpx.Client, database: Database
) -> None:
    """The API's post route counts at the end of the post's own transaction; a post that is
    refused (here: a thread that does not exist, 404) is still an attempt, counted on its
    own. Once the account is full, even such a post gets 429, and nothing is stored."""
    user = fast_users(database, 1, web)[0]
    thread_id = new_thread(web, database)
    for _ in range(PER_ACCOUNT):
        missing = web.post(
            "/api/threads/2000000000/posts",
            json={"body": "どこ？"},
            headers={**user.headers, **address()},
        )
        assert missing.status_code == 404, missing.text
    refused = web.post(
        f"/api/threads/{thread_id}/posts",
        json={"body": "書けない"},
        headers={**user.headers, **address()},
    )
    assert_429(refused, "書き込みが多すぎます（1分間に3回まで）")
    assert_429(
        web.post(
            "/api/threads/2000000000/posts",
            json={"body": "x"},
            headers={**user.headers, **address()},
        ),
        "書き込みが多すぎます",
    )
    assert post_count(database, thread_id) == 1


def test_page_form_over_the_limit_keeps_the_text(limited: ServeProcess, database: Database) -> None:
    with httpx.Client(base_url=limited.url, timeout=30) as web:
        user = fast_users(database, 1, web)[0]
        thread_id = new_thread(web, database)
        web.cookies.set("bbsgm_session", session_cookie(database, user.name))
        here = address()
        token = TOKEN.search(web.get(f"/threads/{thread_id}", headers=here).text)
        assert token is not None
        for i in range(PER_ACCOUNT):
            sent = web.post(
                f"/threads/{thread_id}/posts",
                data={"body": f"form {i}", "csrf_token": token.group(1)},
                headers=here,
            )
            assert sent.status_code == 303, sent.text
        refused = web.post(
            f"/threads/{thread_id}/posts",
            data={"body": "まだ書きたい", "csrf_token": token.group(1)},
            headers=here,
        )
        assert_429(refused, "書き込みが多すぎます")
        assert "まだ書きたい" in refused.text  # the form comes back with what was typed
        assert post_count(database, thread_id) == 1 + PER_ACCOUNT


def test_new_game_form_over_the_limit_keeps_the_title(
    web: httpx.Client, database: Database
) -> None:
    """A new game is a post: the /games/new form of an account over the limit answers 429
    with Retry-After and says so, the form keeps the title, and no game is made."""
    user = fast_users(database, 1, web)[0]
    use_up_posts(web, database, user)
    token = log_in_page(web, database, user, "/games/new")
    refused = web.post(
        "/games",
        data={"kind": "eitsuku", "title": "まだ作りたい", "csrf_token": token},
        headers=address(),
    )
    assert_429(refused, "書き込みが多すぎます（1分間に3回まで）")
    assert "書き込みが多すぎます" in alert(refused)
    assert 'value="まだ作りたい"' in refused.text
    assert games_made_by(database, user.name) == []


def test_sealed_command_form_over_the_limit_keeps_the_command(
    web: httpx.Client, client: httpx.Client, database: Database
) -> None:
    """A sealed command is a post: the game page's form of a player over the limit answers
    429 with Retry-After and says so, the form keeps the text, and nothing is stored."""
    game_id, player = active_game(client, database)
    use_up_posts(web, database, player)
    token = log_in_page(web, database, player, f"/games/{game_id}")
    refused = web.post(
        f"/games/{game_id}/sealed",
        data={"body": "まだ封印したい", "csrf_token": token},
        headers=address(),
    )
    assert_429(refused, "書き込みが多すぎます（1分間に3回まで）")
    assert "書き込みが多すぎます" in alert(refused)
    assert "まだ封印したい</textarea>" in refused.text
    assert sealed_count(database, game_id) == 0


def test_concurrent_attempts_are_counted_exactly(limited: ServeProcess, database: Database) -> None:
    """12 at once, over fresh connections to two worker processes: exactly the limit pass."""
    with httpx.Client(base_url=limited.url) as web:
        user = fast_users(database, 1, web)[0]
        thread_id = new_thread(web, database)

    async def burst() -> list[httpx.Response]:
        limits = httpx.Limits(max_keepalive_connections=0)  # a new connection: any worker
        async with httpx.AsyncClient(base_url=limited.url, timeout=60, limits=limits) as c:
            return await asyncio.gather(
                *(
                    c.post(
                        f"/api/threads/{thread_id}/posts",
                        json={"body": f"{i}"},
                        headers={**user.headers, **address()},
                    )
                    for i in range(12)
                )
            )

    replies = asyncio.run(burst())
    codes = sorted(r.status_code for r in replies)
    assert codes == [201] * PER_ACCOUNT + [429] * (12 - PER_ACCOUNT), limited.log()
    assert all(int(r.headers["Retry-After"]) >= 1 for r in replies if r.status_code == 429)
    assert post_count(database, thread_id) == 1 + PER_ACCOUNT


# --- registration and login ----------------------------------------------------------------


def test_registrations_per_address(web: httpx.Client) -> None:
    here = address()
    for _ in range(REGISTRATIONS):
        reply = web.post(
            "/api/register", json={"name": unique_name(), "password": "password123"}, headers=here
        )
        assert reply.status_code == 201, reply.text
    refused = web.post(
        "/api/register", json={"name": unique_name(), "password": "password123"}, headers=here
    )
    assert_429(refused, "この接続元からの登録が多すぎます（1時間に2回まで）")
    page = web.get("/register", headers=here)
    token = TOKEN.search(page.text)
    assert token is not None
    form = web.post(
        "/register",
        data={"name": unique_name(), "password": "password123", "csrf_token": token.group(1)},
        headers=here,
    )
    assert_429(form, "登録が多すぎます")


def test_logins_per_account_name_and_per_address(web: httpx.Client, database: Database) -> None:
    victim = fast_users(database, 1, web)[0]
    here = address()
    for _ in range(LOGINS_PER_NAME):
        wrong = web.post(
            "/api/login", json={"name": victim.name, "password": "guess-guess"}, headers=here
        )
        assert wrong.status_code == 401
    # Now even the right password waits: guessing one account is slowed from any address.
    right = web.post(
        "/api/login", json={"name": victim.name, "password": "password123"}, headers=address()
    )
    assert_429(right, "この名前へのログインの試みが多すぎます")
    # Other names from the first address, until the address is full.
    others = fast_users(database, 3, web)
    for other in others[: LOGINS_PER_ADDRESS - LOGINS_PER_NAME]:
        ok = web.post(
            "/api/login", json={"name": other.name, "password": "password123"}, headers=here
        )
        assert ok.status_code == 200, ok.text
    full = web.post(
        "/api/login", json={"name": others[-1].name, "password": "password123"}, headers=here
    )
    assert_429(full, "この接続元からのログインが多すぎます")


# --- the counter itself, with an explicit clock --------------------------------------------


def test_sliding_window_counter(session: Session) -> None:
    key = f"test:{unique_name()}"
    t0 = 1_800_000_000.0  # a window boundary (a multiple of 60)
    assert [hit(session, key, 3, 60, t0 + i) for i in range(3)] == [None, None, None]
    wait = hit(session, key, 3, 60, t0 + 10)
    assert wait == 70  # 50 s to the next window, where 3 * (1 - 20/60) + 1 fits again
    assert hit(session, key, 3, 60, t0 + 10 + wait - 1) is not None
    assert hit(session, key, 3, 60, t0 + 10 + wait) is None
    # Refused attempts are not counted: the window holds exactly what was allowed.
    rows = session.scalars(select(RateLimit.hits).where(RateLimit.key == key)).all()
    assert sorted(rows) == [1, 3]


def test_retry_after_is_the_first_second_that_fits() -> None:
    # Full now: wait for the next window, until 10 * (1 - x/60) + 1 <= 10 (x = 6 s).
    assert retry_after(previous=0, current=10, limit=10, window=60, elapsed=40) == 26
    assert retry_after(previous=30, current=0, limit=10, window=60, elapsed=0) == 42
    for previous, current, elapsed in [(5, 8, 12.5), (12, 3, 59), (1, 9, 1), (0, 10, 0)]:
        wait = retry_after(previous, current, 10, 60, elapsed)
        at = elapsed + wait
        in_window = at < 60
        estimate = previous * (60 - at) / 60 + current if in_window else current * (120 - at) / 60
        assert estimate + 1 <= 10 + 1e-9


def test_expired_counters_are_deleted(session: Session) -> None:
    old = f"test:{unique_name()}"
    t0 = 1_900_000_000.0
    assert hit(session, old, 5, 60, t0) is None
    assert hit(session, f"test:{unique_name()}", 5, 60, t0 + 121) is None  # old has expired
    assert session.scalars(select(RateLimit).where(RateLimit.key == old)).all() == []


def _post_request(settings: Settings, host: str) -> Any:
    """What ``check_post`` reads of a request: the settings, the client's address and the
    request's state."""
    return SimpleNamespace(
        app=SimpleNamespace(state=SimpleNamespace(settings=settings)),
        client=SimpleNamespace(host=host),
        state=SimpleNamespace(),
        scope={},
    )


def _counts(database: Database, keys: list[str]) -> dict[str, int]:
    with database.session() as other:
        rows = other.execute(select(RateLimit.key, RateLimit.hits).where(RateLimit.key.in_(keys)))
        return {key: hits for key, hits in rows}


def _poster_on_postgres(database: Database, settings: Settings) -> tuple[Any, User, list[str]]:
    """PostgreSQL only: a request from a fresh address with rate limits on, a new account,
    and the two counter keys of its posts."""
    if database.is_sqlite:
        pytest.skip("SQLite has one write lock for everything")
    limits = settings.model_copy(update={"rate_limits": True})
    request = _post_request(limits, f"192.0.2.{random.randint(1, 254)}")
    with database.session() as session:
        user = accounts.register(session, unique_name(), "password123")
        session.commit()
    return request, user, sorted([f"post:user:{user.id}", f"post:addr:{request.client.host}"])


def _count_meanwhile(database: Database, keys: list[str]) -> None:
    """Another attempt on ``keys``, counted and committed in a transaction of its own, which
    times out (2 s) if a counter row is held."""
    with database.session() as other:
        other.execute(text("SET LOCAL lock_timeout = '2s'"))
        rules = [Rule(key, 100, MINUTE, "書き込み") for key in keys]
        assert count(other, rules, time.time()) is None
        other.commit()


def test_a_post_holds_no_counter_row_until_it_commits(
    database: Database, settings: Settings
) -> None:
    """PostgreSQL: a post's attempt is counted in a short transaction of its own, committed
    before the post's, so the counter row of the client's address (shared by every post from
    it) is not held while the post is written — another count of the same keys meanwhile does
    not wait."""
    request, user, keys = _poster_on_postgres(database, settings)
    with database.session() as session:
        ratelimit.check_post(session, request, user)
        session.execute(select(RateLimit.key).limit(1))  # the post's own transaction
        assert _counts(database, keys) == dict.fromkeys(keys, 1)  # counted, committed
        _count_meanwhile(database, keys)
        session.commit()
    assert _counts(database, keys) == dict.fromkeys(keys, 2)


def test_a_post_counted_with_its_own_transaction_holds_no_counter_row_while_it_works(
    database: Database, settings: Settings
) -> None:
    """PostgreSQL: ``counted_post`` counts at the end of the post's transaction, so while the
    post does its work (here: while another count of the same keys runs meanwhile) its
    counter rows — the address's is shared by every post from it — are not locked; after the
    commit both attempts are counted."""
    request, user, keys = _poster_on_postgres(database, settings)

    def meanwhile() -> str:
        session.execute(select(RateLimit.key).limit(1))  # the post's transaction is open
        _count_meanwhile(database, keys)
        return "posted"

    with database.session() as session:
        assert ratelimit.counted_post(session, request, user, meanwhile) == "posted"
        session.commit()
    assert _counts(database, keys) == dict.fromkeys(keys, 2)


def test_a_failing_post_is_counted_on_its_own_and_a_full_one_is_rolled_back_whole(
    database: Database, settings: Settings
) -> None:
    """``counted_post``: an action that raises is rolled back and its attempt still counted
    (committed on its own); once the account is full an action's work is rolled back with
    its count, and RateLimited raised."""
    limits = settings.model_copy(update={"rate_limits": True, "posts_per_minute_per_account": 2})
    host = f"198.51.100.{random.randint(1, 254)}"
    with database.session() as session:
        user = accounts.register(session, unique_name(), "password123")
        session.commit()
    key = f"post:user:{user.id}"

    def fails() -> None:
        raise NotFound("ない")

    with database.session() as session, pytest.raises(NotFound):
        ratelimit.counted_post(session, _post_request(limits, host), user, fails)
    assert _counts(database, [key]) == {key: 1}
    with database.session() as session:
        ratelimit.counted_post(session, _post_request(limits, host), user, lambda: None)
        session.commit()
    assert _counts(database, [key]) == {key: 2}
    request = _post_request(limits, host)
    with database.session() as session:

        def renames() -> None:
            session.execute(update(User).where(User.id == user.id).values(email="x@example.com"))

        with pytest.raises(RateLimited):
            ratelimit.counted_post(session, request, user, renames)
        assert request.state.retry_after >= 1
        session.commit()  # nothing left to commit: the work went with the count
    assert _counts(database, [key]) == {key: 2}
    with database.session() as session:
        assert session.get(User, user.id).email is None


def test_a_full_counter_refuses_a_post_before_its_transaction_and_takes_it_back(
    database: Database, settings: Settings
) -> None:
    limits = settings.model_copy(update={"rate_limits": True, "posts_per_minute_per_account": 2})
    host = f"198.51.100.{random.randint(1, 254)}"
    with database.session() as session:
        user = accounts.register(session, unique_name(), "password123")
        session.commit()
    key = f"post:user:{user.id}"
    for _ in range(2):  # each post its own request
        with database.session() as session:
            ratelimit.check_post(session, _post_request(limits, host), user)
            session.commit()
    request = _post_request(limits, host)
    with database.session() as session:
        with pytest.raises(RateLimited):
            ratelimit.check_post(session, request, user)
        assert request.state.retry_after >= 1
        # The session is usable again, in a transaction of its own.
        assert session.get(User, user.id) is not None
        session.rollback()
    assert _counts(database, [key]) == {key: 2}


def test_a_post_that_waits_too_long_for_the_write_lock_is_503_and_stores_nothing(
    client: httpx.Client, database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite: a request that cannot get the write lock within app.db.engine.BUSY_SECONDS is told to
    come back (503, Retry-After), not 500; nothing of it is stored, and the next post takes
    the next number. A page that writes (a signed-in reader's thread page marks their
    place) is told the same; one that only reads is not held up at all (it takes no lock)."""
    if database.engine.dialect.name != "sqlite":
        pytest.skip("the write lock is SQLite's")
    poster = api_user(client)
    made = poster.post("/api/boards/chat/threads", {"title": "待つ", "body": "一"}).json()
    thread_id = made["id"]
    cookies = {i18n.COOKIE: "en", "bbsgm_session": session_cookie(database, poster.name)}
    monkeypatch.setattr(app_db, "BUSY_SECONDS", 0.5)
    with database.engine.connect() as holder:
        holder.begin()  # BEGIN IMMEDIATE: this process's write lock, held
        holder.exec_driver_sql("SELECT 1")
        waited = poster.post(f"/api/threads/{thread_id}/posts", {"body": "待たされた"})
        page = httpx.get(f"{client.base_url}/threads/{thread_id}", cookies=cookies)
        read = httpx.get(f"{client.base_url}/threads/{thread_id}")
        holder.rollback()
    assert waited.status_code == 503, waited.text
    assert waited.headers["retry-after"] == "5"
    assert "データベースが応答しません" in waited.json()["detail"]
    assert page.status_code == 503 and "The database is not responding" in page.text
    assert read.status_code == 200 and "待つ" in read.text
    monkeypatch.undo()
    after = poster.post(f"/api/threads/{thread_id}/posts", {"body": "通った"})
    assert after.status_code == 201 and after.json()["post"]["number"] == 2, after.text


def test_only_a_lock_wait_or_a_lost_connection_counts_as_the_database_not_answering() -> None:
    locked = sqlite3.OperationalError("database is locked")
    assert _unavailable(locked)
    assert _unavailable(OperationalError("BEGIN IMMEDIATE", {}, locked))
    assert _unavailable(psycopg.OperationalError("connection refused"))
    missing = sqlite3.OperationalError("no such table: posts")
    assert not _unavailable(missing)  # a bug, answered 500 and logged as one
    assert not _unavailable(OperationalError("SELECT", {}, missing))


def test_the_pool_keeps_a_connection_for_every_request_let_in(settings: Settings) -> None:
    """With SQLAlchemy's default pool of five and twelve requests
    let in, the connections above five were opened and closed again for every request (on
    PostgreSQL a new backend each time). Twice twelve at once: the second time opens none."""
    wide = settings.model_copy(update={"max_requests_in_flight": 12})
    assert in_flight_limit(wide) == 12
    database = open_database(wide)
    opened: list[object] = []
    event.listen(database.engine, "connect", lambda *_: opened.append(1))
    try:
        for _ in range(2):
            before = len(opened)
            held = [database.engine.connect() for _ in range(12)]
            for connection in held:
                connection.close()
        assert len(opened) - before == 0 and len(opened) == 12
    finally:
        database.dispose()


SETTINGS_CHANGES = 10  # the default settings_changes_per_minute_per_account


def test_settings_changes_per_account_are_limited_and_keep_no_rows_without_bound(
    web: httpx.Client, database: Database
) -> None:
    """Webhooks added and removed, and private feed URLs renewed, each write a row: they count
    per account (429 past the limit, as posts do), a renewed feed URL replaces the old row,
    and removed webhooks are kept for the delivery log only a few at a time — so one account
    cannot fill the database, with rate limits on or off."""
    user = fast_users(database, 1, web)[0]
    for i in range(SETTINGS_CHANGES // 2):
        added = web.post(
            "/api/me/webhooks", json={"url": f"https://example.test/{i}"}, headers=user.headers
        )
        assert added.status_code == 201, added.text
        gone = web.delete(f"/api/me/webhooks/{added.json()['id']}", headers=user.headers)
        assert gone.status_code == 204, gone.text
    refused = web.post("/api/me/feed", headers=user.headers)
    assert_429(refused, "設定の変更が多すぎます（1分間に10回まで）")
    with database.session() as session:
        account = session.scalars(select(User).where(User.name == user.name)).one()
        for _ in range(12):  # past the limit's window: the services alone
            delivery.remove_webhook(
                session,
                account,
                delivery.add_webhook(session, account, "https://example.test/x").id,
            )
            feeds.new_feed_token(session, account)
        session.commit()
        hooks = session.scalars(select(Webhook).where(Webhook.user_id == account.id)).all()
        tokens = session.scalars(select(FeedToken).where(FeedToken.user_id == account.id)).all()
    assert len(hooks) == delivery.KEPT_REMOVED_WEBHOOKS and not any(h.active for h in hooks)
    assert len(tokens) == 1
