"""The server killed with SIGKILL in the middle of a load (talk in one thread, a game being
played in another): after a restart every acknowledged (201) post is there at its レス番, no
move is half-applied (every command post has its one bot reply, every move belongs to an
answered post), `bbsgm check` finds every thread numbered and every game equal to its replay,
and the board goes on where it stopped.

Runs on a database of its own (a file beside the test's, or a fresh PostgreSQL database), as
`bbsgm serve --workers 2`; the kill goes to the whole process group.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select

from app.config import Settings
from app.db import migrate
from app.db.engine import Database
from app.db.models import Game, Move, Post
from app.gm.replay import replay
from app.gm.service import ensure_game_boards
from tests.conftest import TEST_SECRET, ApiUser, _create_pg_database, _drop_pg_database
from tests.support.load_support import (
    ServeProcess,
    assert_each_command_answered_once,
    assert_numbered,
    fast_users,
    serve_env,
    thread_posts,
)
from tests.test_gm_http import pick

TALKERS = 12
PLAYERS = 4
KILL_AFTER = 80  # acknowledged posts before the kill


@pytest.fixture
def crash_database(tmp_path: Path) -> Iterator[Database]:
    server = os.environ.get("BBSGM_TEST_DATABASE_URL")
    name = None
    if server:
        url, name = _create_pg_database(server)
    else:
        url = f"sqlite:///{tmp_path / 'crash.db'}"
    settings = Settings(database_url=url, secret_key=TEST_SECRET, tick_seconds=0)
    db = Database(url)
    migrate.upgrade(settings, db.engine)
    with db.session() as session:
        ensure_game_boards(session)
        session.commit()
    yield db
    db.dispose()
    if server and name:
        _drop_pg_database(server, name)


def bbsgm_check(url: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "BBSGM_DATABASE_URL": url, "BBSGM_SECRET_KEY": TEST_SECRET}
    return subprocess.run(
        [sys.executable, "-m", "app.cli", "check"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_sigkill_mid_load_loses_no_acknowledged_post(
    crash_database: Database, tmp_path: Path
) -> None:
    url = crash_database.url
    server = ServeProcess(serve_env(url, TEST_SECRET), workers=2, log=tmp_path / "serve.log")
    server.start()
    try:
        with httpx.Client(base_url=server.url, timeout=60) as web:
            gm, *rest = fast_users(crash_database, 1 + PLAYERS + TALKERS, web, prefix="crash")
            players, talkers = rest[:PLAYERS], rest[PLAYERS:]
            talk = gm.post("/api/boards/chat/threads", {"title": "落ちる", "body": "1"}).json()
            made = gm.post("/api/games", {"kind": "eitsuku", "title": "落ちる卓", "options": {}})
            game_id, game_thread = made.json()["id"], made.json()["thread_id"]
            for player in players:
                player.post(f"/api/threads/{game_thread}/posts", {"body": "JOIN"})
            started = gm.post(f"/api/threads/{game_thread}/posts", {"body": "START"}).json()
            assert started["replies"][0]["ok"], started

        acknowledged = asyncio.run(
            load_until_killed(server, talk["id"], (game_id, game_thread), players, talkers)
        )
        assert sum(len(posts) for posts in acknowledged.values()) >= KILL_AFTER
    finally:
        server.kill()

    checked = bbsgm_check(url)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "0 problem(s)" in checked.stdout

    for thread_id in (talk["id"], game_thread):
        posts = thread_posts(crash_database, thread_id)
        assert_numbered(posts, len(posts))
        stored = {p.number: p.body for p in posts}
        for number, body in acknowledged.get(thread_id, []):
            assert stored.get(number) == body, f"acknowledged post {thread_id}/{number} lost"
    game_posts = thread_posts(crash_database, game_thread)
    assert_each_command_answered_once(game_posts)
    with crash_database.session() as session:
        game = session.get(Game, game_id)
        assert game is not None and game.state is not None
        assert replay(session, game) == game.state
        answered = {p.reply_to for p in game_posts if p.kind == "gm" and p.reply_ok}
        numbers = {p.id: p.number for p in game_posts}
        for move in session.scalars(select(Move).where(Move.game_id == game_id)):
            assert move.post_id is not None and numbers[move.post_id] in answered
        version_before = game.version

    # Restarted, the board goes on: the next レス番, and the game takes the next move.
    again = ServeProcess(serve_env(url, TEST_SECRET), workers=2, log=tmp_path / "again.log")
    again.start()
    try:
        with httpx.Client(base_url=again.url, timeout=60) as web:
            player = ApiUser(web, players[0].name, players[0].token)
            count = len(thread_posts(crash_database, talk["id"]))
            more = player.post(f"/api/threads/{talk['id']}/posts", {"body": "復旧"})
            assert more.status_code == 201 and more.json()["post"]["number"] == count + 1
            legal = player.get(f"/api/games/{game_id}/legal").json()["commands"]
            if legal:
                moved = player.post(f"/api/threads/{game_thread}/posts", {"body": pick(legal)})
                assert moved.json()["replies"][0]["ok"], moved.text
    finally:
        again.stop()
    with crash_database.session() as session:
        game = session.scalar(select(Game).where(Game.id == game_id))
        assert game is not None and replay(session, game) == game.state
        assert game.version >= version_before
        assert session.scalar(select(Post).where(Post.body == "復旧")) is not None


async def load_until_killed(
    server: ServeProcess,
    talk_thread: int,
    game: tuple[int, int],
    players: list[ApiUser],
    talkers: list[ApiUser],
) -> dict[int, list[tuple[int, str]]]:
    """Talkers post in one thread, players play the game; SIGKILL after KILL_AFTER 201s.
    Returns what was acknowledged, by thread."""
    game_id, game_thread = game
    acknowledged: dict[int, list[tuple[int, str]]] = {talk_thread: [], game_thread: []}
    interrupted: list[str] = []
    killed = asyncio.Event()
    done = 0

    def record(thread_id: int, reply: httpx.Response) -> None:
        nonlocal done
        assert reply.status_code == 201, reply.text
        post = reply.json()["post"]
        acknowledged[thread_id].append((post["number"], post["body"]))
        done += 1
        if done >= KILL_AFTER and not killed.is_set():
            killed.set()
            server.kill()  # the supervisor and both workers, mid-request for many clients

    async def talker(c: httpx.AsyncClient, user: ApiUser) -> None:
        for i in range(1000):
            if killed.is_set():
                return
            try:
                reply = await c.post(
                    f"/api/threads/{talk_thread}/posts",
                    json={"body": f"{user.name} {i}"},
                    headers=user.headers,
                )
            except httpx.TransportError:
                interrupted.append(user.name)  # in flight when the server died
                return
            record(talk_thread, reply)

    async def player(c: httpx.AsyncClient, user: ApiUser) -> None:
        for _ in range(1000):
            if killed.is_set():
                return
            try:
                legal = await c.get(f"/api/games/{game_id}/legal", headers=user.headers)
                commands = legal.json()["commands"]
                body = pick(commands) if commands else "様子見"
                reply = await c.post(
                    f"/api/threads/{game_thread}/posts", json={"body": body}, headers=user.headers
                )
            except httpx.TransportError:
                interrupted.append(user.name)
                return
            record(game_thread, reply)

    limits = httpx.Limits(max_keepalive_connections=0, max_connections=100)
    async with httpx.AsyncClient(base_url=server.url, timeout=60, limits=limits) as c:
        await asyncio.gather(*(talker(c, u) for u in talkers), *(player(c, u) for u in players))
    assert interrupted, "the kill should have caught requests in flight"
    return acknowledged
