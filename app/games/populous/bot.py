"""ポピュラス 草案21's bot (Game.bot_lines; docs/bot-play.md): from one seat's own view and legal
lines only — the public map, resources and generations, its own hand and skills.

The zombie's heuristic (app/games/populous/zombie.py: the area that costs no 信仰, free workers
on new squares making majorities, war when its pieces and 情熱 match every side, towns that make
a new majority), but for the hand: the bot changes generation every turn it may (every change
is a 決算: a town, a skill revealed, the previous 現代 × majorities in VP; and each generation
column is 4 VP to whoever has most cards in it), and spends 情熱 on extra actions of 繁栄.
In the setup, where the zombie has no choice: the opening cubes near 情熱 2 食料 3 信仰 2
(workers cost 食料, areas 信仰, wars 情熱), and the draft's picks, both sealed, so drawn by
`kit.bot.secret_rng` (a player who passed the pack, or who reads this code, could otherwise work
them out); else the first line offered (the first race), as the deadline's default moves do.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from app.games.kit.bot import secret_rng
from app.games.populous.zombie import _wanted, zombie

__all__ = ["bot"]

OPENING = {"情熱": 2, "食料": 3, "信仰": 2}
# The opening cubes are drawn among those this close (squared) to OPENING.
CUBES_SLACK = 2
# A generation change once the present holds this many cards (the zombie waits for 3; in
# bench/bots.py against the zombie: 3 → 36 %, 2 → 43 %, 1 → 85 % of the wins, 90 % with the
# extra 繁栄 actions).
NEWGEN_AT = 1
# Spend 情熱 on extra actions of these kinds.
EXTRA_KINDS = ("繁栄",)


def _cubes_gap(line: str) -> int:
    words = line.split()[1:]
    amounts = {words[i]: int(words[i + 1]) for i in range(0, len(words) - 1, 2)}
    return sum((amounts.get(name, 0) - want) ** 2 for name, want in OPENING.items())


def _play(lines: Sequence[str], me: Mapping[str, Any], own_view: Mapping[str, Any]) -> str | None:
    present = me["generations"][-1] if me["generations"] else []
    last = own_view["round"] >= own_view["rounds"]
    newgen = any(line.startswith("NEWGEN") for line in lines) and (
        len(present) >= NEWGEN_AT or (last and len(present) >= 1)
    )
    prefix = "NEWGEN " if newgen else "PLAY "
    wanted = _wanted(me)
    for kind in wanted:
        line = f"{prefix}{kind}"
        if line not in lines:
            continue
        if kind in EXTRA_KINDS:
            extras = [other for other in lines if other.startswith(f"{line} EXTRA ")]
            if extras:
                return max(extras, key=lambda other: int(other.split()[-1]))
        return line
    return None


def bot(own_view: Mapping[str, Any], legal: Sequence[str]) -> list[str]:
    if not legal:
        return []
    seat = own_view.get("seat")
    if own_view.get("phase") == "play" and isinstance(seat, int):
        verbs = {line.split()[0] for line in legal}
        if verbs & {"PLAY", "NEWGEN", "FACEDOWN"} and not verbs & {
            "AREA",
            "WAR",
            "TOWN",
            "REVEAL",
            "PLACE",
        }:
            chosen = _play(legal, own_view["players"][seat], own_view)
            if chosen is not None:
                return [chosen]
    chosen = zombie(own_view, legal)
    if chosen is not None and chosen in legal:
        return [chosen]
    # The draft's picks and the opening cubes are sealed: drawn by a secret, or the others
    # (who saw the pack they passed, and read this code) could work them out.
    rng = secret_rng(own_view, legal)
    cubes = [line for line in legal if line.startswith("CUBES ")]
    if cubes:
        closest = min(_cubes_gap(line) for line in cubes)
        return [rng.choice([line for line in cubes if _cubes_gap(line) <= closest + CUBES_SLACK])]
    picks = [line for line in legal if line.startswith("PICK ")]
    if picks:
        return [rng.choice(picks)]
    return [legal[0]]
