"""Authorization, endpoint by endpoint, for anonymous / player / other player / GM / admin
(app.forum.moderation.set_admin) and a logged-in stranger: who may post, hide, seal and read what;
nobody reads another seat's hidden view or sealed commands; nobody acts for another player;
GM commands by anyone but the game's GM change nothing; every POST page route refuses a form
without its CSRF token and stores nothing; the JSON API never acts on a cookie."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from app.db.engine import Database
from app.db.models import Base, Game, RateLimit
from app.forum.moderation import set_admin
from app.games import all_games, find_game
from tests.conftest import ApiUser, LiveServer
from tests.support.load_support import fast_users, session_cookie, started_eitsuku
from tests.test_fuzz_api import ENDPOINTS
from tests.test_gm_http import pick

ROLES = ("anonymous", "player", "other", "gm", "admin", "stranger")
TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')


@dataclass
class Table:
    """One started えいつく game (GM, two players), a talk thread, and who is who."""

    web: httpx.Client
    users: dict[str, ApiUser | None]
    game_id: int
    game_thread: int
    talk_thread: int

    def headers(self, role: str) -> dict[str, str]:
        user = self.users[role]
        return user.headers if user is not None else {}

    def call(self, role: str, method: str, path: str, json: Any = None) -> httpx.Response:
        return self.web.request(method, path, json=json, headers=self.headers(role))

    def version(self) -> int:
        return int(self.web.get(f"/api/games/{self.game_id}").json()["version"])


@pytest.fixture(scope="module")
def table(live_server: LiveServer, database: Database) -> Iterator[Table]:
    with httpx.Client(base_url=live_server.url, timeout=30) as web:
        gm, player, other, admin, stranger = fast_users(database, 5, web, prefix="authz")
        with database.session() as session:
            set_admin(session, admin.name, True)
            session.commit()
        made = started_eitsuku(gm, [player, other], "権限")
        talk = stranger.post("/api/boards/chat/threads", {"title": "雑談", "body": "1"}).json()
        users: dict[str, ApiUser | None] = {
            "anonymous": None,
            "player": player,
            "other": other,
            "gm": gm,
            "admin": admin,
            "stranger": stranger,
        }
        yield Table(web, users, made["id"], made["thread_id"], talk["id"])


def expect(table: Table, method: str, path: str, wanted: dict[str, int], body: Any = None) -> None:
    got = {role: table.call(role, method, path, body).status_code for role in wanted}
    assert got == wanted, f"{method} {path}"


# --- the API, endpoint by endpoint ---------------------------------------------------------


def test_reading_is_public_writing_needs_a_login(table: Table) -> None:
    everyone = dict.fromkeys(ROLES, 200)
    g, t = table.game_id, table.talk_thread
    for path in (
        "/api/boards",
        f"/api/threads/{t}",
        f"/api/games/{g}",
        f"/api/games/{g}/moves",
        f"/api/games/{g}/log",
        f"/api/games/{g}/replay?at=0",
        f"/api/games/{g}/export",
        f"/api/games/{g}/legal",
        f"/api/games/{g}/view",
        f"/api/games/{g}/sealed",
    ):
        expect(table, "GET", path, everyone)
    members = {**dict.fromkeys(ROLES, 200), "anonymous": 401}
    expect(table, "GET", "/api/me", members)
    created = {**dict.fromkeys(ROLES, 201), "anonymous": 401}
    expect(table, "POST", f"/api/threads/{t}/posts", created, {"body": "こんにちは"})
    expect(table, "POST", "/api/boards/chat/threads", created, {"title": "t", "body": "b"})
    expect(table, "POST", f"/api/games/{g}/preview", members, {"body": "DRAW"})
    expect(table, "POST", "/api/games", created, {"kind": "eitsuku", "title": "t", "options": {}})


def test_hiding_posts_gm_in_the_game_thread_admin_everywhere(table: Table) -> None:
    number = table.call("player", "POST", f"/api/threads/{table.game_thread}/posts", {"body": "x"})
    game_post = number.json()["post"]["number"]
    talk = table.call("player", "POST", f"/api/threads/{table.talk_thread}/posts", {"body": "y"})
    talk_post = talk.json()["post"]["number"]
    for thread_id, post, allowed in (
        (table.game_thread, game_post, {"gm", "admin"}),
        (table.talk_thread, talk_post, {"admin"}),
    ):
        for role in ROLES:
            hide = table.call(role, "POST", f"/api/threads/{thread_id}/posts/{post}/hide")
            if role == "anonymous":
                assert hide.status_code == 401
            elif role in allowed:
                assert hide.status_code == 200 and hide.json()["hidden"] is True, role
                shown = table.web.get(f"/api/threads/{thread_id}", params={"after": post - 1})
                assert shown.json()["posts"][0]["body"] == "あぼーん"
                unhide = table.call(role, "POST", f"/api/threads/{thread_id}/posts/{post}/unhide")
                assert unhide.status_code == 200
            else:
                assert hide.status_code == 403, role
                assert "GM" in hide.json()["detail"]


def test_sealed_commands_only_by_participants_and_read_only_by_author_and_gm(
    table: Table,
) -> None:
    path = f"/api/games/{table.game_id}/sealed"
    secret = {role: f"END 秘密の{role}" for role in ROLES}
    for role in ROLES:
        sent = table.call(role, "POST", path, {"body": secret[role]})
        wanted = {"anonymous": 401, "admin": 403, "stranger": 403}.get(role, 201)
        assert sent.status_code == wanted, (role, sent.text)
    bodies = {role: [row["body"] for row in table.call(role, "GET", path).json()] for role in ROLES}
    assert bodies["anonymous"] == [] and bodies["stranger"] == [] and bodies["admin"] == []
    assert secret["player"] in bodies["player"] and secret["other"] not in bodies["player"]
    assert secret["other"] in bodies["other"] and secret["player"] not in bodies["other"]
    assert {secret["player"], secret["other"], secret["gm"]} <= set(bodies["gm"])


def test_nobody_acts_for_another_player(table: Table) -> None:
    """The seat of a move is always the poster's own: only the GM's AS speaks for a seat."""
    before = table.version()
    other = table.users["other"]
    assert other is not None
    for role in ("player", "admin", "stranger"):
        reply = table.call(
            role,
            "POST",
            f"/api/threads/{table.game_thread}/posts",
            {"body": f"AS {other.name} DRAW"},
        )
        answer = reply.json()["replies"][0]
        assert answer["ok"] is False and "GM だけ" in answer["error"]["message"], role
    assert table.version() == before
    legal = table.call("player", "GET", f"/api/games/{table.game_id}/legal").json()["commands"]
    body = {"body": pick(legal)}
    moved = table.call("player", "POST", f"/api/threads/{table.game_thread}/posts", body)
    assert moved.json()["replies"][0]["ok"], moved.text
    moves = table.web.get(f"/api/games/{table.game_id}/moves").json()
    player = table.users["player"]
    assert player is not None and moves[-1]["actor"] == player.name


@pytest.mark.parametrize(
    "line",
    [
        "START",
        "UNDO",
        "PAUSE",
        "RESUME",
        "ABORT",
        "DEADLINE 24",
        "KICK {other}",
        "REPLACE {other} {stranger}",
        "AS {other} END",
        "ADJUST {other} +5 ずる",
    ],
)
def test_gm_commands_by_anyone_else_change_nothing(table: Table, line: str) -> None:
    names = {role: u.name for role, u in table.users.items() if u is not None}
    text = line.format(**names)
    before = table.web.get(f"/api/games/{table.game_id}").json()
    for role in ("player", "other", "admin", "stranger"):
        reply = table.call(role, "POST", f"/api/threads/{table.game_thread}/posts", {"body": text})
        assert reply.status_code == 201
        answer = reply.json()["replies"][0]
        assert answer["ok"] is False, (role, text)
        assert (
            "GM だけ" in answer["error"]["message"]
            or "プレイヤーではありません" in (answer["error"]["message"])
        )
        sealed = table.call(role, "POST", f"/api/games/{table.game_id}/sealed", {"body": text})
        assert sealed.status_code in (201, 403)
        if sealed.status_code == 201:
            assert sealed.json()["sealed"]["ok"] is False
    after = table.web.get(f"/api/games/{table.game_id}").json()
    assert after == before


# --- hidden views, for every game kind -----------------------------------------------------


@pytest.mark.parametrize("kind", sorted(g.kind for g in all_games()))
def test_each_caller_gets_exactly_their_own_view(
    live_server: LiveServer, database: Database, kind: str
) -> None:
    impl = find_game(kind)
    assert impl is not None
    with httpx.Client(base_url=live_server.url, timeout=30) as web:
        gm, *people = fast_users(database, 2 + impl.min_players, web, prefix="view")
        seats, stranger = people[: impl.min_players], people[impl.min_players]
        made = gm.post("/api/games", {"kind": kind, "title": "視点", "options": {}}).json()
        for person in seats:
            person.post(f"/api/threads/{made['thread_id']}/posts", {"body": "JOIN"})
        started = gm.post(f"/api/threads/{made['thread_id']}/posts", {"body": "START"}).json()
        assert started["replies"][0]["ok"], started["replies"][0]["body"]
        with database.session() as session:
            game = session.get(Game, made["id"])
            assert game is not None and game.state is not None
            state = game.state
        path = f"/api/games/{made['id']}/view"
        assert web.get(path).json() == impl.view(state, None)
        assert stranger.get(path).json() == impl.view(state, None)
        assert gm.get(path).json() == impl.view(state, "gm")
        views = [person.get(path).json() for person in seats]
        for seat, view in enumerate(views):
            assert view == impl.view(state, seat)
        for seat, view in enumerate(views):  # where the game hides something, it stays hidden
            for other in range(len(seats)):
                if other != seat and impl.view(state, other) != impl.view(state, seat):
                    assert view != impl.view(state, other)
        public = web.get(f"/api/games/{made['id']}").json()["view"]
        assert public == impl.view(state, None)


# --- CSRF on every POST page, cookies never on the API -------------------------------------

# The 専ブラ's bbs.cgi takes no CSRF token: it signs in by HTTP Basic only, never by the session
# cookie, and refuses any request a browser page sends (tests/test_bbs_cgi.py:
# test_the_site_session_cookie_never_signs_in_to_bbs_cgi,
# test_a_request_from_a_web_page_never_posts_even_with_credentials; docs/security.md).
PAGE_POSTS = sorted(
    path
    for method, path in ENDPOINTS
    if method == "POST" and not path.startswith("/api") and path != "/test/bbs.cgi"
)


def fingerprint(database: Database) -> dict[str, int]:
    """Row counts of every table (rate-limit counters aside): what a refused form must keep."""
    with database.session() as session:
        return {
            table.name: session.scalar(select(func.count()).select_from(table)) or 0
            for table in Base.metadata.sorted_tables
            if table.name != RateLimit.__tablename__
        }


@pytest.mark.parametrize("path", PAGE_POSTS)
@pytest.mark.parametrize("token", ["missing", "forged", "other browser"])
def test_every_post_page_refuses_a_form_without_its_csrf_token(
    live_server: LiveServer, database: Database, table: Table, path: str, token: str
) -> None:
    player = table.users["player"]
    assert player is not None
    values = {
        "slug": "chat",
        "thread_id": str(table.game_thread),
        "game_id": str(table.game_id),
        "number": "1",
    }
    url = re.sub(r"{(\w+)}", lambda m: values.get(m.group(1), "1"), path)
    form = {
        "body": "JOIN",
        "title": "csrf",
        "name": "csrfname",
        "password": "password123",
        "kind": "eitsuku",
        "action": "hide",
    }
    with httpx.Client(base_url=live_server.url, timeout=30) as other_browser:
        foreign = TOKEN.search(other_browser.get("/login").text)
        assert foreign is not None
    with httpx.Client(base_url=live_server.url, timeout=30) as web:
        web.cookies.set("bbsgm_session", session_cookie(database, player.name))
        web.get("/")  # this browser's CSRF cookie
        if token == "forged":
            form["csrf_token"] = "forged.token"
        elif token == "other browser":
            form["csrf_token"] = foreign.group(1)
        before = fingerprint(database)
        reply = web.post(url, data=form)
        assert reply.status_code == 403, (path, reply.status_code)
        assert "フォームの有効期限が切れたか" in reply.text
        assert fingerprint(database) == before
        assert web.get("/api/me", headers={}).status_code == 401  # cookies never log into the API
        assert "ログアウト" in web.get("/").text  # still logged in: /logout refused too


def test_api_ignores_the_session_cookie(
    live_server: LiveServer, database: Database, table: Table
) -> None:
    player = table.users["player"]
    assert player is not None
    cookies = {"bbsgm_session": session_cookie(database, player.name)}
    with httpx.Client(base_url=live_server.url, cookies=cookies) as web:
        assert web.get("/api/me").status_code == 401
        posted = web.post(f"/api/threads/{table.talk_thread}/posts", json={"body": "cookie"})
        assert posted.status_code == 401


def test_the_page_route_list_is_the_apps() -> None:
    """PAGE_POSTS comes from the app's own routes (tests/test_fuzz_api.py), new ones included."""
    wanted = {"/threads/{thread_id}/posts", "/register", "/login", "/logout", "/games"}
    assert wanted <= set(PAGE_POSTS)
