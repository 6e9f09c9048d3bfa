"""Notifications: "your turn", "deadline in 6 hours", "game over", and the GM's "someone joined
or left", "a seat timed out" — one row per user and event, written in the same transaction as
the move that caused it. Also kept here, with every save: since when each seat is waited for
(``game_players.waiting_since``), which the header's badge, /me and GET /api/me/turns read."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import (
    Integer,
    String,
    Table,
    Text,
    bindparam,
    exists,
    insert,
    inspect,
    literal,
    null,
    select,
    update,
)
from sqlalchemy.orm import Session
from sqlalchemy.orm.attributes import set_committed_value

from app.db.models import Game, GamePlayer, Notification, User
from app.games import find_game
from app.games.base import Game as GameImpl
from app.games.base import State
from app.notify import delivery

DEADLINE_WARNING = timedelta(hours=6)

# Kinds whose ``turn_key`` moves within what players call one turn: 掲示板進行カードゲーム's key
# changes with every 魔法の宣言 window (each restarts the deadline), its 手番 is ``turn``.
_TURN_OF_KIND = {
    "cardbattle": lambda state: "deck" if state["phase"] == "deck" else f"turn{state['turn']}",
}


def notice_turn(impl: GameImpl, state: State) -> str:
    """The turn a "your turn" notice is for: a seat is told once per (game, user, turn).
    The game's ``turn_key``, or, for a kind whose key moves within a turn, that turn."""
    of_kind = _TURN_OF_KIND.get(impl.kind)
    return (of_kind(state) if of_kind is not None else impl.turn_key(state))[:64]


def waiting_seats(impl: GameImpl, game: Game, state: State | None) -> set[int]:
    if state is None or game.status != "active" or game.paused:
        return set()
    return set(impl.waiting_for(state))


def _seat_users(game: Game) -> dict[int, GamePlayer]:
    return {p.seat: p for p in game.players if p.user_id is not None and not p.kicked}


def add_all(
    session: Session,
    game: Game,
    notices: list[tuple[int, str, str]],
    now: datetime,
    *,
    turn: str | None = None,
) -> None:
    """One notification per (user id, kind, text), and their deliveries (``delivery.queue``
    reads the users' delivery settings): one INSERT of every row, in the move's transaction.
    ``turn``: the "your turn" notices' turn (``notice_turn``)."""
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
            "turn": turn,
            "read_at": None,
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
    seated_before: dict[int, str] | None = None,
) -> None:
    """Called once the game row holds its new state. One "your turn" notice a turn: a seat
    the game waited for before this post and still waits for is told again only when a new
    turn in words begins (第2週; ``label_before`` is the turn in words before the post) — not
    each time the game's inner step moves on while both players of a window are asked, or a
    turn goes on over several steps. A seat ``handed_over`` to another player (REPLACE, a
    kicked seat given back) is told if the game waits for it, as a seat newly waited for.
    Whoever is to be told is told once per (game, user, ``notice_turn``): a seat asked again
    within the same turn (a 魔法の宣言 window reopened by a MAGIC) is not told again.

    ``seated_before`` (user id → name, the seats before the post): while the game recruits,
    its GM is told who joined or left."""
    seats = _seat_users(game)
    if seated_before is not None:
        _tell_gm_seats(session, game, seated_before, now)
    if finished_now:
        _keep_waiting_since(session, game, set(), set(), now)
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
    _keep_waiting_since(session, game, waiting_after, fresh, now)
    if not fresh or game.state is None:
        return
    turn_key = notice_turn(impl, game.state)
    wanted = {
        player.user_id
        for seat in fresh
        if (player := seats.get(seat)) is not None and player.user_id is not None
    }
    if not wanted:
        return
    turn = (
        f"「{game.title}」であなたの手番です（{label}）。"
        if label
        else f"「{game.title}」であなたの手番です。"
    )
    _tell_turn(session, game, sorted(wanted), turn, turn_key, now)


def _tell_turn(
    session: Session, game: Game, user_ids: list[int], text: str, turn: str, now: datetime
) -> None:
    """ "Your turn" to each of ``user_ids`` not told of this ``turn`` of the game yet, and
    their deliveries: the check and the write are one ``INSERT … SELECT … WHERE NOT EXISTS``
    (in the move's transaction, under the game's lock), the rows in user order."""
    written = session.execute(
        _INSERT_TURN,
        {
            "user_ids": user_ids,
            "game_id": game.id,
            "text": text,
            "url": f"/games/{game.id}",
            "now": now,
            "turn": turn,
        },
    )
    delivery.queue(session, sorted((note_id, user_id) for note_id, user_id in written), now)


_NOTIFICATIONS: Table = Notification.__table__  # type: ignore[assignment]
_USERS: Table = User.__table__  # type: ignore[assignment]
_TOLD = _NOTIFICATIONS.alias("told")
# Built once (bound parameters): one "your turn" row per user not told of the turn yet.
_INSERT_TURN = (
    insert(_NOTIFICATIONS)
    .from_select(
        ["user_id", "game_id", "kind", "text", "url", "created_at", "turn", "read_at"],
        select(
            _USERS.c.id,
            bindparam("game_id", type_=Integer),
            literal("your_turn", String),
            bindparam("text", type_=Text),
            bindparam("url", type_=String),
            bindparam("now", type_=_NOTIFICATIONS.c.created_at.type),
            bindparam("turn", type_=String),
            null(),
        )
        .where(
            _USERS.c.id.in_(bindparam("user_ids", expanding=True)),
            ~exists().where(
                _TOLD.c.game_id == bindparam("game_id", type_=Integer),
                _TOLD.c.kind == "your_turn",
                _TOLD.c.turn == bindparam("turn", type_=String),
                _TOLD.c.user_id == _USERS.c.id,
            ),
        )
        .order_by(_USERS.c.id),
    )
    .returning(_NOTIFICATIONS.c.id, _NOTIFICATIONS.c.user_id)
)


def _keep_waiting_since(
    session: Session, game: Game, waiting: set[int], fresh: set[int], now: datetime
) -> None:
    """Each seat's ``waiting_since``: now for a seat newly asked (or asked for a new turn),
    kept while the game goes on waiting for it, None once it does not (or the seat is
    kicked: the bot plays it). The seats' rows that change are one Core UPDATE (executed
    for each), which the loaded seats then hold as their committed values, as
    ``store._write_game`` does for the game; a seat not written yet (REPLACE's new rows) is
    given the value to be inserted with."""
    changed: list[dict[str, Any]] = []
    for player in game.players:
        if player.seat not in waiting or player.kicked or player.user_id is None:
            since = None
        elif player.seat in fresh or player.waiting_since is None:
            since = now
        else:
            continue
        if player.waiting_since == since:
            continue
        if inspect(player).persistent:
            changed.append({"player_id": player.id, "since": since})
            set_committed_value(player, "waiting_since", since)
        else:
            player.waiting_since = since
    if changed:
        session.execute(_SET_WAITING_SINCE, changed)


_PLAYERS: Table = GamePlayer.__table__  # type: ignore[assignment]
_SET_WAITING_SINCE = (
    update(_PLAYERS)
    .where(_PLAYERS.c.id == bindparam("player_id"))
    .values(waiting_since=bindparam("since", type_=_PLAYERS.c.waiting_since.type))
)


def _tell_gm_seats(
    session: Session, game: Game, seated_before: dict[int, str], now: datetime
) -> None:
    """While the game recruits: its GM told who JOINed and who LEFT (not of their own JOIN)."""
    if game.gm_id is None or game.status != "recruiting":
        return
    after = {p.user_id: p.name for p in game.players if p.user_id is not None}
    count = len(game.players)
    notes = [
        (game.gm_id, "joined", f"「{game.title}」に {name} さんが参加しました（{count}人）。")
        for user_id, name in after.items()
        if user_id not in seated_before and user_id != game.gm_id
    ] + [
        (game.gm_id, "left", f"「{game.title}」から {name} さんが抜けました（{count}人）。")
        for user_id, name in seated_before.items()
        if user_id not in after and user_id != game.gm_id
    ]
    add_all(session, game, notes, now)


def timed_out(session: Session, game: Game, names: list[str], now: datetime) -> None:
    """The GM told that a deadline passed and the bot played these seats' default moves."""
    if game.gm_id is None or not names:
        return
    who = "、".join(names)
    text = f"「{game.title}」の期限が過ぎ、{who} さんの手をボットが既定の手で進めました。"
    add_all(session, game, [(game.gm_id, "timed_out", text)], now)


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
