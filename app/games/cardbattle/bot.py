"""The bot of this kind (Game.bot_lines; docs/bot-play.md): from one seat's own view and legal
lines only. The zombie's heuristic choice (app/games/cardbattle/zombie.py), else a line drawn by the
view's own digest (kit.bot.view_rng), never the game's seed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from app.games.cardbattle.zombie import zombie
from app.games.kit.bot import view_rng

__all__ = ["bot"]


def bot(own_view: Mapping[str, Any], legal: Sequence[str]) -> list[str]:
    if not legal:
        return []
    chosen = zombie(own_view, legal)
    if chosen is not None and chosen in legal:
        return [chosen]
    return [view_rng(own_view, legal).choice(list(legal))]
