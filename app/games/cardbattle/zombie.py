"""掲示板進行カードゲーム for a dropped player (Game.zombie): from that player's own view and legal
lines only — both fields as everyone sees them, the card pool's costs, and the player's own
undeclared magic cards.

A duellist who keeps fighting (docs/rules/cardbattle.md, "Dropped players"): on its turn the
ATTACK line that destroys the most opposing cards, then deals the most damage (the automatic
`ATTACK` among equals), worked out from the attacks, durabilities and shields on the field;
in a response window the dearest of its magic cards that keeps its total cost within 1,000
(going over loses the game), else PASS. The deck stays with the default moves (the first
suggested deck: it is sealed, and no sealed line is chosen here).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["zombie"]

COST_LIMIT = 1000  # R: a total cost over 1,000 at the end loses


def zombie(own_view: Mapping[str, Any], legal: Sequence[str]) -> str | None:
    seat = own_view.get("seat")
    if not isinstance(seat, int) or not legal:
        return None
    phase = own_view.get("phase")
    if phase == "attack":
        attacks = [line for line in legal if line.split()[0] == "ATTACK"]
        if attacks:
            return _attack(attacks, own_view["players"][seat], own_view["players"][1 - seat])
    if phase == "window":
        return _magic(legal, own_view["players"][seat], own_view.get("pool") or {})
    return None


def _active(card: Mapping[str, Any], left: int) -> bool:
    return card["state"] == "active" and left > 0


def _outcome(line: str, own: Mapping[str, Any], other: Mapping[str, Any]) -> tuple[int, int]:
    """(opposing cards destroyed, damage dealt) by the ATTACK line, as the rules run it: the
    written pairs first, then the other cards in deck order at the opposing card with the
    lowest durability left (attack-time abilities are not foreseen)."""
    written: dict[int, int] = {}
    for pair in line.split()[1:]:
        attacker, aimed = pair.split(">")
        written[int(attacker) - 1] = int(aimed) - 1
    mine, theirs = own["field"], other["field"]
    left = [int(card["durability"]) for card in theirs]
    shield = [int(card["shield"]) for card in theirs]
    order = list(written) + [i for i in range(len(mine)) if i not in written]
    destroyed = damage = 0
    for index in order:
        card = mine[index]
        if not _active(card, int(card["durability"])):
            continue
        chosen = written.get(index)
        if chosen is not None and _active(theirs[chosen], left[chosen]):
            target = chosen
        else:
            alive = [i for i in range(len(theirs)) if _active(theirs[i], left[i])]
            if not alive:
                break
            target = min(alive, key=lambda i: (left[i], i))
        power = int(card["attack"])
        blocked = min(shield[target], power)
        shield[target] -= blocked
        hurt = min(power - blocked, left[target])
        left[target] -= hurt
        damage += hurt
        destroyed += left[target] == 0
    return destroyed, damage


def _attack(lines: Sequence[str], own: Mapping[str, Any], other: Mapping[str, Any]) -> str:
    best = max(range(len(lines)), key=lambda i: (*_outcome(lines[i], own, other), -i))
    return lines[best]


def _magic(legal: Sequence[str], me: Mapping[str, Any], pool: Mapping[str, Any]) -> str | None:
    total = int(me.get("total_cost") or 0)
    affordable = []
    for line in legal:
        words = line.split()
        if words[0] != "MAGIC" or len(words) != 2 or words[1] not in pool:
            continue
        cost = int(pool[words[1]]["cost"])
        if total + cost <= COST_LIMIT:
            affordable.append((-cost, line))
    if affordable:
        return min(affordable)[1]
    return "PASS" if "PASS" in legal else None
