"""Notifications: "your turn", "deadline in 6 hours", "game over" — one row per user and event,
written in the same transaction as the move that caused it."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from app.db.models import Game, GamePlayer, Notification
from app.games import find_game
from app.games.base import Game as GameImpl
from app.games.base import State
from app.notify import delivery

DEADLINE_WARNING = timedelta(hours=6)


def waiting_seats(impl: GameImpl, game: Game, state: State | None) -> set[int]:
    if state is None or game.status != "active" or game.paused:
        return set()
    return set(impl.waiting_for(state))


def _seat_users(game: Game) -> dict[int, GamePlayer]:
    return {p.seat: p for p in game.players if p.user_id is not None and not p.kicked}


def add_all(
    session: Session, game: Game, notices: list[tuple[int, str, str]], now: datetime
) -> None:
    """One notification per (user id, kind, text), and their deliveries (``delivery.queue``
    reads the users' delivery settings): one INSERT of every row, in the move's transaction."""
    if not notices:
        return
    rows: list[dict[str, Any]] = [
        {
            "user_id": user_id,
            "game_id": game.id,
            "kind": kind,
            "text": text,
            "url": f"/games/{game.id}",
            "created_at": now,
        }
        for user_id, kind, text in notices
    ]
    written = session.execute(
        insert(Notification).returning(
            Notification.id, Notification.user_id, sort_by_parameter_order=True
        ),
        rows,
    )
    delivery.queue(session, [(note_id, user_id) for note_id, user_id in written], now)


def after_save(
    session: Session,
    game: Game,
    impl: GameImpl,
    *,
    waiting_before: set[int],
    handed_over: set[int],
    turn_moved: bool,
    finished_now: bool,
    now: datetime,
    label_before: str | None = None,
) -> None:
    """Called once the game row holds its new state. One "your turn" notice a turn: a seat
    the game waited for before this post and still waits for is told again only when a new
    turn in words begins (第2週; ``label_before`` is the turn in words before the post) — not
    each time the game's inner step moves on while both players of a window are asked, or a
    turn goes on over several steps. A seat ``handed_over`` to another player (REPLACE, a
    kicked seat given back) is told if the game waits for it, as a seat newly waited for."""
    seats = _seat_users(game)
    if finished_now:
        users = {p.user_id for p in seats.values()} | ({game.gm_id} if game.gm_id else set())
        text = f"「{game.title}」が終わりました。"
        over = [(user_id, "game_over", text) for user_id in sorted(u for u in users if u)]
        add_all(session, game, over, now)
        return
    waiting_after = waiting_seats(impl, game, game.state)
    # The turn in words (第2週), not its key (week2): people read this, in mail subjects too.
    label = impl.turn_label(game.state) if game.state is not None else ""
    new_turn = turn_moved and (label_before is None or label != label_before)
    fresh = (
        waiting_after
        if new_turn
        else (waiting_after - waiting_before) | (waiting_after & handed_over)
    )
    turn = (
        f"「{game.title}」であなたの手番です（{label}）。"
        if label
        else f"「{game.title}」であなたの手番です。"
    )
    add_all(
        session,
        game,
        [
            (player.user_id, "your_turn", turn)
            for seat in sorted(fresh)
            if (player := seats.get(seat)) is not None and player.user_id is not None
        ],
        now,
    )


def warn_deadlines(session: Session, now: datetime) -> int:
    """ "Deadline in 6 hours" to everyone the game still waits for, once per deadline."""
    due = session.scalars(
        select(Game).where(
            Game.status == "active",
            Game.paused.is_(False),
            Game.deadline_warned.is_(False),
            Game.deadline_at.is_not(None),
            Game.deadline_at <= now + DEADLINE_WARNING,
            Game.deadline_at > now,
        )
    )
    count = 0
    for game in list(due):
        impl = find_game(game.kind)
        if impl is None:
            continue
        seats = _seat_users(game)
        text = f"「{game.title}」の手番の期限まであと6時間を切りました。"
        notices = [
            (player.user_id, "deadline_soon", text)
            for seat in sorted(waiting_seats(impl, game, game.state))
            if (player := seats.get(seat)) is not None and player.user_id is not None
        ]
        add_all(session, game, notices, now)
        count += len(notices)
        game.deadline_warned = True
    session.flush()
    return count
