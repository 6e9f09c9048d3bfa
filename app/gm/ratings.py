"""Ratings per game kind: OpenSkill's Plackett–Luce model over the finished games (docs/ratings.md).

A kind's ratings are a fold: every rated game of the kind, in order of finish (``finished_at``,
then ``id``), updates the ratings of its players from the game's result ranking (ties share a
rank). ``record_finished`` adds one game to the fold as it finishes; when that would not give
what the fold from scratch gives — the game was already taken in at another version (an ADJUST
or an UNDO after the end), or a game of the kind that finished later is already in — the kind is
folded again from scratch instead, so the stored ratings never drift from the records.
``catch_up`` does the same for every game not yet taken in (the pages call it first), and
``rebuild`` (``bbsgm ratings --rebuild``) folds everything again.

Excluded: games that did not finish (aborted, or still playing), games with a bot seat
(``app.gm.lobby.is_bot_seat``) unless their GM chose ``rated_with_bots``, and games with fewer
than two rated players.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from openskill.models import PlackettLuce
from sqlalchemy import delete, select, tuple_
from sqlalchemy.orm import Session

from app.db.engine import Database
from app.db.models import Board, Game, RatedGame, Rating, utcnow
from app.gm.lobby import is_bot_seat

MODEL = PlackettLuce()
# Provisional: fewer rated games than this, or still this uncertain (sigma; a new player's is
# 25/3 ≈ 8.33). docs/ratings.md.
PROVISIONAL_GAMES = 5
PROVISIONAL_SIGMA = 6.0


@dataclass(frozen=True)
class Standing:
    """One player's rating as pages show it."""

    kind: str
    user_id: int
    mu: float
    sigma: float
    games: int
    wins: int

    @property
    def ordinal(self) -> float:
        """The conservative estimate the ranking sorts by: mu − 3·sigma."""
        return self.mu - 3 * self.sigma

    @property
    def provisional(self) -> bool:
        return self.games < PROVISIONAL_GAMES or self.sigma > PROVISIONAL_SIGMA

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "mu": round(self.mu, 4),
            "sigma": round(self.sigma, 4),
            "ordinal": round(self.ordinal, 4),
            "games": self.games,
            "wins": self.wins,
            "provisional": self.provisional,
        }


def standing(row: Rating) -> Standing:
    return Standing(row.kind, row.user_id, row.mu, row.sigma, row.games, row.wins)


def placings(game: Game) -> list[tuple[int, int, bool]] | str:
    """The (user id, rank, won) of each seat from the game's result, or why the game is excluded:
    "bots" or "players". A ranking entry is matched to its seat by the name the game was
    dealt with (``players_at_start``): the seat's account now (after a REPLACE, whoever took
    the seat over) is the one rated."""
    if not game.rated_with_bots and any(is_bot_seat(p) for p in game.players):
        return "bots"  # unless the GM chose at creation to rate it all the same (docs/bots.md)
    ranking = (game.result or {}).get("ranking") or []
    names = list(game.players_at_start or [p.name for p in game.players])
    seats = {p.seat: p for p in game.players}
    found: list[tuple[int, int, bool]] = []
    for entry in ranking:
        name = entry.get("name")
        if name not in names:
            continue
        player = seats.get(names.index(name))
        if player is None or player.user_id is None:
            continue
        rank = int(entry.get("rank") or len(ranking))
        # Won: ranked 1st with a score (a game nobody finished, all 未完成, has no winner).
        found.append((player.user_id, rank, rank == 1 and entry.get("score") is not None))
    if len({user_id for user_id, _rank, _won in found}) != len(found) or len(found) < 2:
        return "players"
    return found


def _lock_kind(session: Session, kind: str) -> None:
    """One fold of a kind at a time: its board's row is locked (PostgreSQL; SQLite's
    transactions are one at a time already)."""
    session.execute(select(Board.id).where(Board.game_kind == kind).with_for_update())


def _apply(session: Session, game: Game, ratings: dict[int, Rating]) -> str | None:
    """Fold one game into ``ratings`` (the kind's rows by user id, added to as needed) and
    note it in rated_games; the reason it is excluded, or None."""
    found = placings(game)
    excluded = found if isinstance(found, str) else None
    if not isinstance(found, str):
        rows = []
        for user_id, _rank, _won in found:
            row = ratings.get(user_id)
            if row is None:
                row = Rating(user_id=user_id, kind=game.kind, mu=MODEL.mu, sigma=MODEL.sigma)
                row.games, row.wins = 0, 0
                session.add(row)
                ratings[user_id] = row
            rows.append(row)
        teams = [[MODEL.rating(mu=row.mu, sigma=row.sigma)] for row in rows]
        new = MODEL.rate(teams, ranks=[float(rank) for _user, rank, _won in found])
        now = utcnow()
        for row, (_user, _rank, won), (rated,) in zip(rows, found, new, strict=True):
            row.mu, row.sigma = float(rated.mu), float(rated.sigma)
            row.games += 1
            row.wins += 1 if won else 0
            row.updated_at = now
    session.add(RatedGame(game_id=game.id, kind=game.kind, version=game.version, excluded=excluded))
    return excluded


def _kind_ratings(
    session: Session, kind: str, users: Iterable[int] | None = None
) -> dict[int, Rating]:
    query = select(Rating).where(Rating.kind == kind)
    if users is not None:
        query = query.where(Rating.user_id.in_(list(users)))
    return {row.user_id: row for row in session.scalars(query)}


def rebuild(session: Session, kinds: Sequence[str] | None = None) -> int:
    """Fold the kinds' ratings again from scratch (all kinds when None); the games rated."""
    if kinds is None:
        kinds = list(session.scalars(select(Game.kind).where(Game.status == "finished").distinct()))
        kinds = sorted({*kinds, *session.scalars(select(Rating.kind).distinct())})
    rated = 0
    for kind in kinds:
        _lock_kind(session, kind)
        session.execute(delete(RatedGame).where(RatedGame.kind == kind))
        session.execute(delete(Rating).where(Rating.kind == kind))
        session.flush()
        ratings: dict[int, Rating] = {}
        games = session.scalars(
            select(Game)
            .where(Game.kind == kind, Game.status == "finished")
            .order_by(Game.finished_at, Game.id)
        ).all()
        for game in games:
            if _apply(session, game, ratings) is None:
                rated += 1
        session.flush()
    return rated


def record_finished(session: Session, game: Game) -> bool:
    """Take a game that has just finished into its kind's ratings (idempotent: a game is
    rated once per version). False when there was nothing to do (not finished, or taken in
    already at this version). Call it in the transaction that finished the game, after the
    game's row (status, result, version) is written."""
    if game.status != "finished" or game.result is None:
        return False
    _lock_kind(session, game.kind)
    noted = session.get(RatedGame, game.id)
    if noted is not None and noted.version == game.version:
        return False
    later = session.scalar(
        select(RatedGame.game_id)
        .join(Game, Game.id == RatedGame.game_id)
        .where(
            RatedGame.kind == game.kind,
            RatedGame.game_id != game.id,
            tuple_(Game.finished_at, Game.id) > tuple_(game.finished_at, game.id),
        )
        .limit(1)
    )
    if noted is not None or later is not None:
        rebuild(session, [game.kind])
        return True
    found = placings(game)
    users = [] if isinstance(found, str) else [user_id for user_id, _rank, _won in found]
    _apply(session, game, _kind_ratings(session, game.kind, users))
    session.flush()
    return True


def stale_kinds(session: Session) -> tuple[list[Game], set[str]]:
    """What ``catch_up`` has to do: finished games not taken in (in order of finish), and the
    kinds that must be folded again (a game taken in at another version, or no longer
    finished). Two indexed queries."""
    unrated = list(
        session.scalars(
            select(Game)
            .outerjoin(RatedGame, RatedGame.game_id == Game.id)
            .where(Game.status == "finished", RatedGame.game_id.is_(None))
            .order_by(Game.finished_at, Game.id)
        )
    )
    changed = set(
        session.scalars(
            select(RatedGame.kind)
            .join(Game, Game.id == RatedGame.game_id)
            .where((Game.status != "finished") | (Game.version != RatedGame.version))
            .distinct()
        )
    )
    return unrated, changed


def catch_up(session: Session) -> int:
    """Rate every finished game not rated yet, fold again the kinds whose rated games
    changed; the number of games taken in. The ranking and player pages have it done first
    (``bring_up_to_date``), so they are right even where the game master's hook did not run."""
    unrated, changed = stale_kinds(session)
    if changed:
        rebuild(session, sorted(changed))
    done = 0
    for game in unrated:
        if game.kind in changed:
            continue
        if record_finished(session, game):
            done += 1
    return done + len(changed)


def bring_up_to_date(database: Database) -> int:
    """``catch_up`` in a unit of work of its own, for the pages that only read (the player
    and ranking pages, before their own reads): first a read (``stale_kinds``' two indexed
    queries), and a writing transaction only when there is something to take in."""
    with database.read_session() as reading:
        unrated, changed = stale_kinds(reading)
        if not unrated and not changed:
            return 0
    with database.sessionmaker.begin() as writing:
        return catch_up(writing)


def standings(session: Session, kind: str) -> list[Standing]:
    """The kind's ranking: settled players first, then provisional ones, each by ordinal."""
    rows = [standing(row) for row in session.scalars(select(Rating).where(Rating.kind == kind))]
    return sorted(rows, key=lambda s: (s.provisional, -s.ordinal, s.user_id))


def user_standings(session: Session, user_id: int) -> dict[str, Standing]:
    rows = session.scalars(select(Rating).where(Rating.user_id == user_id))
    return {row.kind: standing(row) for row in rows}
