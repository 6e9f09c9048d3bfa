"""Whose turn it is, in words, and the tables awaiting someone (issue #43).

- ``waiting_words``: who the game waits for, as the game page's status line and
  ``GET /api/me/turns`` say it. One word for waiting across the site, 「手番待ち」; when the
  game waits for several seats at once (a simultaneous phase), the ones who have not moved
  yet: 「未提出: A、B」 (docs/notifications.md, "Waiting, in words").
- ``awaiting``: the games awaiting a user now, read by the seat's ``waiting_since``
  (kept by app/notify/notices.after_save) — one query for the games and their threads, one
  for their seats, never one per game.
- ``header_counts``: the header's two numbers, tables awaiting you and unread notices, in one
  SELECT of two indexed counts.
- ``my_tables``: /me's list, the tables awaiting you first, then your other open tables.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session, defer

from app.db.models import Game, GamePlayer, Notification
from app.games import find_game
from app.games.base import Game as GameImpl
from app.i18n import N_

# The one word for "the game waits for …" (the bot's replies use it too: 手番待ち: A).
WAITING = N_("手番待ち")
# Several seats asked at once: those who have not moved yet.
NOT_YET = N_("未提出")
OPEN = ("recruiting", "active")


@dataclass(frozen=True)
class Waiting:
    """Who the game waits for: ``word`` (WAITING or NOT_YET, a msgid) and their names in
    seat order. Empty names: it waits for nobody (not started, paused, over)."""

    word: str
    names: tuple[str, ...]

    def text(self) -> str:
        """In Japanese, as the API and the bot say it: 「未提出: A、B」."""
        return f"{self.word}: {'、'.join(self.names)}" if self.names else ""

    def __bool__(self) -> bool:
        return bool(self.names)


NOBODY = Waiting(WAITING, ())


def waiting_seats(game: Game, impl: GameImpl | None = None) -> list[int]:
    """The seats the game waits for now, in seat order; none while it is not active or
    is paused."""
    impl = impl or find_game(game.kind)
    if impl is None or game.state is None or game.status != "active" or game.paused:
        return []
    return sorted(set(impl.waiting_for(game.state)))


def waiting_words(game: Game, impl: GameImpl | None = None) -> Waiting:
    """Who ``game`` waits for, by their seats' names: 「手番待ち」 for one seat, 「未提出」
    and every seat not yet moved when the game asks several at once."""
    seats = waiting_seats(game, impl)
    names = {p.seat: p.name for p in game.players}
    shown = tuple(names[seat] for seat in seats if seat in names)
    if not shown:
        return NOBODY
    return Waiting(NOT_YET if len(shown) > 1 else WAITING, shown)


def turn_words(game: Game, impl: GameImpl | None = None) -> str:
    """The turn in words (第2週, 魔法の宣言), "" when there is none to name."""
    impl = impl or find_game(game.kind)
    if impl is None or game.state is None or game.status != "active":
        return ""
    return impl.turn_label(game.state)


@dataclass(frozen=True)
class Table:
    """One of a user's tables: the game (its thread loaded), and, when it awaits the user,
    since when and who it waits for."""

    game: Game
    impl: GameImpl | None
    since: datetime | None
    waiting: Waiting
    turn: str

    @property
    def awaits_you(self) -> bool:
        return self.since is not None


def _tables(games: list[tuple[Game, datetime | None]]) -> list[Table]:
    tables = []
    for game, since in games:
        impl = find_game(game.kind)
        tables.append(Table(game, impl, since, waiting_words(game, impl), turn_words(game, impl)))
    return tables


def awaiting(session: Session, user_id: int) -> list[Table]:
    """The games awaiting ``user_id`` now, the longest-waiting first: a seat of theirs, not
    kicked, that the game waits for (``waiting_since`` set), in an active unpaused game."""
    rows = session.execute(
        select(Game, GamePlayer.waiting_since)
        .join(GamePlayer, GamePlayer.game_id == Game.id)
        .where(
            GamePlayer.user_id == user_id,
            GamePlayer.waiting_since.is_not(None),
            GamePlayer.kicked.is_(False),
            Game.status == "active",
            Game.paused.is_(False),
        )
        .options(defer(Game.options))
        .order_by(GamePlayer.waiting_since, Game.id)
    ).all()
    return _tables([(game, since) for game, since in rows])


def my_tables(session: Session, user_id: int) -> list[Table]:
    """/me's list: the tables awaiting the user first (as ``awaiting``), then the user's other
    open tables — seated or GM, recruiting or active — newest first."""
    first = awaiting(session, user_id)
    seated = select(GamePlayer.game_id).where(
        GamePlayer.user_id == user_id, GamePlayer.kicked.is_(False)
    )
    query = select(Game).where(
        Game.status.in_(OPEN), or_(Game.id.in_(seated), Game.gm_id == user_id)
    )
    if first:
        query = query.where(Game.id.not_in([t.game.id for t in first]))
    others = session.scalars(
        query.options(defer(Game.options))
        .order_by(Game.created_at.desc(), Game.id.desc())
        .limit(100)
    ).all()
    return first + _tables([(game, None) for game in others])


def header_counts(session: Session, user_id: int) -> tuple[int, int]:
    """(tables awaiting the user, unread notices): one SELECT, each count by its index
    (ix_game_players_user_waiting, ix_notifications_user_read). A table counts as
    ``awaiting`` lists it."""
    turns = (
        select(func.count())
        .select_from(GamePlayer)
        .join(Game, Game.id == GamePlayer.game_id)
        .where(
            GamePlayer.user_id == user_id,
            GamePlayer.waiting_since.is_not(None),
            GamePlayer.kicked.is_(False),
            Game.status == "active",
            Game.paused.is_(False),
        )
        .scalar_subquery()
    )
    unread = (
        select(func.count())
        .select_from(Notification)
        .where(Notification.user_id == user_id, Notification.read_at.is_(None))
        .scalar_subquery()
    )
    row = session.execute(select(turns, unread)).one()
    return int(row[0]), int(row[1])
