"""A ポピュラス game in its draft where the bot has made sealed moves for two seats: one KICKed,
one past its deadline (issue #40: the bot's secret moves; tests/test_secret_moves.py and the
authorization matrix)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

import httpx
from sqlalchemy import select

from app.db.engine import Database
from app.db.models import Game, Move, utcnow
from app.gm import deadlines
from tests.conftest import ApiUser


@dataclass
class BotPicks:
    game_id: int
    thread_id: int
    first: ApiUser  # picked by a sealed command of their own
    late: ApiUser  # the bot picked for them at the deadline
    kicked: ApiUser  # KICKed: the bot picks for the seat
    picks: dict[int, list[str]]  # seat -> its PICK lines, in order


def post(user: ApiUser, thread_id: int, body: str) -> None:
    reply = user.post(f"/api/threads/{thread_id}/posts", {"body": body}).json()
    assert reply["replies"][0]["ok"], (body, reply)


def seal(user: ApiUser, game_id: int, body: str) -> None:
    answer = user.post(f"/api/games/{game_id}/sealed", {"body": body})
    assert answer.status_code in (200, 201), answer.text


def populous_with_bot_picks(
    client: httpx.Client,
    database: Database,
    secret: str,
    master: ApiUser,
    players: list[ApiUser],
    title: str,
) -> BotPicks:
    """Three seats race into the draft; the GM KICKs seat 3, seat 1 seals a PICK, seat 2 lets
    the deadline pass (``deadlines.tick`` an hour after it)."""
    made = master.post("/api/games", {"kind": "populous", "title": title}).json()
    gid, tid = made["id"], made["thread_id"]
    for user in players:
        post(user, tid, "JOIN")
    post(master, tid, "DEADLINE 24")
    post(master, tid, "START")
    by_name = {user.name: user for user in players}
    for _ in range(60):
        view = client.get(f"/api/games/{gid}").json()["view"]
        if view["phase"] != "race":
            break
        user = by_name[view["waiting_for"][0]]
        post(user, tid, user.get(f"/api/games/{gid}/legal").json()["commands"][0])
    assert client.get(f"/api/games/{gid}").json()["view"]["phase"] == "draft"
    first, late, kicked = players
    post(master, tid, f"KICK {kicked.name}")
    seal(first, gid, first.get(f"/api/games/{gid}/legal").json()["sealed"][0])
    later = utcnow() + timedelta(hours=25)
    assert gid in deadlines.tick(database, secret, now=later)
    with database.session() as session:
        game = session.get(Game, gid)
        assert game is not None and game.status == "active"
        moves = list(session.scalars(select(Move).where(Move.game_id == gid).order_by(Move.seq)))
        picks = {
            seat: [m.command for m in moves if m.actor_seat == seat and m.command[:4] == "PICK"]
            for seat in range(3)
        }
        bot = {m.actor_seat for m in moves if m.by_bot and m.sealed}
    assert picks[0] and picks[1] and picks[2], picks
    assert bot == {1, 2}, "the bot picked sealed for the late seat and the kicked one"
    return BotPicks(gid, tid, first, late, kicked, picks)
