"""Under load, against `bbsgm serve --workers 2` (two processes sharing only the database, on
SQLite as on PostgreSQL): 64 clients posting into one thread at once, and every player of a
game moving at once while others chat and the GM takes moves back. Every acknowledged post is
stored at its レス番, the numbers have no gaps or duplicates, every command post has its one bot
reply, and the game's stored state equals the replay of its log."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx
import pytest
from sqlalchemy import select

from app.archive.checks import check_post_numbers
from app.config import Settings
from app.db.engine import Database
from app.db.models import Game, GamePlayer, Move
from app.gm.platform import made_after_undo
from app.gm.replay import replay
from tests.conftest import ApiUser, LiveServer
from tests.support.load_support import (
    ServeProcess,
    assert_each_command_answered_once,
    assert_numbered,
    fast_users,
    serve_env,
    thread_posts,
)
from tests.test_gm_http import pick

CLIENTS = 64
POSTS_EACH = 3
SPECTATORS = 8
ROUNDS = 14


@pytest.fixture(scope="module")
def server(
    settings: Settings, database: Database, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServeProcess]:
    env = serve_env(settings.database_url, settings.resolved_secret_key())
    log = tmp_path_factory.mktemp("load") / "serve.log"
    process = ServeProcess(env, workers=2, log=log)
    process.start()
    yield process
    process.stop()


def fresh_connections(url: str) -> httpx.AsyncClient:
    """One connection per request, so the kernel spreads them over both workers."""
    limits = httpx.Limits(max_keepalive_connections=0, max_connections=200)
    return httpx.AsyncClient(base_url=url, timeout=120, limits=limits)


async def post(c: httpx.AsyncClient, user: ApiUser, thread_id: int, body: str) -> httpx.Response:
    url = f"/api/threads/{thread_id}/posts"
    return await c.post(url, json={"body": body}, headers=user.headers)


def test_64_clients_post_into_one_thread_at_once(server: ServeProcess, database: Database) -> None:
    with httpx.Client(base_url=server.url, timeout=60) as web:
        users = fast_users(database, CLIENTS, web, prefix="load")
        created = users[0].post("/api/boards/chat/threads", {"title": "64人", "body": "1"})
        assert created.status_code == 201, created.text
    thread_id = created.json()["id"]

    async def client(c: httpx.AsyncClient, user: ApiUser) -> list[tuple[int, str]]:
        acknowledged = []
        for i in range(POSTS_EACH):
            body = f"{user.name} の {i} 回目"
            reply = await post(c, user, thread_id, body)
            assert reply.status_code == 201, reply.text + server.log()
            acknowledged.append((reply.json()["post"]["number"], body))
        return acknowledged

    async def everyone() -> list[tuple[int, str]]:
        async with fresh_connections(server.url) as c:
            chunks = await asyncio.gather(*(client(c, u) for u in users))
        return [entry for chunk in chunks for entry in chunk]

    acknowledged = asyncio.run(everyone())
    total = 1 + CLIENTS * POSTS_EACH
    assert sorted(n for n, _ in acknowledged) == list(range(2, total + 1)), server.log()
    posts = thread_posts(database, thread_id)
    assert_numbered(posts, total)
    stored = {p.number: p.body for p in posts}
    assert all(stored[number] == body for number, body in acknowledged)
    with database.session() as session:
        assert not [line for line in check_post_numbers(session) if f"thread {thread_id}:" in line]


def test_64_clients_into_one_process(live_server: LiveServer, database: Database) -> None:
    """More clients than one process has worker threads (40) or pooled connections (15): the
    requests beyond app.accounts.ratelimit.RequestLimits' places wait their turn instead of starving
    the ones that hold the database (they used to time out after 30 s with 500s)."""
    with httpx.Client(base_url=live_server.url, timeout=60) as web:
        users = fast_users(database, CLIENTS, web, prefix="one")
        thread_id = (
            users[0].post("/api/boards/chat/threads", {"title": "一つ", "body": "1"}).json()["id"]
        )

    async def everyone() -> list[httpx.Response]:
        async with fresh_connections(live_server.url) as c:
            return await asyncio.gather(*(post(c, u, thread_id, u.name) for u in users))

    replies = asyncio.run(everyone())
    assert [r.status_code for r in replies] == [201] * CLIENTS
    assert_numbered(thread_posts(database, thread_id), 1 + CLIENTS)


def test_every_player_moves_at_once(server: ServeProcess, database: Database) -> None:
    with httpx.Client(base_url=server.url, timeout=60) as web:
        gm, *people = fast_users(database, 1 + 6 + SPECTATORS, web, prefix="move")
        players, spectators = people[:6], people[6:]
        made = gm.post("/api/games", {"kind": "eitsuku", "title": "同時", "options": {}})
        assert made.status_code == 201, made.text
        game_id, thread_id = made.json()["id"], made.json()["thread_id"]

        async def join_all() -> list[httpx.Response]:
            async with fresh_connections(server.url) as c:
                return await asyncio.gather(*(post(c, p, thread_id, "JOIN") for p in players))

        joined = asyncio.run(join_all())
        assert all(r.status_code == 201 and r.json()["replies"][0]["ok"] for r in joined)
        started = gm.post(f"/api/threads/{thread_id}/posts", {"body": "START"})
        assert started.json()["replies"][0]["ok"], started.text

        acknowledged: list[tuple[int, str]] = []

        async def one_round(number: int) -> list[httpx.Response]:
            async with fresh_connections(server.url) as c:
                legal = await asyncio.gather(
                    *(c.get(f"/api/games/{game_id}/legal", headers=p.headers) for p in players)
                )
                sends = [
                    post(c, p, thread_id, pick(reply.json()["commands"]))
                    for p, reply in zip(players, legal, strict=True)
                    if reply.json()["commands"]
                ]
                sends += [post(c, s, thread_id, f"観戦 {number}") for s in spectators]
                if number % 5 == 4:  # the GM takes a post back in the middle of it all
                    sends.append(post(c, gm, thread_id, "UNDO"))
                return await asyncio.gather(*sends)

        for number in range(ROUNDS):
            if web.get(f"/api/games/{game_id}").json()["status"] != "active":
                break
            for reply in asyncio.run(one_round(number)):
                assert reply.status_code == 201, reply.text
                acknowledged.append((reply.json()["post"]["number"], reply.json()["post"]["body"]))

    posts = thread_posts(database, thread_id)
    with database.session() as session:
        game = session.get(Game, game_id)
        assert game is not None
        assert sorted(p.seat for p in game.players) == list(range(6))
        assert len({p.user_id for p in game.players}) == 6
        assert game.state is not None and replay(session, game) == game.state
        seqs = list(
            session.scalars(select(Move.seq).where(Move.game_id == game_id).order_by(Move.seq))
        )
        assert seqs == list(range(1, len(seqs) + 1))
        applied = session.scalars(select(Move).where(Move.game_id == game_id)).all()
        seats = session.scalars(select(GamePlayer.seat).where(GamePlayer.game_id == game_id))
        assert {m.actor_seat for m in applied if not made_after_undo(m)} <= set(seats)
        # the bot's GM moves after an UNDO: a deck that got back a card the thread saw drawn
        assert all(m.command.startswith("SHUFFLE ") for m in applied if made_after_undo(m))
    assert_numbered(posts, len(posts))
    stored = {p.number: p.body for p in posts}
    assert all(stored[number] == body for number, body in acknowledged)
    assert_each_command_answered_once(posts)
    moved = [p for p in posts if p.kind == "gm" and p.reply_ok]
    assert len(moved) > ROUNDS, "the load should have applied moves in most rounds"


def test_log_has_no_server_errors(server: ServeProcess) -> None:
    assert "Traceback" not in server.log() and "Exception" not in server.log()
