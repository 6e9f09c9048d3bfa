"""Shared helpers of the archive tests (no tests here): a whole えいつく game played by script at
the service tier, recording the state after every move."""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.orm import Session

from app.accounts import users as accounts
from app.db.models import Game, User
from app.gm import replay
from app.gm import service as gm
from tests.conftest import unique_name
from tests.test_gm_http import pick

SECRET = "archive-test-secret"
# Characters for made-up search words that no other test writes.
KANJI = "霞霰霹靂鰯鯖鰹鮪鱈鰻鯛鯉鮎鮭鰆鰤鮫鯨鰐亀蛙蛍蜻蛉蟋蟀蝶蜂蟻"


def unique_words(n: int = 6) -> str:
    return "".join(random.choice(KANJI) for _ in range(n))


def make_user(session: Session, prefix: str = "a") -> User:
    return accounts.register(session, unique_name(prefix), "password123")


@dataclass
class Played:
    game: Game
    master: User
    players: list[User]
    states: dict[int, dict[str, Any]] = field(default_factory=dict)  # N moves -> state


def new_table(session: Session, players: int = 2, title: str = "アーカイブ卓") -> Played:
    master = make_user(session, "gm")
    seats = [make_user(session, "p") for _ in range(players)]
    game = gm.create_game(session, master, "eitsuku", title, {}, SECRET)
    for user in seats:
        gm.submit_post(session, game.thread_id, user, "参加\nよろしくお願いします", SECRET)
    return Played(game, master, seats)


def post(session: Session, game: Game, user: User, body: str) -> None:
    _post, replies = gm.submit_post(session, game.thread_id, user, body, SECRET)
    assert not replies or replies[0].reply_ok, replies[0].body


def play(
    session: Session, players: int = 2, title: str = "アーカイブ卓", stop_after: int | None = None
) -> Played:
    """START, then every player posts a legal line in turn until the game is over (or until
    ``stop_after`` moves). ``states[N]`` is the state after the first N moves."""
    played = new_table(session, players, title)
    game = played.game
    post(session, game, played.master, "START")
    played.states[0] = copy.deepcopy(game.state) or {}
    while game.status == "active":
        progressed = False
        for user in played.players:
            lines = gm.legal_lines(game, user)
            if not lines:
                continue
            post(session, game, user, pick(lines))
            count = len(replay.applied_moves(session, game))
            played.states[count] = copy.deepcopy(game.state) or {}
            progressed = True
            if stop_after is not None and count >= stop_after:
                return played
        assert progressed and len(played.states) < 2000
    return played
