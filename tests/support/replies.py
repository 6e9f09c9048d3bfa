"""Whole games played through the game master, one post a move, for the reply checks
(issue #43): the scripted random legal games of tests/support/fuzz_states.py posted step by
step in the thread (sealed steps through the sealed endpoint) as their players would, and the
bot's posts collected. `estimated_height` turns a reply into its height in the thread on a
390 px phone (calibrated in Chromium: bench/replies.py)."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.accounts import users as accounts
from app.db.models import Post, User
from app.gm import service as gm
from tests.support.fuzz_states import PLAYERS, RECRUITING, Script, Table, script

KINDS = ("eitsuku", "eleusis", "populous", "idolwp", "cardbattle")
NAMES = ["太郎", "次郎", "花子", "四郎"]

# The thread at 390 px (bench/replies.py measured them in Chromium): a post's frame (header,
# padding, margins) and one line of its body, and how many half-width columns a body line holds.
# Fitted in Chromium with a Japanese font installed (bench/replies.py --calibrate, the えいつく
# thread, 49 bot posts, 2026-12-02): body −0.8 px + 24.2 px a shown line, 47 columns a line
# (about 21 full-width characters in the 342 px column), frame 67 px. (A first fit, 74
# columns and 56 px, flattered long Japanese lines by up to 206 px a post.)
POST_FRAME_PX = 67
LINE_PX = 24.2
COLUMNS = 47


def columns(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WFA" else 1 for ch in text)


def shown_lines(body: str, width: int = COLUMNS) -> int:
    """The lines a body takes on the phone once lines wrap after ``width`` columns."""
    return sum(max(1, -(-columns(line) // width)) for line in body.split("\n"))


def estimated_height(body: str) -> float:
    return POST_FRAME_PX + LINE_PX * shown_lines(body)


@dataclass
class Played:
    kind: str
    game_id: int
    thread_id: int
    replies: list[str] = field(default_factory=list)
    numbers: list[int] = field(default_factory=list)  # each reply's post number
    pictures: int = 0  # replies with the board picture


def _users(session: Session, prefix: str, count: int) -> list[User]:
    made = []
    for index in range(count):
        name = f"{prefix}{index}"
        user = session.scalar(select(User).where(User.name == name))
        made.append(user or accounts.register(session, name, "password123"))
    return made


def play_game(session: Session, kind: str, tag: str = "r") -> Played:
    """One whole scripted game of ``kind``, one post (or sealed command) a move."""
    users = _users(session, f"{tag}{kind[:3]}", PLAYERS[kind] + 1)
    master, players = users[0], users[1:]
    played: Script = script(kind, [u.name for u in players])
    table = Table(session, played, master, players, "replies-secret")
    table.advance(played.stops[0]) if played.stops[0].at == RECRUITING else None
    table.post(master, "START")
    for step in played.steps:
        if step.sealed:
            row, _public = gm.submit_sealed(
                session, table.game.id, table.user(step.actor), step.line, table.secret
            )
            assert row.ok, (step, row.reply)
        else:
            table.post(table.user(step.actor), step.line)
    game = table.game
    session.refresh(game)
    assert game.status == "finished", (kind, game.status)
    rows = session.execute(
        select(Post.number, Post.body, Post.board_at)
        .where(Post.thread_id == game.thread_id, Post.kind == "gm")
        .order_by(Post.number)
    ).all()
    pictures = sum(r.board_at is not None for r in rows)
    bodies, numbers = [r.body for r in rows], [r.number for r in rows]
    return Played(kind, game.id, game.thread_id, bodies, numbers, pictures)
