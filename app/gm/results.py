"""The result of a game: the game's own ranking plus the GM's adjustments (ADJUST)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.db.models import Adjustment, Game
from app.games.base import Game as GameImpl
from app.games.base import State, competition_ranks
from app.i18n import N_

# The breakdown line the app adds to a game's own (Game.breakdown_labels has the others).
BREAKDOWN_LABELS: dict[str, str] = {"gm": N_("GM の修正")}
_NUMBERED_KEY = re.compile(r"(\D*)(\d+)")


def breakdown_message(key: str, impl: GameImpl | None) -> tuple[str, dict[str, str]] | None:
    """A breakdown key's label as a message id (Japanese) and its parameters: the game's
    (Game.breakdown_labels, ``round_{n}`` matching ``round_1``) or the app's; None when the
    key has no label. Pages translate it (app/web/messages.py); the bot's posts say it as is."""
    labels = {**BREAKDOWN_LABELS, **(impl.breakdown_labels if impl is not None else {})}
    if key in labels:
        return labels[key], {}
    numbered = _NUMBERED_KEY.fullmatch(key)
    if numbered is not None and (label := labels.get(numbered.group(1) + "{n}")) is not None:
        return label, {"n": numbered.group(2)}
    return None


def breakdown_text(breakdown: Mapping[str, Any], impl: GameImpl | None) -> str:
    """The breakdown in Japanese words for a post: ``基礎 30、公開週補正 -2`` (lines without a
    value, or with 0, left out: a closing post's ranking says what scored, issue 43; a key
    without a label as it is). The game page's table lists every line."""
    parts = []
    for key, value in breakdown.items():
        if value is None or (value == 0 and not isinstance(value, bool)):
            continue
        if isinstance(value, str) or key == "total":
            # A reason in words is the end's own event, just above the ranking (カードゲーム's
            # 決着の理由, once for every player before); a total is the score beside it.
            continue
        found = breakdown_message(key, impl)
        label = key if found is None else found[0] % found[1] if found[1] else found[0]
        parts.append(f"{label} {value}")
    return "、".join(parts)


def final_result(session: Session, game: Game, impl: GameImpl) -> dict[str, Any] | None:
    """None until the game is finished; the game's ranking with the GM's ADJUSTs applied."""
    if game.state is None:
        return None
    names = game.players_at_start or [p.name for p in game.players]
    adjustments = [
        (row.seat, row.delta)
        for row in session.scalars(select(Adjustment).where(Adjustment.game_id == game.id))
    ]
    return adjusted_result(impl, game.state, game.status, names, adjustments)


def adjusted_result(
    impl: GameImpl,
    state: State,
    status: str,
    names: list[str],
    adjustments: list[tuple[int, int]],
) -> dict[str, Any] | None:
    """Adjustments ((0-based seat, delta) pairs) add a ``gm`` line to the breakdown and move
    the total; players are ranked again on the adjusted scores (未完成 stays last)."""
    if status != "finished":
        return None
    result = impl.result(state)
    if result is None:
        return None
    deltas: dict[str, int] = {}
    for seat, delta in adjustments:
        if 0 <= seat < len(names):
            deltas[names[seat]] = deltas.get(names[seat], 0) + delta
    ranking = [dict(entry) for entry in result.to_json()["ranking"]]
    if not deltas:
        return {"ranking": ranking}
    for entry in ranking:
        delta = deltas.get(entry["name"], 0)
        entry["breakdown"] = {**entry["breakdown"], "gm": delta}
        if entry["score"] is not None:
            entry["score"] += delta
            if isinstance(entry["breakdown"].get("total"), int):
                entry["breakdown"]["total"] += delta
    scored = sorted((e for e in ranking if e["score"] is not None), key=lambda e: -e["score"])
    unscored = [e for e in ranking if e["score"] is None]
    for entry, rank in zip(scored, competition_ranks([e["score"] for e in scored]), strict=True):
        entry["rank"] = rank
    for entry in unscored:
        entry["rank"] = len(scored) + 1
    return {"ranking": scored + unscored}
