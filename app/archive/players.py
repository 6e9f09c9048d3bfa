"""A player's record (the page ``/users/{name}`` and ``GET /api/users/{name}``): games played and
won per kind, current tables, finished games with their result, cards registered, the trips
the account has shown, ratings per kind (docs/ratings.md, "The player page")."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.db.models import CardVersion, Game, GamePlayer, Post, User
from app.errors import NotFound
from app.forum.names import SEPARATOR
from app.gm import ratings

FINISHED_SHOWN = 50  # the newest finished games listed (the counts take them all in)


@dataclass
class KindRecord:
    kind: str
    played: int = 0
    won: int = 0


@dataclass
class Finished:
    game: Game
    place: int | None
    score: int | None
    players: int


@dataclass
class Record:
    user: User
    kinds: dict[str, KindRecord] = field(default_factory=dict)
    current: list[Game] = field(default_factory=list)
    finished: list[Finished] = field(default_factory=list)
    cards: list[CardVersion] = field(default_factory=list)
    trips: list[str] = field(default_factory=list)
    ratings: dict[str, ratings.Standing] = field(default_factory=dict)


def find_user(session: Session, name: str) -> User:
    wanted = unicodedata.normalize("NFKC", name).strip()
    # No NUL: PostgreSQL refuses it in a string (and no account name holds one).
    usable = wanted and "\x00" not in wanted
    user = session.scalar(select(User).where(User.name == wanted)) if usable else None
    if user is None:
        raise NotFound(f"利用者「{wanted[:32].replace(chr(0), '')}」はいません。")
    return user


def _seat_entry(game: Game, user: User) -> dict[str, Any] | None:
    """The user's line of a finished game's ranking (by the seat's name at the start)."""
    seat = next((p.seat for p in game.players if p.user_id == user.id), None)
    names = list(game.players_at_start or [p.name for p in game.players])
    if seat is None or seat >= len(names):
        return None
    for entry in (game.result or {}).get("ranking") or []:
        if entry.get("name") == names[seat]:
            return dict(entry)
    return None


def trips_of(session: Session, user: User) -> list[str]:
    """The trips the account has posted with under its own name (``名前 ◆trip``, shown posts
    only): a trip typed with another 名前欄 name is not tied to the account here."""
    prefix = user.name + SEPARATOR
    pattern = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    names = session.scalars(
        select(Post.author_name)
        .where(
            Post.author_id == user.id,
            Post.hidden_at.is_(None),
            Post.author_name.like(pattern, escape="\\"),
        )
        .group_by(Post.author_name)
        .order_by(func.min(Post.id))
    )
    return [name[len(prefix) :] for name in names if name.startswith(prefix)]


def record(session: Session, name: str) -> Record:
    user = find_user(session, name)
    found = Record(user=user)
    games = session.scalars(
        select(Game)
        .where(Game.id.in_(select(GamePlayer.game_id).where(GamePlayer.user_id == user.id)))
        .order_by(Game.finished_at.desc(), Game.created_at.desc(), Game.id.desc())
    ).all()
    for game in games:
        if game.status in ("recruiting", "active"):
            found.current.append(game)
        elif game.status == "finished":
            entry = _seat_entry(game, user)
            kind = found.kinds.setdefault(game.kind, KindRecord(game.kind))
            kind.played += 1
            place = int(entry["rank"]) if entry and entry.get("rank") is not None else None
            score = entry.get("score") if entry else None
            if place == 1 and score is not None:  # a game nobody finished has no winner
                kind.won += 1
            if len(found.finished) < FINISHED_SHOWN:
                found.finished.append(
                    Finished(
                        game, place, score if isinstance(score, int) else None, len(game.players)
                    )
                )
    found.cards = list(
        session.scalars(
            select(CardVersion)
            .where(CardVersion.author_id == user.id)
            .order_by(CardVersion.name_key, CardVersion.version)
        )
    )
    found.trips = trips_of(session, user)
    found.ratings = ratings.user_standings(session, user.id)
    return found


def to_json(found: Record) -> dict[str, Any]:
    return {
        "name": found.user.name,
        "trips": found.trips,
        "kinds": [
            {"kind": k.kind, "played": k.played, "won": k.won}
            for k in sorted(found.kinds.values(), key=lambda k: k.kind)
        ],
        "ratings": [s.to_json() for s in sorted(found.ratings.values(), key=lambda s: s.kind)],
        "current": [
            {
                "id": g.id,
                "title": g.title,
                "kind": g.kind,
                "status": g.status,
                "players": len(g.players),
            }
            for g in found.current
        ],
        "finished": [
            {
                "id": f.game.id,
                "title": f.game.title,
                "kind": f.game.kind,
                "finished_at": f.game.finished_at.isoformat() if f.game.finished_at else None,
                "place": f.place,
                "score": f.score,
                "players": f.players,
                "replay_url": f"/games/{f.game.id}/replay",
            }
            for f in found.finished
        ],
        "cards": [{"name": c.name, "version": c.version, "status": c.status} for c in found.cards],
    }
