"""ポピュラス 草案21's bot (Game.bot_lines; docs/bot-play.md): from one seat's own view and legal
lines only — the public map, resources and generations, its own hand and skills.

The zombie's heuristic in play (app/games/populous/zombie.py: the area that costs no 信仰, free
workers on new squares making majorities, the card for what is needed most, war when its pieces
and 情熱 match every side, towns that make a new majority); in the setup, where the zombie has
no choice of its own, the opening cubes closest to 情熱 2 食料 3 信仰 2 (workers cost 食料, areas
信仰, wars 情熱), else the first line offered (the first race, the first skill of the pack), as
the deadline's default moves do.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from app.games.populous.zombie import zombie

__all__ = ["bot"]

OPENING = {"情熱": 2, "食料": 3, "信仰": 2}


def _cubes_gap(line: str) -> int:
    words = line.split()[1:]
    amounts = {words[i]: int(words[i + 1]) for i in range(0, len(words) - 1, 2)}
    return sum((amounts.get(name, 0) - want) ** 2 for name, want in OPENING.items())


def bot(own_view: Mapping[str, Any], legal: Sequence[str]) -> list[str]:
    if not legal:
        return []
    chosen = zombie(own_view, legal)
    if chosen is not None and chosen in legal:
        return [chosen]
    cubes = [line for line in legal if line.startswith("CUBES ")]
    if cubes:
        return [min(cubes, key=_cubes_gap)]
    return [legal[0]]
