"""Random requests to every endpoint of the app (JSON API and pages, as listed by the app's
own routes, so new endpoints are fuzzed too): random path values, query strings and bodies
(JSON of any shape, bodies shaped like the real ones with wrong values, broken bytes, forms),
anonymous, with a real login or with a forged one. Never a 500; every rejection says what is
wrong: `{"detail": ...}` from the API, a `role="alert"` message on a page.

Generated text never contains "://" or "@", so no URL or mail address reaches an endpoint
that might try to deliver to one (webhooks, mail): the tests talk to 127.0.0.1 only.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import fastapi.routing
import httpx
import pytest
from fastapi.routing import APIRoute
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select

from app.config import Settings
from app.db.engine import Database
from app.db.models import SealedCommand
from app.main import create_app
from tests.conftest import LiveServer
from tests.support.load_support import fast_users, session_cookie

ALERT = re.compile(r'role="alert">\s*([^<\s][^<]*)<')
TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')
# Reading a live event stream would never end: its headers are checked, not its body.
STREAMING = "text/event-stream"


def app_endpoints() -> list[tuple[str, str]]:
    """(method, path) of every route the app serves, from a throwaway instance."""
    app = create_app(Settings(database_url="sqlite://", secret_key="x", tick_seconds=0))
    iterate = getattr(fastapi.routing, "iter_route_contexts", None)
    routes: list[Any] = list(iterate(app.routes)) if iterate is not None else list(app.routes)
    found = set()
    for route in routes:
        target = getattr(route, "route", route)
        if isinstance(target, APIRoute):
            found.update((method, route.path) for method in route.methods if method != "HEAD")
    return sorted(found)


ENDPOINTS = app_endpoints()


def safe(text: str) -> bool:
    return "://" not in text and "@" not in text


TEXT = st.text(max_size=40).filter(safe)
# What may stand in a header or cookie at all (printable ASCII; no ";" to keep cookies whole).
HEADER_TEXT = st.text(
    st.characters(min_codepoint=0x21, max_codepoint=0x7E, exclude_characters=";"),
    min_size=1,
    max_size=60,
)
LONG_TEXT = st.builds(
    lambda c, n: c * n, st.sampled_from(["あ", "x", "\n", "𠮷"]), st.integers(0, 12_000)
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    TEXT,
)
JSON_VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)
FIELDS = ["body", "title", "name", "password", "kind", "options", "url", "email", "events", "at"]
SHAPED = st.dictionaries(st.sampled_from(FIELDS), st.one_of(JSON_VALUES, LONG_TEXT), max_size=4)
RAW = st.one_of(
    st.binary(max_size=64),
    st.sampled_from([b"{", b"null", b"[]", b'{"body": "\xff\xfe"}', b"\x00", b'{"body": 1e999}']),
)


def path_values(fixtures: dict[str, int]) -> dict[str, st.SearchStrategy[Any]]:
    ids = st.sampled_from([0, -1, 2**31, 2**63, "abc", "1.5", "１", "%2F", "9" * 40])
    return {
        "thread_id": st.one_of(st.sampled_from([fixtures["thread"], fixtures["game_thread"]]), ids),
        "game_id": st.one_of(st.just(fixtures["game"]), ids),
        "number": st.one_of(st.sampled_from([1, 2, 3]), ids),
        "slug": st.sampled_from(["chat", "lobby", "eitsuku", "nope", "..", "あ", "a" * 300]),
        "board": st.sampled_from(["chat", "lobby", "nope", "あ"]),
        "key": st.one_of(st.just(fixtures["thread"]), ids),
        "hook_id": st.one_of(st.just(1), ids),
        # card names (/api/cards/{name}, /cards/{name}): starter cards in any width or case
        "name": st.sampled_from(["舞踏子", "MAKI", "ｍａｋｉ", "nope", "..", "\x00", "a" * 300]),
    }


@pytest.fixture(scope="module")
def fixtures(live_server: LiveServer, database: Database) -> Iterator[dict[str, Any]]:
    with httpx.Client(base_url=live_server.url, timeout=30) as web:
        owner, player = fast_users(database, 2, web, prefix="fuzz")
        thread = owner.post("/api/boards/chat/threads", {"title": "fuzz", "body": "1\n>>1"})
        made = owner.post("/api/games", {"kind": "eitsuku", "title": "fuzz", "options": {}})
        game = made.json()
        player.post(f"/api/threads/{game['thread_id']}/posts", {"body": "JOIN"})
        owner.post(f"/api/threads/{game['thread_id']}/posts", {"body": "JOIN"})
        owner.post(f"/api/threads/{game['thread_id']}/posts", {"body": "START"})
        cookie = session_cookie(database, owner.name)
        web.cookies.set("bbsgm_session", cookie)
        page = web.get("/")
        token = TOKEN.search(page.text)
        yield {
            "thread": thread.json()["id"],
            "game": game["id"],
            "game_thread": game["thread_id"],
            "bearer": owner.token,
            "session": cookie,
            "csrf_cookie": web.cookies["bbsgm_csrf"],
            "csrf_token": token.group(1) if token else "",
        }


def check_answer(method: str, path: str, reply: httpx.Response, body: str) -> None:
    where = f"{method} {path} -> {reply.status_code}"
    assert reply.status_code < 500, f"{where}: {body[:2000]}"
    if reply.status_code < 400:
        return
    kind = reply.headers.get("content-type", "")
    if "json" in kind or path.startswith("/api"):
        detail = json.loads(body)["detail"]
        assert detail, where
        if isinstance(detail, list):
            assert all(item.get("msg") for item in detail), where
    elif "html" in kind:
        assert ALERT.search(body), f"{where}: no message in the page"
    else:
        assert body.strip(), where


def send(web: httpx.Client, method: str, path: str, **kw: Any) -> tuple[httpx.Response, str]:
    with web.stream(method, path, **kw) as reply:
        if reply.headers.get("content-type", "").startswith(STREAMING):
            return reply, ""
        reply.read()
        return reply, reply.text


FUZZ = settings(
    max_examples=10,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@pytest.mark.parametrize(("method", "path"), ENDPOINTS, ids=[f"{m} {p}" for m, p in ENDPOINTS])
@FUZZ
@given(data=st.data())
def test_random_requests(
    live_server: LiveServer,
    fixtures: dict[str, Any],
    method: str,
    path: str,
    data: st.DataObject,
) -> None:
    values = path_values(fixtures)
    url = path
    for name in re.findall(r"{(\w+)(?::\w+)?}", path):
        value = data.draw(values.get(name, st.one_of(TEXT.filter(bool), st.integers())), label=name)
        url = re.sub(r"{" + name + r"(?::\w+)?}", quote(str(value), safe=""), url)
    params = data.draw(
        st.dictionaries(
            st.sampled_from(
                ["page", "after", "limit", "at", "q", "status", "kind", "player", "max_cost", "x"]
            ),
            st.one_of(TEXT, st.integers(-(2**65), 2**65).map(str)),
            max_size=3,
        ),
        label="query",
    )
    headers: dict[str, str] = {}
    cookies: dict[str, str] = {"bbsgm_csrf": fixtures["csrf_cookie"]}
    who = data.draw(st.sampled_from(["anonymous", "member", "forged"]), label="who")
    logout = path.endswith("/logout")  # never the fixtures' own login
    if who == "member" and not logout:
        headers["authorization"] = f"Bearer {fixtures['bearer']}"
        cookies["bbsgm_session"] = fixtures["session"]
    elif who == "forged":
        headers["authorization"] = "Bearer " + data.draw(HEADER_TEXT, label="token")
        cookies["bbsgm_session"] = data.draw(HEADER_TEXT, label="cookie")
    kw: dict[str, Any] = {"params": params, "headers": headers}
    if method in ("POST", "PUT", "PATCH", "DELETE"):
        shape = data.draw(st.sampled_from(["json", "shaped", "raw", "form", "none"]), label="shape")
        if shape == "json":
            kw["content"] = json.dumps(data.draw(JSON_VALUES, label="json")).encode()
            headers["content-type"] = "application/json"
        elif shape == "shaped":
            kw["content"] = json.dumps(data.draw(SHAPED, label="shaped")).encode()
            headers["content-type"] = data.draw(
                st.sampled_from(
                    ["application/json", "text/plain", "application/json; charset=latin-1"]
                )
            )
        elif shape == "raw":
            kw["content"] = data.draw(RAW, label="raw")
            headers["content-type"] = data.draw(
                st.sampled_from(
                    ["application/json", "application/x-www-form-urlencoded", "multipart/form-data"]
                )
            )
        elif shape == "form":
            form = {
                k: v if isinstance(v, str) else json.dumps(v)
                for k, v in data.draw(SHAPED, label="form").items()
            }
            if data.draw(st.booleans(), label="with csrf"):
                form["csrf_token"] = fixtures["csrf_token"]
            kw["data"] = form
    with httpx.Client(base_url=live_server.url, timeout=60, cookies=cookies) as web:
        reply, body = send(web, method, url, **kw)
    check_answer(method, path, reply, body)


def test_every_route_is_fuzzed() -> None:
    """The list comes from the app: the API and the pages, reading and writing."""
    paths = {path for _, path in ENDPOINTS}
    assert {"/api/threads/{thread_id}/posts", "/threads/{thread_id}/posts", "/register"} <= paths
    assert {method for method, _ in ENDPOINTS} >= {"GET", "POST"}


REFUSED_SEALED = [
    ("anonymous", "ja", 401, "封印コマンドを送るにはログインしてください。"),
    ("stranger", "ja", 403, "封印コマンドを送れるのは、このゲームのプレイヤーと GM だけです。"),
    ("anonymous", "en", 401, "Log in to send a sealed command."),
    ("stranger", "en", 403, "Only this game’s players and GM can send sealed commands."),
]


def sealed_count(database: Database, game_id: int) -> int:
    with database.session() as session:
        return (
            session.scalar(
                select(func.count())
                .select_from(SealedCommand)
                .where(SealedCommand.game_id == game_id)
            )
            or 0
        )


@pytest.mark.parametrize(
    ("who", "lang", "status", "message"),
    REFUSED_SEALED,
    ids=[f"{who}-{lang}" for who, lang, *_ in REFUSED_SEALED],
)
def test_a_refused_sealed_command_says_why_to_a_visitor_without_the_form(
    live_server: LiveServer,
    database: Database,
    fixtures: dict[str, Any],
    who: str,
    lang: str,
    status: int,
    message: str,
) -> None:
    """The game page shows the sealed-command form to its players and GM only; the page that
    answers anyone else's sealed command (not logged in: 401, not a player: 403) still says
    what is wrong, in the reader's language, and nothing is stored."""
    game_id = fixtures["game"]
    cookies = {"bbsgm_csrf": fixtures["csrf_cookie"], "bbsgm_lang": lang}
    if who == "stranger":
        with httpx.Client(base_url=live_server.url) as web:
            stranger = fast_users(database, 1, web, prefix="seal")[0]
        cookies["bbsgm_session"] = session_cookie(database, stranger.name)
    before = sealed_count(database, game_id)
    form = {"body": "JOIN", "csrf_token": fixtures["csrf_token"]}
    with httpx.Client(base_url=live_server.url, cookies=cookies) as web:
        reply = web.post(f"/games/{game_id}/sealed", data=form)
    assert reply.status_code == status
    shown = ALERT.search(reply.text)
    assert shown is not None, "no message in the page"
    assert html.unescape(shown.group(1)).strip() == message
    assert f'action="/games/{game_id}/sealed"' not in reply.text  # still no form for them
    assert sealed_count(database, game_id) == before
