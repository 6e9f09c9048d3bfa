"""IM@S x Workerplacement's bot (Game.bot_lines; docs/bot-play.md): from one seat's own view and
legal lines only — the public board, event and players, the idols' cards, its own hand.

In the draft, the idol of the most ability and 思い出 on its card (Vo + Da + Vi + memory: a
player starts with the sum of their two idols'), the first on ties; then the zombie's heuristic
(app/games/idolwp/zombie.py: the most valuable reachable space for the fewest steps, the
highest event level its abilities pass, 特訓 on its lowest ability), else a line drawn by the
view's own digest (kit.bot.view_rng), never the game's seed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from app.games.idolwp.zombie import zombie
from app.games.kit.bot import best, view_rng

__all__ = ["bot"]


def _idol_worth(info: Mapping[str, Any]) -> int:
    return sum(int(info.get(key) or 0) for key in ("Vo", "Da", "Vi", "memory"))


def bot(own_view: Mapping[str, Any], legal: Sequence[str]) -> list[str]:
    if not legal:
        return []
    picks = [line for line in legal if line.startswith("PICK ")]
    if own_view.get("phase") == "draft" and picks:
        idols = own_view.get("idol_info") or {}
        return [best(picks, lambda line: _idol_worth(idols.get(line.split()[1], {})))]
    chosen = zombie(own_view, legal)
    if chosen is not None and chosen in legal:
        return [chosen]
    return [view_rng(own_view, legal).choice(list(legal))]
