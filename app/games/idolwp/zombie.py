"""IM@S x Workerplacement for a dropped player (Game.zombie): from that player's own view and
legal lines only — the public board, event and players, and the player's own hand.

A producer who keeps their idols working (docs/rules/idolwp.md, "Dropped players"): each turn
the idol that may move goes to the reachable space worth most for the fewest steps — an event
space whose event it can pass now, a 特訓 it has the chips for, a レッスン, ある日の日常, 営業, the
goal last — so every idol still reaches the goal; at an event the highest level its abilities
pass (DOUBLE when it holds a 思い出 chip), else SKIP; at a 特訓 (and the final one) a level of its
lowest ability it has the chips for, after turning its 思い出 and マニー chips into chips of the
ability they raise most at the final 特訓. Cards, MONEY and the draft stay with the default moves.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from app.games.idolwp.content import load
from app.games.idolwp.rules import meets

__all__ = ["zombie"]

ABILITIES = ("Vo", "Da", "Vi")
FINAL_RATE = 2  # the house 特訓 rate of the final 特訓 (content tables.training_rate)


def zombie(own_view: Mapping[str, Any], legal: Sequence[str]) -> str | None:
    seat = own_view.get("seat")
    if not isinstance(seat, int) or not legal or own_view.get("phase") not in ("play", "final"):
        return None
    me = own_view["players"][seat]
    pending = own_view.get("pending")
    if pending is not None and pending.get("kind") == "event":
        return _event(legal, me, own_view)
    if pending is not None and pending.get("kind") == "training":
        return _train(legal, me)
    if own_view["phase"] == "final":
        converts = [  # one ability each: a mix raises less at the final 特訓
            line
            for line in legal
            if line.startswith("CONVERT ") and len(set(line.split()[2:])) == 1
        ]
        return _convert(converts, me) if converts else _train(legal, me)
    if pending is None:
        moves = [line for line in legal if line.startswith("MOVE ") and len(line.split()) == 3]
        if moves:
            return _move(moves, me, own_view)
    return None


def _abilities(me: Mapping[str, Any]) -> dict[str, int]:
    """The abilities an event checks: the player's, plus its idols' event bonuses."""
    shown = {ability: int(me["abilities"][ability]) for ability in ABILITIES}
    idols = load().idols
    for name in me["idols"]:
        idol = idols.get(name)
        power = idol.power if idol is not None else None
        if power is not None and power.kind == "event_bonus" and power.ability is not None:
            shown[power.ability] += power.amount
    return shown


def _passable(me: Mapping[str, Any], own_view: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The current event's levels the player passes without chips, highest first."""
    event = own_view.get("event") or {}
    shown = _abilities(me)
    found = [lvl for lvl in event.get("levels", []) if meets(shown, lvl["kind"], lvl["target"])]
    return sorted(found, key=lambda lvl: -int(lvl["level"]))


def _event(legal: Sequence[str], me: Mapping[str, Any], own_view: Mapping[str, Any]) -> str | None:
    for level in _passable(me, own_view):
        for line in (f"EVENT LV{level['level']} DOUBLE", f"EVENT LV{level['level']}"):
            if line in legal:
                return line
    return "SKIP" if "SKIP" in legal else None


def _train(legal: Sequence[str], me: Mapping[str, Any]) -> str | None:
    """One level of the lowest ability it has the chips for (TRAIN alone when none)."""
    trains = [line for line in legal if line.split()[0] == "TRAIN"]
    raising = [line for line in trains if len(line.split()) == 2]
    if raising:
        return min(raising, key=lambda line: (me["abilities"][line.split()[1][:2]], line))
    return trains[0] if trains else None


def _convert(converts: Sequence[str], me: Mapping[str, Any]) -> str:
    """The chips that raise most at the final 特訓 (the lowest ability among equals)."""

    def gain(line: str) -> tuple[int, int, int]:
        words = line.split()
        ability, count = words[2], len(words) - 2
        have = int(me["chips"][ability])
        raised = (have + count) // FINAL_RATE - have // FINAL_RATE
        return (-raised, int(me["abilities"][ability]), ABILITIES.index(ability))

    return min(converts, key=gain)


def _distances(edges: Sequence[Sequence[str]], start: str) -> dict[str, int]:
    after: dict[str, list[str]] = {}
    for here, there in edges:
        after.setdefault(here, []).append(there)
    found = {start: 0}
    frontier = [start]
    while frontier:
        following = []
        for here in frontier:
            for there in after.get(here, []):
                if there not in found:
                    found[there] = found[here] + 1
                    following.append(there)
        frontier = following
    return found


def _value(space: Mapping[str, Any], me: Mapping[str, Any], event_ok: bool) -> int:
    """What resolving a space is worth to the player (a level or a passed event counts most)."""
    kind = space["type"]
    if kind == "event":
        return 6 if event_ok else 0
    if kind == "training":
        return 4 if any(me["chips"][a] >= max(1, int(space["rate"])) for a in ABILITIES) else 0
    if kind == "lesson":
        return sum(int(n) for n in space["chips"].values())
    if kind == "daily":
        return 2 * int(space["amount"])
    if kind == "sales":
        return int(space["amount"])
    return -10  # the goal: only when nothing else is free


def _move(moves: Sequence[str], me: Mapping[str, Any], own_view: Mapping[str, Any]) -> str:
    board = own_view["board"]
    spaces = {space["id"]: space for space in board["spaces"]}
    event_ok = bool(_passable(me, own_view))

    def key(index: int) -> tuple[int, int, int]:
        _, idol, target = moves[index].split()
        steps = _distances(board["edges"], me["idols"][idol]).get(target, 1)
        space = spaces.get(target)
        value = _value(space, me, event_ok) if space is not None else 0
        return (-(value - 2 * (steps - 1)), steps, index)

    return moves[min(range(len(moves)), key=key)]
