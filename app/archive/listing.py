"""The archive list: filter parameters as the pages and the API take them, and what each game
row shows besides the game itself (length, winner)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.db.models import Game, Move
from app.errors import Invalid
from app.forum.service import BBS_TZ

ENDED = "finished,aborted"
SORTS: dict[str, str] = {
    "ended": "終わった順（新しい順）",
    "newest": "作られた順（新しい順）",
    "oldest": "作られた順（古い順）",
    "longest": "手数の多い順",
    "shortest": "手数の少ない順",
    "title": "タイトル順",
}
STATUS_CHOICES: dict[str, str] = {
    ENDED: "終了と中止",
    "finished": "終了",
    "aborted": "中止",
    "active": "進行中",
    "recruiting": "募集中",
    "": "すべて",
}
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def parse_when(text: str | None, name: str, *, end: bool) -> datetime | None:
    """``YYYY-MM-DD`` (a Tokyo day, whole: ``to`` includes it) or an ISO 8601 date-time
    (naive ones are Tokyo time). Empty: no bound. Anything else: 422."""
    if text is None or not text.strip():
        return None
    text = text.strip()
    try:
        if _DAY.fullmatch(text):
            day = date.fromisoformat(text)
            start = datetime.combine(day, time(0), tzinfo=BBS_TZ)
            return (start + timedelta(days=1) if end else start).astimezone(UTC)
        when = datetime.fromisoformat(text)
        if when.tzinfo is None:
            when = when.replace(tzinfo=BBS_TZ)
        return when.astimezone(UTC)
    except (ValueError, OverflowError):
        raise Invalid(
            f"{name} は 2026-11-22 のような日付か ISO 8601 の日時で書いてください"
            f"（「{text[:40]}」は読めません）。",
            field=name,
        ) from None


def date_range(since: str | None, until: str | None) -> tuple[datetime | None, datetime | None]:
    start = parse_when(since, "from", end=False)
    stop = parse_when(until, "to", end=True)
    if start is not None and stop is not None and start >= stop:
        raise Invalid("from は to より前の日付にしてください。", field="from")
    return start, stop


@dataclass(frozen=True)
class Row:
    """A game as the archive lists it."""

    game: Game
    moves: int
    winners: list[str]

    @property
    def posts(self) -> int:
        return self.game.thread.post_count


def winners(game: Game) -> list[str]:
    """Everyone ranked first with a score (ties share the win); nobody for unfinished or
    aborted games, nor when nobody has a score (えいつく with every film 未完成: all share
    rank 1, and nobody won)."""
    if game.status != "finished" or not game.result:
        return []
    return [
        str(entry["name"])
        for entry in game.result.get("ranking", [])
        if entry.get("rank") == 1 and entry.get("score") is not None
    ]


def rows(session: Session, games: list[Game]) -> list[Row]:
    ids = [g.id for g in games]
    counts: dict[int, int] = {}
    if ids:
        counts = {
            game_id: count
            for game_id, count in session.execute(
                select(Move.game_id, func.count(Move.id))
                .where(Move.game_id.in_(ids), Move.undone.is_(False))
                .group_by(Move.game_id)
            )
        }
    return [Row(g, counts.get(g.id, 0), winners(g)) for g in games]


def row_json(row: Row) -> dict[str, Any]:
    """The archive's extra fields beside API.md's ``Game``."""
    game = row.game
    return {
        "started_at": game.started_at.isoformat() if game.started_at else None,
        "moves": row.moves,
        "posts": row.posts,
        "winners": row.winners,
        "players_at_start": game.players_at_start,
        "replay_url": f"/games/{game.id}/replay",
        "thread_url": f"/threads/{game.thread_id}",
    }
